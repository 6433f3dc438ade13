// SPDX-License-Identifier: MIT
#include "compression/compression.h"

#include <cmath>

#include "common/checked.h"

namespace fastsim::compression {

const EnumNames<Scheme, 7>& enum_names(Scheme) {
    static constexpr EnumNames<Scheme, 7> kNames{{
        {"none", Scheme::none},
        {"topk", Scheme::topk},
        {"dgc", Scheme::dgc},
        {"powersgd", Scheme::powersgd},
        {"onebit", Scheme::onebit},
        {"threshold", Scheme::threshold},
        {"terngrad", Scheme::terngrad},
    }};
    return kNames;
}

bool is_sparse(Scheme scheme) { return scheme == Scheme::topk || scheme == Scheme::dgc || scheme == Scheme::threshold; }

bool is_quantised(Scheme scheme) { return scheme == Scheme::onebit || scheme == Scheme::terngrad; }

std::uint64_t sparse_entries(const Params& params, std::uint64_t values) {
    if (values == 0) return 0;
    const double kept = std::ceil(params.density * static_cast<double>(values));
    if (kept >= static_cast<double>(values)) return values;
    return kept < 1 ? 1 : static_cast<std::uint64_t>(kept);
}

std::uint64_t sparse_bytes(std::uint64_t entries) {
    return checked_mul(entries, kValueBytes + kIndexBytes, "bytes of a sparse gradient");
}

std::uint64_t quantised_bytes(Scheme scheme, std::uint64_t values) {
    const std::uint64_t bits_per_value = scheme == Scheme::onebit ? 1 : 2;
    const std::uint64_t scales_per_bucket = scheme == Scheme::onebit ? 2 : 1;
    const std::uint64_t buckets = values / kBucketValues + (values % kBucketValues != 0);
    const std::uint64_t bits = checked_mul(values, bits_per_value, "bits of a quantised gradient");
    return bits / 8 + (bits % 8 != 0) +
           checked_mul(buckets * scales_per_bucket, kValueBytes, "scales of a quantised gradient");
}

Work node_work(const Params& params, std::uint64_t values, std::uint64_t factor_length) {
    constexpr const char* kWhat = "compression work of a gradient";
    const std::uint64_t fp32 = checked_mul(values, kValueBytes, kWhat);
    // Error feedback reads the residual and writes it back; without it the gradient is read once.
    const std::uint64_t feedback = params.error_feedback ? 3 : 1;
    Work w;
    switch (params.scheme) {
    case Scheme::none: break;
    case Scheme::topk:
    case Scheme::threshold:
        // Read the gradient and the residual, write the new residual (error feedback); one pass
        // to find the threshold (sampled for topk) and one to select and pack.
        w.dram_bytes = checked_mul(feedback, fp32, kWhat);
        w.vector_values = checked_mul(2, values, kWhat);
        break;
    case Scheme::dgc:
        // As topk, with momentum correction: the velocity read and written as well.
        w.dram_bytes = checked_mul(5, fp32, kWhat);
        w.vector_values = checked_mul(2, values, kWhat);
        break;
    case Scheme::onebit:
        // Error feedback (gradient and residual read, residual written); one quantising pass
        // before the reduce-scatter and one re-quantising pass of the reduced share.
        w.dram_bytes = checked_mul(feedback, fp32, kWhat);
        w.vector_values = checked_mul(2, values, kWhat);
        break;
    case Scheme::terngrad:
        // No error feedback: the gradient read once, ternarised twice (before and after the sum).
        w.dram_bytes = fp32;
        w.vector_values = checked_mul(2, values, kWhat);
        break;
    case Scheme::powersgd: {
        // P = M Q and Q = Mᵀ P: 2 E r MACs; Gram-Schmidt of P: about n r² (≤ factor_length r²);
        // error feedback as above.
        const std::uint64_t r = params.rank;
        w.macs = checked_add(checked_mul(checked_mul(2, values, kWhat), r, kWhat),
                             checked_mul(factor_length, checked_mul(r, r, kWhat), kWhat), kWhat);
        w.dram_bytes = checked_mul(feedback, fp32, kWhat);
        w.vector_values = values;
        break;
    }
    }
    return w;
}

}  // namespace fastsim::compression
