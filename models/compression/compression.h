// SPDX-License-Identifier: MIT
#pragma once

// Gradient compression schemes (docs/compression.md): what each puts on the wire for a
// gradient of E values, and the work it does on a node to get there. Plain C++, no SystemC;
// the gradient synchronisation (planner/gradient_sync.h) lowers these volumes to messages.

#include <cstdint>
#include <string_view>

#include "common/enum_names.h"

namespace fastsim::compression {

/// cluster.gradient_sync.compression.scheme.
enum class Scheme : std::uint8_t { none, topk, dgc, powersgd, onebit, threshold, terngrad };
const EnumNames<Scheme, 7>& enum_names(Scheme);
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

[[nodiscard]] bool is_sparse(Scheme scheme);     ///< topk, dgc, threshold
[[nodiscard]] bool is_quantised(Scheme scheme);  ///< onebit, terngrad

/// Values a sparse scheme sends of `values`: ceil(density x values), at least 1 (0 of 0).
[[nodiscard]] std::uint64_t sparse_entries(const Params& params, std::uint64_t values);
/// Bytes of `entries` sparse (value, index) pairs.
[[nodiscard]] std::uint64_t sparse_bytes(std::uint64_t entries);
/// Bytes of `values` quantised by `scheme` (onebit: 1 bit, terngrad: 2 bits per value) with
/// their buckets' fp32 scales.
[[nodiscard]] std::uint64_t quantised_bytes(Scheme scheme, std::uint64_t values);

/// What compressing one node's gradient of `values` costs it, in the units the node model
/// charges (docs/compression.md, "Work on the node"). `factor_length` is Σ (n + m) over the
/// gradient's n x m matrix blocks, for PowerSGD's P = M Q and Q = Mᵀ P.
struct Work {
    std::uint64_t dram_bytes = 0;     ///< gradient read, error-feedback / momentum state read and written
    std::uint64_t vector_values = 0;  ///< values passed through the converter lanes (selection, quantisation, packing)
    std::uint64_t macs = 0;           ///< PowerSGD's two GEMMs and the orthogonalisation, on the array
};
[[nodiscard]] Work node_work(const Params& params, std::uint64_t values, std::uint64_t factor_length);

}  // namespace fastsim::compression
