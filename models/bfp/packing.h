// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "bfp/quantize.h"

namespace fastsim::bfp {

/// FAST memory layout (docs/bfp.md §6): shared exponents and mantissa chunks in separate planes.
///
/// Exponent plane: e bits per group, field = E - min_exponent in [0, 2^e - 2]; 2^e - 1 marks
/// a NaN group. Mantissa plane: per group, chunk c = 0 (most significant) .. m/2-1, then
/// element j = 0..g-1, a 3-bit field (sign << 2) | chunk. A reader that wants m' < m bits
/// reads only the first m'/2 chunk rows of each group. Bits are packed LSB-first into
/// 64-bit words, fields back to back across word boundaries.
struct PackedTensor {
    Format format;
    std::size_t size = 0;  ///< logical element count
    std::size_t groups = 0;
    std::vector<std::uint64_t> exponent_plane;
    std::vector<std::uint64_t> mantissa_plane;
    std::uint64_t exponent_plane_bits = 0;  ///< groups * e
    std::uint64_t mantissa_plane_bits = 0;  ///< groups * g * (m/2) * 3

    [[nodiscard]] std::uint64_t total_bits() const { return exponent_plane_bits + mantissa_plane_bits; }
};

PackedTensor pack(const BfpTensor& tensor);
/// Inverse of pack(): unpack(pack(t)) == t for every tensor t.
BfpTensor unpack(const PackedTensor& packed);

}  // namespace fastsim::bfp
