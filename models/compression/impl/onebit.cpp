// SPDX-License-Identifier: MIT
// onebit: 1-bit SGD with error feedback; each value becomes its bucket's mean positive or mean
// negative value (1 bit a value, two fp32 scales a bucket).
#include <algorithm>

#include "compression/impl/shared.h"

namespace fastsim::compression {
namespace {

class OneBit final : public impl::QuantisedCompressor {
public:
    constexpr OneBit() : QuantisedCompressor(1, 2) {}
    /// Error feedback (gradient and residual read, residual written); one quantising pass
    /// before the reduce-scatter and one re-quantising pass of the reduced share.
    Work node_work(const Params& params, std::uint64_t values, std::uint64_t /*factor_length*/) const override {
        constexpr const char* kWhat = "compression work of a gradient";
        Work w;
        w.dram_bytes = checked_mul(params.error_feedback ? 3 : 1, checked_mul(values, kValueBytes, kWhat), kWhat);
        w.vector_values = checked_mul(2, values, kWhat);
        return w;
    }
    std::size_t average(const ExchangeStep& step, TensorState& state, const WorkerGradients& grads,
                        std::vector<float>& out) const override {
        if (!step.params.error_feedback) impl::drop_residuals(state);
        const std::size_t k = step.workers, n = step.shape.size();
        const float inv = 1.0f / static_cast<float>(k);
        for (std::size_t w = 0; w < k; ++w) {
            std::vector<float>& acc = state.residual[w];
            const std::vector<float>& g = grads[w][step.tensor];
            for (std::size_t first = 0; first < n; first += kBucketValues) {
                const std::size_t last = std::min(n, first + kBucketValues);
                double pos = 0, neg = 0;
                std::size_t pos_n = 0, neg_n = 0;
                for (std::size_t i = first; i < last; ++i) {
                    acc[i] += g[i];
                    if (acc[i] >= 0) {
                        pos += acc[i];
                        ++pos_n;
                    } else {
                        neg += acc[i];
                        ++neg_n;
                    }
                }
                const auto p = static_cast<float>(pos_n ? pos / static_cast<double>(pos_n) : 0.0);
                const auto q = static_cast<float>(neg_n ? neg / static_cast<double>(neg_n) : 0.0);
                for (std::size_t i = first; i < last; ++i) {  // what this loses goes to the next iteration
                    const float sent = acc[i] >= 0 ? p : q;
                    out[i] += sent * inv;
                    acc[i] -= sent;
                }
            }
        }
        return k * n;
    }
};

}  // namespace

const Compressor& onebit_compressor() {
    static const OneBit kCompressor;
    return kCompressor;
}

}  // namespace fastsim::compression
