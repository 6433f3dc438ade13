// SPDX-License-Identifier: MIT
#pragma once

// Data-parallel workers' gradients compressed, exchanged and averaged, as the schemes of
// docs/compression.md do it to real gradients (docs/fast-training.md, "Workers"). Plain C++:
// the trainer hands each worker's gradient of every parameter tensor and gets back the one
// gradient every worker applies.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "compression/compression.h"

namespace fastsim::learning {

/// A parameter tensor as a matrix: rows x cols values (PowerSGD factors it; a vector is
/// rows x 1 and is sent uncompressed by PowerSGD, as its authors do).
struct TensorShape {
    std::size_t rows = 0, cols = 1;
    [[nodiscard]] std::size_t size() const { return rows * cols; }
};

/// Every parameter tensor of a network in the order the trainer exchanges them: each GEMM
/// layer's weights (out x fan_in), then its bias (out x 1).
class Network;
std::vector<TensorShape> gradient_tensors(Network& network);

/// The density a sparse scheme uses at `iteration`: `density`, except that DGC warms up from
/// 25% (25%, 6.25%, 1.5625%, 0.390625% over the first four epochs).
double sparse_density(const compression::Params& params, std::size_t iteration, std::size_t iterations_per_epoch);

struct ExchangeParams {
    compression::Params compression;
    std::size_t workers = 1;
    double momentum = 0.9;  ///< DGC's momentum correction uses the optimiser's momentum
    std::size_t iterations_per_epoch = 1;
    std::uint64_t seed = 1;  ///< TernGrad's stochastic rounding, and PowerSGD's initial Q
};

/// Every worker's state across iterations: error-feedback residuals, DGC's velocities,
/// PowerSGD's Q (warm start). One per run.
class GradientExchange {
public:
    GradientExchange(const ExchangeParams& params, std::vector<TensorShape> tensors);

    /// grads[w][t]: worker w's gradient of tensor t (read; the residuals stay inside). Writes
    /// the averaged (decompressed) gradient of every tensor into `out`. With one worker and no
    /// compression `out` is the gradient itself, bit for bit.
    void exchange(const std::vector<std::vector<std::vector<float>>>& grads, std::vector<std::vector<float>>& out,
                  std::size_t iteration);

    /// DGC applies momentum itself (momentum correction): the optimiser then must not.
    [[nodiscard]] bool applies_momentum() const { return m_params.compression.scheme == compression::Scheme::dgc; }
    /// sparse_density of this exchange's scheme at `iteration`.
    [[nodiscard]] double density(std::size_t iteration) const {
        return sparse_density(m_params.compression, iteration, m_params.iterations_per_epoch);
    }
    /// Values each worker sent in the last exchange, over all tensors (sparse: entries).
    [[nodiscard]] std::size_t values_sent() const { return m_values_sent; }

private:
    void sparse(std::size_t t, const std::vector<std::vector<std::vector<float>>>& grads, std::vector<float>& out,
                std::size_t iteration);
    void quantised(std::size_t t, const std::vector<std::vector<std::vector<float>>>& grads, std::vector<float>& out,
                   std::size_t iteration);
    void powersgd(std::size_t t, const std::vector<std::vector<std::vector<float>>>& grads, std::vector<float>& out);

    ExchangeParams m_params;
    std::vector<TensorShape> m_tensors;
    std::vector<std::vector<std::vector<float>>> m_residual;  ///< [worker][tensor]: error feedback
    std::vector<std::vector<std::vector<float>>> m_velocity;  ///< [worker][tensor]: DGC's u (momentum)
    std::vector<std::vector<float>> m_q;                      ///< [tensor]: PowerSGD's Q (cols x r), shared
    std::size_t m_values_sent = 0;
};

}  // namespace fastsim::learning
