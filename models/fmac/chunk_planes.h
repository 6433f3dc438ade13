// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "bfp/dot.h"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace fastsim::fmac {

/// Lanes are stored in blocks of this many int16 values (one 128-bit vector).
inline constexpr std::size_t kLaneBlock = 8;

/// A BfpMatrix as the fMAC sees it: every group's elements split into m/2 signed 2-bit
/// chunks (values in [-3, 3], chunk i weighing 4^i), stored chunk-major per group:
/// chunk(group, i)[lane] for lane 0..g-1, zero-padded to a multiple of kLaneBlock lanes.
class ChunkPlanes {
public:
    explicit ChunkPlanes(const bfp::BfpMatrix& matrix);

    /// Chunk 0 of `group`; chunk i follows at i * lane_stride().
    [[nodiscard]] const std::int16_t* group_chunks(std::size_t group) const {
        return &m_chunks[group * static_cast<std::size_t>(m_chunks_per_element) * m_lane_stride];
    }
    [[nodiscard]] int exponent(std::size_t group) const { return m_exponents[group]; }
    [[nodiscard]] bool is_nan(std::size_t group) const { return m_exponents[group] == bfp::kNanExponent; }
    [[nodiscard]] int mantissa_bits() const { return m_mantissa_bits; }
    [[nodiscard]] int chunks_per_element() const { return m_chunks_per_element; }
    [[nodiscard]] std::size_t group_size() const { return m_group_size; }
    [[nodiscard]] std::size_t lane_stride() const { return m_lane_stride; }
    [[nodiscard]] std::size_t rows() const { return m_rows; }
    [[nodiscard]] std::size_t groups_per_row() const { return m_groups_per_row; }

private:
    std::vector<std::int16_t> m_chunks;
    std::vector<std::int16_t> m_exponents;
    std::size_t m_group_size;
    std::size_t m_lane_stride;
    std::size_t m_rows;
    std::size_t m_groups_per_row;
    int m_mantissa_bits;
    int m_chunks_per_element;
};

/// All (m_x/2)(m_y/2) passes of one fMAC group product: for chunk pair (i, j), the adder
/// tree over the lanes of x chunk i times y chunk j, shifted left by 2(i + j), accumulated.
/// Equals bfp::dot_integer of the same groups (docs/bfp.md §5). `x`/`y` point at chunk 0;
/// chunk i starts i * stride lanes further; lanes come in `blocks` blocks of kLaneBlock.
/// Exact for m_x, m_y <= 8 (every partial sum < 2^21 in magnitude).
template <std::size_t Blocks, int ChunksX = 0, int ChunksY = 0>
inline std::int64_t group_product_passes(const std::int16_t* x, std::size_t x_stride, int runtime_chunks_x,
                                         const std::int16_t* y, std::size_t y_stride, int runtime_chunks_y) {
    // Chunk counts known at compile time unroll the pass loops; 0 means "read at run time".
    const int chunks_x = ChunksX ? ChunksX : runtime_chunks_x;
    const int chunks_y = ChunksY ? ChunksY : runtime_chunks_y;
#if defined(__SSE2__)
    __m128i acc = _mm_setzero_si128();
    for (int i = 0; i < chunks_x; ++i) {
        __m128i xv[Blocks];
        for (std::size_t b = 0; b < Blocks; ++b)
            xv[b] = _mm_loadu_si128(
                reinterpret_cast<const __m128i*>(x + static_cast<std::size_t>(i) * x_stride + b * kLaneBlock));
        for (int j = 0; j < chunks_y; ++j) {
            const std::int16_t* yj = y + static_cast<std::size_t>(j) * y_stride;
            __m128i tree = _mm_madd_epi16(xv[0], _mm_loadu_si128(reinterpret_cast<const __m128i*>(yj)));
            for (std::size_t b = 1; b < Blocks; ++b)
                tree = _mm_add_epi32(
                    tree,
                    _mm_madd_epi16(xv[b], _mm_loadu_si128(reinterpret_cast<const __m128i*>(yj + b * kLaneBlock))));
            acc = _mm_add_epi32(acc, _mm_sll_epi32(tree, _mm_cvtsi32_si128(2 * (i + j))));
        }
    }
    alignas(16) std::int32_t quartet[4];
    _mm_store_si128(reinterpret_cast<__m128i*>(quartet), acc);
    return std::int64_t{quartet[0]} + quartet[1] + quartet[2] + quartet[3];
#else
    std::int64_t total = 0;
    for (int i = 0; i < chunks_x; ++i)
        for (int j = 0; j < chunks_y; ++j) {
            std::int32_t tree = 0;
            for (std::size_t l = 0; l < Blocks * kLaneBlock; ++l)
                tree += std::int32_t{x[static_cast<std::size_t>(i) * x_stride + l]} *
                        y[static_cast<std::size_t>(j) * y_stride + l];
            total += std::int64_t{tree} << (2 * (i + j));
        }
    return total;
#endif
}

