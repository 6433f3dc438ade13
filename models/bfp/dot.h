// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "bfp/quantize.h"

namespace fastsim::bfp {

/// Bits of a signed accumulator that holds any group dot product exactly:
/// |sum| <= g (2^ma - 1)(2^mb - 1) < 2^(ma + mb + ceil(log2 g)), plus a sign bit.
int group_accumulator_bits(int mantissa_bits_a, int mantissa_bits_b, int group_size);

/// Exact integer dot product of two groups of signed magnitudes (±k), lane order 0..g-1.
std::int64_t dot_integer(const std::int32_t* a, const std::int32_t* b, int group_size);

/// Result of the fMAC algorithm on one pair of groups.
struct ChunkedDot {
    std::int64_t sum = 0;  ///< equals dot_integer() of the same groups
    int passes = 0;        ///< (ma/2) * (mb/2)
};

/// The fMAC's algorithm (docs/bfp.md §5): every element is split into m/2 2-bit chunks,
/// chunk i weighing 4^i, each carrying the element's sign (a 3-bit signed value in [-3, 3]).
/// Pass (i, j), i over a's chunks then j over b's, both from the least significant:
/// an adder tree sums the g lane products (each in [-9, 9], the tree in [-9g, 9g]), the
/// tree sum is shifted left by 2(i + j) and added to the accumulator.
ChunkedDot dot_chunked(const std::uint16_t* magnitudes_a, const std::uint8_t* negative_a, int mantissa_bits_a,
                       const std::uint16_t* magnitudes_b, const std::uint8_t* negative_b, int mantissa_bits_b,
                       int group_size);

/// The fp32 value of a group product: float32(sum * 2^scale_exponent), rounded once, to
/// nearest-even, where scale_exponent = Ea + Eb - (ma - 1) - (mb - 1). Exact whenever
/// |sum| < 2^24 (always for m <= 8, g <= 256) and the result is a normal float32.
float group_product_to_float(std::int64_t sum, int scale_exponent);

/// NaN outputs are the positive quiet NaN: which NaN a float add propagates depends on
/// operand order, which the compiler may commute, so results are canonicalised.
inline float canonical_nan(float v) { return v != v ? std::numeric_limits<float>::quiet_NaN() : v; }

/// A rows x cols matrix quantised along its rows: row r is ceil(cols / g) groups, the last
/// one zero-padded. Groups are converted row by row, groups in column order, which fixes
/// the order in which stochastic rounding consumes LFSR draws.
struct BfpMatrix {
    std::size_t rows = 0;
    std::size_t cols = 0;
    std::size_t groups_per_row = 0;
    BfpTensor data;  ///< row r holds groups [r * groups_per_row, (r + 1) * groups_per_row)
};

/// Quantises element (r, c) = values[r * row_stride + c * col_stride] along each row.
/// A (M x K, row-major) along K: (M, K, K, 1). B (K x N, row-major) along K: (N, K, 1, N).
BfpMatrix quantize_rows(const float* values, std::size_t rows, std::size_t cols, std::size_t row_stride,
                        std::size_t col_stride, Quantizer& quantizer);

/// The reference BFP GEMM, C = A * B, with A given as M x K rows and B as its transpose
/// (N x K rows), both grouped along K with the same g. For each C(i, j), row-major out:
///   acc = +0.0f; for q = 0 .. groups-1: acc = acc + group_product_to_float(dot_q, scale_q)
/// in float32 (round to nearest-even after every add). A NaN group makes its product NaN;
/// NaN results are canonical_nan().
/// Hardware models must reproduce this order exactly to be bit-exact.
std::vector<float> gemm(const BfpMatrix& a, const BfpMatrix& b_transposed);

/// fp32 A (M x K) and B (K x N), both row-major, quantised along K by their quantizers
/// (A first, then B), multiplied by gemm().
std::vector<float> gemm(const float* a, const float* b, std::size_t m, std::size_t k, std::size_t n,
                        Quantizer& quantizer_a, Quantizer& quantizer_b);

}  // namespace fastsim::bfp
