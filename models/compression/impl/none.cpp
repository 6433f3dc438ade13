// SPDX-License-Identifier: MIT
// none: the gradient all-reduced uncompressed.
#include "compression/impl/shared.h"

namespace fastsim::compression {
namespace {

class None final : public Compressor {
public:
    std::vector<WireCollective> wire(const Params& /*params*/, const Gradient& g,
                                     std::size_t /*ranks*/) const override {
        return {{WireCollective::Op::all_reduce, g.bytes}};
    }
    std::uint64_t pushed_bytes(const Params& /*params*/, const Gradient& g, std::uint64_t shard_values) const override {
        return impl::dense_bytes(g, shard_values);
    }
    std::uint64_t pulled_bytes(const Params& /*params*/, const Gradient& g, std::uint64_t shard_values,
                               std::size_t /*ranks*/) const override {
        return impl::dense_bytes(g, shard_values);
    }
    Work node_work(const Params& /*params*/, std::uint64_t /*values*/, std::uint64_t /*factor_length*/) const override {
        return {};
    }
    /// The mean; with one worker the gradient itself, bit for bit.
    std::size_t average(const ExchangeStep& step, TensorState& /*state*/, const WorkerGradients& grads,
                        std::vector<float>& out) const override {
        const std::size_t k = step.workers, n = step.shape.size();
        if (k == 1) {
            out = grads[0][step.tensor];
        } else {
            for (std::size_t w = 0; w < k; ++w)
                for (std::size_t i = 0; i < n; ++i) out[i] += grads[w][step.tensor][i];
            const float inv = 1.0f / static_cast<float>(k);
            for (float& v : out) v *= inv;
        }
        return n;
    }
};

}  // namespace

const Compressor& none_compressor() {
    static const None kCompressor;
    return kCompressor;
}

}  // namespace fastsim::compression