/// A group-product kernel: chunk planes, strides, chunk counts and lane blocks in, exact
/// integer sum out (group_product_passes).
using GroupProductKernel = std::int64_t (*)(const std::int16_t*, std::size_t, int, const std::int16_t*, std::size_t,
                                            int, std::size_t);

namespace detail {
template <std::size_t Blocks, int ChunksX = 0, int ChunksY = 0>
std::int64_t fixed_blocks(const std::int16_t* x, std::size_t xs, int cx, const std::int16_t* y, std::size_t ys, int cy,
                          std::size_t /*blocks*/) {
    return group_product_passes<Blocks, ChunksX, ChunksY>(x, xs, cx, y, ys, cy);
}

inline std::int64_t any_blocks(const std::int16_t* x, std::size_t xs, int cx, const std::int16_t* y, std::size_t ys,
                               int cy, std::size_t blocks) {
    std::int64_t total = 0;
    for (std::size_t b = 0; b < blocks; ++b)
        total += group_product_passes<1>(x + b * kLaneBlock, xs, cx, y + b * kLaneBlock, ys, cy);
    return total;
}
}  // namespace detail

/// The fastest kernel for a lane-block count and chunk counts, chosen once per job: fully
/// unrolled for g = 16 (2 blocks) with m_x, m_y in {2, 4, 6, 8}; fixed block counts 1, 2, 4;
/// otherwise a loop over blocks.
inline GroupProductKernel select_group_product_kernel(std::size_t blocks, int chunks_x, int chunks_y) {
    using detail::fixed_blocks;
    static constexpr GroupProductKernel kG16[4][4] = {
        {fixed_blocks<2, 1, 1>, fixed_blocks<2, 1, 2>, fixed_blocks<2, 1, 3>, fixed_blocks<2, 1, 4>},
        {fixed_blocks<2, 2, 1>, fixed_blocks<2, 2, 2>, fixed_blocks<2, 2, 3>, fixed_blocks<2, 2, 4>},
        {fixed_blocks<2, 3, 1>, fixed_blocks<2, 3, 2>, fixed_blocks<2, 3, 3>, fixed_blocks<2, 3, 4>},
        {fixed_blocks<2, 4, 1>, fixed_blocks<2, 4, 2>, fixed_blocks<2, 4, 3>, fixed_blocks<2, 4, 4>},
    };
    if (blocks == 2 && chunks_x >= 1 && chunks_x <= 4 && chunks_y >= 1 && chunks_y <= 4)
        return kG16[chunks_x - 1][chunks_y - 1];
    switch (blocks) {
    case 1: return fixed_blocks<1>;
    case 2: return fixed_blocks<2>;
    case 4: return fixed_blocks<4>;
    default: return detail::any_blocks;
    }
}

}  // namespace fastsim::fmac
