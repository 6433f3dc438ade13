// SPDX-License-Identifier: MIT
#pragma once

// Data-parallel workers' gradients compressed, exchanged and averaged, as the schemes of
// docs/compression.md do it to real gradients (docs/fast-training.md, "Workers"). Plain C++:
// the trainer hands each worker's gradient of every parameter tensor and gets back the one
// gradient every worker applies.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "compression/compressor.h"

namespace fastsim::learning {

using compression::TensorShape;

/// Every parameter tensor of a network in the order the trainer exchanges them: each GEMM
/// layer's weights (out x fan_in), then its bias (out x 1).
class Network;
std::vector<TensorShape> gradient_tensors(Network& network);

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

    /// Whether the scheme applies momentum itself (DGC's momentum correction): the optimiser
    /// then must not.
    [[nodiscard]] bool applies_momentum() const { return m_compressor.applies_momentum(); }
    /// The density the scheme uses at `iteration` (Compressor::density).
    [[nodiscard]] double density(std::size_t iteration) const {
        return m_compressor.density(m_params.compression, iteration, m_params.iterations_per_epoch);
    }
    /// Values each worker sent in the last exchange, over all tensors (sparse: entries).
    [[nodiscard]] std::size_t values_sent() const { return m_values_sent; }

private:
    ExchangeParams m_params;
    std::vector<TensorShape> m_tensors;
    const compression::Compressor& m_compressor;
    std::vector<compression::TensorState> m_states;  ///< [tensor]
    std::size_t m_values_sent = 0;
};

}  // namespace fastsim::learning
