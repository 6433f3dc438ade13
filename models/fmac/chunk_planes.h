// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "bfp/dot.h"

namespace fastsim::fmac {

/// A BfpMatrix as the fMAC sees it: every group's elements split into m/2 signed 2-bit
/// chunks (values in [-3, 3], chunk i weighing 4^i), stored chunk-major per group:
/// chunk(group, i)[lane] for lane 0..g-1. Also the per-group exponents.
class ChunkPlanes {
public:
    explicit ChunkPlanes(const bfp::BfpMatrix& matrix);

    /// Lanes of chunk i (0 = least significant) of group `group`.
    [[nodiscard]] const std::int8_t* chunk(std::size_t group, int i) const {
        return &m_chunks[(group * static_cast<std::size_t>(m_chunks_per_element) + static_cast<std::size_t>(i)) *
                         m_group_size];
    }
    [[nodiscard]] int exponent(std::size_t group) const { return m_exponents[group]; }
    [[nodiscard]] bool is_nan(std::size_t group) const { return m_exponents[group] == bfp::kNanExponent; }
    [[nodiscard]] int mantissa_bits() const { return m_mantissa_bits; }
    [[nodiscard]] int chunks_per_element() const { return m_chunks_per_element; }
    [[nodiscard]] std::size_t group_size() const { return m_group_size; }
    [[nodiscard]] std::size_t rows() const { return m_rows; }
    [[nodiscard]] std::size_t groups_per_row() const { return m_groups_per_row; }

private:
    std::vector<std::int8_t> m_chunks;
    std::vector<std::int16_t> m_exponents;
    std::size_t m_group_size;
    std::size_t m_rows;
    std::size_t m_groups_per_row;
    int m_mantissa_bits;
    int m_chunks_per_element;
};

/// One fMAC pass: the adder tree over g lanes of chunk products, in [-9g, 9g].
inline std::int32_t chunk_pass(const std::int8_t* x, const std::int8_t* y, std::size_t g) {
    std::int32_t tree = 0;
    for (std::size_t l = 0; l < g; ++l) tree += static_cast<std::int32_t>(x[l]) * static_cast<std::int32_t>(y[l]);
    return tree;
}

}  // namespace fastsim::fmac
