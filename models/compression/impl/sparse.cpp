// SPDX-License-Identifier: MIT
// What topk, dgc and threshold share (impl/shared.h, SparseCompressor).
#include <algorithm>
#include <cmath>

#include "compression/impl/shared.h"

namespace fastsim::compression::impl {

std::uint64_t SparseCompressor::pulled_bytes(const Params& params, const Gradient& g, std::uint64_t shard_values,
                                             std::size_t ranks) const {
    const std::uint64_t entries =
        std::min(shard_values, checked_mul(sparse_entries(params, shard_values), ranks, "sparse entries"));
    return std::min(sparse_bytes(entries), dense_bytes(g, shard_values));
}

Work SparseCompressor::node_work(const Params& params, std::uint64_t values, std::uint64_t /*factor_length*/) const {
    constexpr const char* kWhat = "compression work of a gradient";
    const std::uint64_t fp32 = checked_mul(values, kValueBytes, kWhat);
    Work w;
    w.dram_bytes = checked_mul(params.error_feedback ? 3 : 1, fp32, kWhat);
    w.vector_values = checked_mul(2, values, kWhat);
    return w;
}

float SparseCompressor::cut(const ExchangeStep& step, const std::vector<float>& acc,
                            std::vector<float>& scratch) const {
    // The k largest magnitudes at this iteration's density.
    Params p = step.params;
    p.density = step.density;
    const std::size_t n = acc.size();
    const std::size_t keep = sparse_entries(p, n);
    for (std::size_t i = 0; i < n; ++i) scratch[i] = std::fabs(acc[i]);
    std::nth_element(scratch.begin(), scratch.begin() + static_cast<std::ptrdiff_t>(n - keep), scratch.end());
    return scratch[n - keep];
}

std::size_t SparseCompressor::average(const ExchangeStep& step, TensorState& state, const WorkerGradients& grads,
                                      std::vector<float>& out) const {
    if (!step.params.error_feedback && !keeps_residual()) drop_residuals(state);
    const std::size_t k = step.workers, n = step.shape.size();
    const float inv = 1.0f / static_cast<float>(k);
    std::vector<float> scratch(n);
    std::size_t sent_values = 0;
    for (std::size_t w = 0; w < k; ++w) {
        std::vector<float>& acc = state.residual[w];
        accumulate(step, state, w, grads[w][step.tensor], acc);
        const float threshold = cut(step, acc, scratch);
        for (std::size_t i = 0; i < n; ++i) {
            if (!sent(std::fabs(acc[i]), threshold)) continue;
            out[i] += acc[i] * inv;
            acc[i] = 0;  // sent: nothing left over
            on_sent(state, w, i);
            ++sent_values;
        }
    }
    return sent_values;
}

}  // namespace fastsim::compression::impl
