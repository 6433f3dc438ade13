// SPDX-License-Identifier: MIT
// dgc: Deep Gradient Compression, top-k with momentum correction, momentum factor masking and
// a density warm-up (docs/compression.md).
#include <algorithm>
#include <cmath>

#include "compression/impl/shared.h"

namespace fastsim::compression {
namespace {

class Dgc final : public impl::SparseCompressor {
public:
    /// As topk, with the velocity read and written as well.
    Work node_work(const Params& /*params*/, std::uint64_t values, std::uint64_t /*factor_length*/) const override {
        constexpr const char* kWhat = "compression work of a gradient";
        Work w;
        w.dram_bytes = checked_mul(5, checked_mul(values, kValueBytes, kWhat), kWhat);
        w.vector_values = checked_mul(2, values, kWhat);
        return w;
    }
    bool applies_momentum() const override { return true; }
    /// Warms up from 25%: 25%, 6.25%, 1.5625%, 0.390625% over the first four epochs.
    double density(const Params& params, std::size_t iteration, std::size_t iterations_per_epoch) const override {
        const std::size_t epoch = iteration / std::max<std::size_t>(1, iterations_per_epoch);
        return epoch < 4 ? std::max(params.density, std::pow(0.25, static_cast<double>(epoch + 1))) : params.density;
    }

protected:
    /// Momentum correction: u = m u + g, v += u.
    void accumulate(const ExchangeStep& step, TensorState& state, std::size_t w, const std::vector<float>& g,
                    std::vector<float>& acc) const override {
        const auto mu = static_cast<float>(step.momentum);
        std::vector<float>& u = state.velocity[w];
        for (std::size_t i = 0; i < g.size(); ++i) {
            u[i] = mu * u[i] + g[i];
            acc[i] += u[i];
        }
    }
    /// Momentum factor masking.
    void on_sent(TensorState& state, std::size_t w, std::size_t i) const override { state.velocity[w][i] = 0; }
    bool keeps_residual() const override { return true; }
};

}  // namespace

const Compressor& dgc_compressor() {
    static const Dgc kCompressor;
    return kCompressor;
}

}  // namespace fastsim::compression
