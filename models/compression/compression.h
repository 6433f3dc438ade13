// SPDX-License-Identifier: MIT
#pragma once

// Gradient compression schemes (docs/compression.md): their names, parameters and the sizes
// they share. What each scheme does is its Compressor (compression/compressor.h), one file per
// scheme under impl/. Plain C++, no SystemC.

#include <cstdint>
#include <string_view>

#include "common/enum_names.h"

namespace fastsim::compression {

/// cluster.gradient_sync.compression.scheme; each has its row in compressor_descriptors().
enum class Scheme : std::uint8_t { none, topk, dgc, powersgd, onebit, threshold, terngrad };
inline constexpr std::size_t kSchemeCount = 7;
const EnumNames<Scheme, kSchemeCount>& enum_names(Scheme);
inline std::string_view to_string(Scheme scheme) { return name_of(scheme); }

struct Params {
    Scheme scheme = Scheme::none;
    double density = 0.001;  ///< topk, dgc, threshold: the fraction of values sent
    std::uint32_t rank = 2;  ///< powersgd: the rank r of the factors P (n x r) and Q (m x r)
    double threshold = 0.0;  ///< threshold: |g| above which a value is sent (training; its wire volume uses density)
    bool error_feedback = true;  ///< topk, threshold, onebit, powersgd: carry what was not sent to the next step
};

/// Values that share one fp32 scale in the quantised schemes (onebit: the mean of the
/// positive and of the negative values, two scales; terngrad: the largest magnitude, one).
inline constexpr std::uint64_t kBucketValues = 512;
/// Bytes of one sent value's position in a sparse scheme (a 32-bit index into its set's gradient).
inline constexpr std::uint64_t kIndexBytes = 4;
/// Bytes of one fp32 value.
inline constexpr std::uint64_t kValueBytes = 4;

/// Values a sparse scheme sends of `values`: ceil(density x values), at least 1 (0 of 0).
[[nodiscard]] std::uint64_t sparse_entries(const Params& params, std::uint64_t values);
/// Bytes of `entries` sparse (value, index) pairs.
[[nodiscard]] std::uint64_t sparse_bytes(std::uint64_t entries);
/// Bytes of `values` quantised to `bits_per_value` bits with `scales_per_bucket` fp32 scales in
/// each bucket of kBucketValues values (onebit: 1 bit, 2 scales; terngrad: 2 bits, 1 scale).
[[nodiscard]] std::uint64_t quantised_bytes(std::uint64_t values, std::uint64_t bits_per_value,
                                            std::uint64_t scales_per_bucket);

/// What compressing one node's gradient costs it, in the units the node model charges
/// (docs/compression.md, "Work on the node"; Compressor::node_work).
struct Work {
    std::uint64_t dram_bytes = 0;     ///< gradient read, error-feedback / momentum state read and written
    std::uint64_t vector_values = 0;  ///< values passed through the converter lanes (selection, quantisation, packing)
    std::uint64_t macs = 0;           ///< PowerSGD's two GEMMs and the orthogonalisation, on the array
};

}  // namespace fastsim::compression
