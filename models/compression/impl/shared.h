// SPDX-License-Identifier: MIT
#pragma once

// What several schemes' files share: dense shard sizes, the sparse and the quantised families.

#include <cstdint>

#include "bfp/lfsr.h"
#include "common/checked.h"
#include "compression/compressor.h"

namespace fastsim::compression::impl {

/// Bytes of `values` uncompressed values of `g`.
inline std::uint64_t dense_bytes(const Gradient& g, std::uint64_t values) {
    return checked_mul(values, g.value_bytes(), "bytes of a gradient shard");
}

/// A uniform double in [0, 1) from a SplitMix64 stream.
inline double uniform(std::uint64_t& state) {
    state = bfp::splitmix64(state);
    return static_cast<double>(state >> 11) * 0x1p-53;
}

/// Zeroes what each worker did not send if the scheme drops it (no error feedback).
inline void drop_residuals(TensorState& state) {
    for (auto& r : state.residual) std::fill(r.begin(), r.end(), 0.0f);
}

/// topk, dgc, threshold: each worker sends some (value, index) pairs of its error-feedback
/// accumulator; the ranks all-gather them and each sums them itself.
class SparseCompressor : public Compressor {
public:
    std::vector<WireCollective> wire(const Params& params, const Gradient& g, std::size_t /*ranks*/) const override {
        return {{WireCollective::Op::all_gather, sparse_bytes(sparse_entries(params, g.values))}};
    }
    std::uint64_t pushed_bytes(const Params& params, const Gradient& /*g*/, std::uint64_t shard_values) const override {
        return sparse_bytes(sparse_entries(params, shard_values));
    }
    /// The union of the ranks' entries, at most the shard, as pairs or dense, whichever is smaller.
    std::uint64_t pulled_bytes(const Params& params, const Gradient& g, std::uint64_t shard_values,
                               std::size_t ranks) const override;
    /// Read the gradient and the residual, write the new residual (error feedback); one pass to
    /// find the threshold (sampled for topk) and one to select and pack.
    Work node_work(const Params& params, std::uint64_t values, std::uint64_t factor_length) const override;
    std::size_t average(const ExchangeStep& step, TensorState& state, const WorkerGradients& grads,
                        std::vector<float>& out) const override;

protected:
    /// Adds worker w's gradient `g` into its accumulator `acc`.
    virtual void accumulate(const ExchangeStep& /*step*/, TensorState& /*state*/, std::size_t /*w*/,
                            const std::vector<float>& g, std::vector<float>& acc) const {
        for (std::size_t i = 0; i < g.size(); ++i) acc[i] += g[i];
    }
    /// Whether a value of accumulator `acc` goes out; `scratch` holds acc.size() floats.
    [[nodiscard]] virtual float cut(const ExchangeStep& step, const std::vector<float>& acc,
                                    std::vector<float>& scratch) const;
    [[nodiscard]] virtual bool sent(float magnitude, float cut) const { return magnitude >= cut; }
    /// After value i of worker w went out.
    virtual void on_sent(TensorState& /*state*/, std::size_t /*w*/, std::size_t /*i*/) const {}
    /// Whether the residual stays without error feedback (DGC keeps its velocity).
    [[nodiscard]] virtual bool keeps_residual() const { return false; }
};

/// onebit, terngrad: every value quantised to a few bits with fp32 scales per bucket; on the
/// wire a compressed reduce-scatter, then the reduced chunks re-quantised and all-gathered.
class QuantisedCompressor : public Compressor {
public:
    constexpr QuantisedCompressor(std::uint64_t bits_per_value, std::uint64_t scales_per_bucket)
        : m_bits(bits_per_value), m_scales(scales_per_bucket) {}
    std::vector<WireCollective> wire(const Params& /*params*/, const Gradient& g, std::size_t ranks) const override {
        const std::uint64_t p = ranks > 0 ? ranks : 1;
        const std::uint64_t chunk_values = g.values / p + (g.values % p != 0);
        return {{WireCollective::Op::all_reduce,
                 checked_mul(quantised_bytes(chunk_values, m_bits, m_scales), p, "bytes of a quantised gradient")}};
    }
    std::uint64_t pushed_bytes(const Params& /*params*/, const Gradient& /*g*/,
                               std::uint64_t shard_values) const override {
        return quantised_bytes(shard_values, m_bits, m_scales);
    }
    /// The server re-quantises the sum.
    std::uint64_t pulled_bytes(const Params& /*params*/, const Gradient& /*g*/, std::uint64_t shard_values,
                               std::size_t /*ranks*/) const override {
        return quantised_bytes(shard_values, m_bits, m_scales);
    }

private:
    std::uint64_t m_bits, m_scales;
};

}  // namespace fastsim::compression::impl
