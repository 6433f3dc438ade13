// SPDX-License-Identifier: MIT
// powersgd: PowerSGD with error feedback and a warm-started Q: each n x m gradient block sent
// as its rank-r factors P (n x r) and Q (m x r).
#include <algorithm>
#include <cmath>

#include "compression/impl/shared.h"

namespace fastsim::compression {
namespace {

/// Gram-Schmidt on the columns of P (rows x r, row-major), in place. A column left with less
/// than 1e-4 of its length by the earlier ones (dependent on them, up to rounding) becomes zero:
/// normalising its rounding noise would add a direction that is not orthogonal.
void orthonormalise(std::vector<float>& p, std::size_t rows, std::size_t r) {
    for (std::size_t c = 0; c < r; ++c) {
        double before = 0;
        for (std::size_t i = 0; i < rows; ++i) before += static_cast<double>(p[i * r + c]) * p[i * r + c];
        for (std::size_t prev = 0; prev < c; ++prev) {
            double dot = 0;
            for (std::size_t i = 0; i < rows; ++i) dot += static_cast<double>(p[i * r + c]) * p[i * r + prev];
            for (std::size_t i = 0; i < rows; ++i) p[i * r + c] -= static_cast<float>(dot) * p[i * r + prev];
        }
        double norm = 0;
        for (std::size_t i = 0; i < rows; ++i) norm += static_cast<double>(p[i * r + c]) * p[i * r + c];
        const bool vanished = norm <= 1e-8 * before || norm < 1e-60;
        norm = std::sqrt(norm);
        for (std::size_t i = 0; i < rows; ++i) p[i * r + c] = vanished ? 0.0f : static_cast<float>(p[i * r + c] / norm);
    }
}

/// Whether rank-r factors of blocks whose n and m sum to `factor_length` hold fewer values than
/// the `values` of the blocks themselves.
bool shrinks(const Params& params, std::uint64_t values, std::uint64_t factor_length) {
    const double factors = static_cast<double>(factor_length) * static_cast<double>(params.rank);
    return factors < static_cast<double>(values);
}

class PowerSgd final : public Compressor {
public:
    /// The all-reduce of P, then of Q, in the gradients' width.
    std::vector<WireCollective> wire(const Params& params, const Gradient& g, std::size_t /*ranks*/) const override {
        std::vector<WireCollective> out;
        for (const std::uint64_t values : server_rounds(params, g))
            out.push_back({WireCollective::Op::all_reduce, impl::dense_bytes(g, values)});
        return out;
    }
    /// P's values, then Q's; or the gradient whole, in one round, when its factors would hold
    /// at least as many values, as PyTorch's PowerSGD hook leaves such a matrix uncompressed
    /// (over the set's blocks together; `average` below, in training, takes its exact path per
    /// block, where r >= min(n, m)).
    std::vector<std::uint64_t> server_rounds(const Params& params, const Gradient& g) const override {
        if (!shrinks(params, g.values, g.factor_rows + g.factor_cols)) return {g.values};
        return {checked_mul(g.factor_rows, params.rank, "PowerSGD factor"),
                checked_mul(g.factor_cols, params.rank, "PowerSGD factor")};
    }
    std::uint64_t pushed_bytes(const Params& /*params*/, const Gradient& g, std::uint64_t shard_values) const override {
        return impl::dense_bytes(g, shard_values);
    }
    std::uint64_t pulled_bytes(const Params& /*params*/, const Gradient& g, std::uint64_t shard_values,
                               std::size_t /*ranks*/) const override {
        return impl::dense_bytes(g, shard_values);
    }
    /// P = M Q and Q = Mᵀ P: 2 E r MACs; Gram-Schmidt of P: about n r² (≤ factor_length r²);
    /// error feedback as topk's.
    Work node_work(const Params& params, std::uint64_t values, std::uint64_t factor_length) const override {
        constexpr const char* kWhat = "compression work of a gradient";
        const std::uint64_t r = params.rank;
        Work w;
        if (!shrinks(params, values, factor_length)) {  // sent whole: read once, no factors
            w.dram_bytes = checked_mul(values, kValueBytes, kWhat);
            w.vector_values = values;
            return w;
        }
        w.macs = checked_add(checked_mul(checked_mul(2, values, kWhat), r, kWhat),
                             checked_mul(factor_length, checked_mul(r, r, kWhat), kWhat), kWhat);
        w.dram_bytes = checked_mul(params.error_feedback ? 3 : 1, checked_mul(values, kValueBytes, kWhat), kWhat);
        w.vector_values = values;
        return w;
    }
    /// Q starts standard normal (Box-Muller on the tensors' one stream).
    void init(TensorState& state, const TensorShape& shape, std::size_t workers, const Params& params,
              std::uint64_t& rng) const override {
        Compressor::init(state, shape, workers, params, rng);
        state.q.resize(shape.cols * params.rank);
        for (float& v : state.q) {
            const double u1 = std::max(impl::uniform(rng), 1e-300), u2 = impl::uniform(rng);
            v = static_cast<float>(std::sqrt(-2 * std::log(u1)) * std::cos(6.283185307179586 * u2));
        }
    }
    /// M_w = g_w + e_w; P = mean M_w Q, orthonormalised; Q = mean M_wᵀ P; the gradient P Qᵀ;
    /// e_w = M_w - P Qᵀ. A vector, or a block the rank does not shrink, is averaged exactly.
    std::size_t average(const ExchangeStep& step, TensorState& state, const WorkerGradients& grads,
                        std::vector<float>& out) const override {
        if (!step.params.error_feedback) impl::drop_residuals(state);
        const std::size_t k = step.workers, rows = step.shape.rows, cols = step.shape.cols, t = step.tensor;
        const std::size_t r = step.params.rank;
        const float inv = 1.0f / static_cast<float>(k);
        if (cols == 1 || r >= std::min(rows, cols)) {
            for (std::size_t w = 0; w < k; ++w)
                for (std::size_t i = 0; i < rows * cols; ++i) out[i] += grads[w][t][i] * inv;
            return rows * cols;
        }
        std::vector<float>& q = state.q;
        std::vector<float> p(rows * r, 0.0f);
        for (std::size_t w = 0; w < k; ++w) {
            std::vector<float>& m = state.residual[w];
            for (std::size_t i = 0; i < rows * cols; ++i) m[i] += grads[w][t][i];
            for (std::size_t i = 0; i < rows; ++i)
                for (std::size_t c = 0; c < r; ++c) {
                    double sum = 0;
                    for (std::size_t j = 0; j < cols; ++j) sum += static_cast<double>(m[i * cols + j]) * q[j * r + c];
                    p[i * r + c] += static_cast<float>(sum) * inv;
                }
        }
        orthonormalise(p, rows, r);
        std::fill(q.begin(), q.end(), 0.0f);
        for (std::size_t w = 0; w < k; ++w) {
            const std::vector<float>& m = state.residual[w];
            for (std::size_t j = 0; j < cols; ++j)
                for (std::size_t c = 0; c < r; ++c) {
                    double sum = 0;
                    for (std::size_t i = 0; i < rows; ++i) sum += static_cast<double>(m[i * cols + j]) * p[i * r + c];
                    q[j * r + c] += static_cast<float>(sum) * inv;
                }
        }
        for (std::size_t i = 0; i < rows; ++i)
            for (std::size_t j = 0; j < cols; ++j) {
                double sum = 0;
                for (std::size_t c = 0; c < r; ++c) sum += static_cast<double>(p[i * r + c]) * q[j * r + c];
                out[i * cols + j] = static_cast<float>(sum);
            }
        for (std::size_t w = 0; w < k; ++w)
            for (std::size_t i = 0; i < rows * cols; ++i) state.residual[w][i] -= out[i];
        return (rows + cols) * r;
    }
};

}  // namespace

const Compressor& powersgd_compressor() {
    static const PowerSgd kCompressor;
    return kCompressor;
}

}  // namespace fastsim::compression
