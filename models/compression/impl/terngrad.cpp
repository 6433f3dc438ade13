// SPDX-License-Identifier: MIT
// terngrad: each value becomes s sign(g) with probability |g| / s, else 0, where s is its
// bucket's largest magnitude (2 bits a value, one fp32 scale a bucket); unbiased, no error
// feedback.
#include <algorithm>
#include <cmath>

#include "compression/impl/shared.h"

namespace fastsim::compression {
namespace {

class TernGrad final : public impl::QuantisedCompressor {
public:
    constexpr TernGrad() : QuantisedCompressor(2, 1) {}
    /// The gradient read once, ternarised twice (before and after the sum).
    Work node_work(const Params& /*params*/, std::uint64_t values, std::uint64_t /*factor_length*/) const override {
        constexpr const char* kWhat = "compression work of a gradient";
        Work w;
        w.dram_bytes = checked_mul(values, kValueBytes, kWhat);
        w.vector_values = checked_mul(2, values, kWhat);
        return w;
    }
    std::size_t average(const ExchangeStep& step, TensorState& /*state*/, const WorkerGradients& grads,
                        std::vector<float>& out) const override {
        const std::size_t k = step.workers, n = step.shape.size();
        const float inv = 1.0f / static_cast<float>(k);
        for (std::size_t w = 0; w < k; ++w) {
            const std::vector<float>& g = grads[w][step.tensor];
            std::uint64_t state =
                bfp::splitmix64(step.seed ^ (step.iteration * 0x9E3779B97F4A7C15ull) ^ (w << 40) ^ (step.tensor << 52));
            for (std::size_t first = 0; first < n; first += kBucketValues) {
                const std::size_t last = std::min(n, first + kBucketValues);
                float s = 0;
                for (std::size_t i = first; i < last; ++i) s = std::max(s, std::fabs(g[i]));
                if (s == 0) continue;
                for (std::size_t i = first; i < last; ++i)
                    if (impl::uniform(state) < std::fabs(g[i]) / s) out[i] += (g[i] < 0 ? -s : s) * inv;
            }
        }
        return k * n;
    }
};

}  // namespace

const Compressor& terngrad_compressor() {
    static const TernGrad kCompressor;
    return kCompressor;
}

}  // namespace fastsim::compression
