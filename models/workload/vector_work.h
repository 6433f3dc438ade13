// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "workload/layer.h"

namespace fastsim::workload {

/// The tensor a layer produces per sample as [height, width, channels]: conv and pool
/// [H_out, W_out, C]; fc [1, tokens, out_features]; matmul [1, repeat x m, n]; the other
/// vector-unit layers their tensor. Nothing for a gemm layer (not per sample).
std::optional<std::array<std::uint64_t, 3>> output_shape(const Layer& layer);

/// Values per sample of a vector-unit layer's tensor: in_height x in_width x in_channels
/// (each operand of an add; the joined result of a concat; a pool's input).
std::uint64_t tensor_values(const Layer& layer);

/// What one training phase of a vector-unit layer does for a whole batch (docs/vector_unit.md,
/// "Operations"): vector operations (an add, multiply, compare, exp or tanh each count one),
/// the BFP tensors it reads, and the values it writes (activations forward, gradients backward).
struct VectorWork {
    std::uint64_t ops = 0;
    std::uint64_t activation_reads = 0;  ///< values of activation tensors read
    std::uint64_t gradient_reads = 0;    ///< values of gradient tensors read
    std::uint64_t writes = 0;            ///< values written

    friend bool operator==(const VectorWork& a, const VectorWork& b) {
        return a.ops == b.ops && a.activation_reads == b.activation_reads && a.gradient_reads == b.gradient_reads &&
               a.writes == b.writes;
    }
};

/// The forward (`backward` false) or backward pass of vector-unit layer `layer` over `batch`
/// samples. std::invalid_argument for a GEMM layer; SizeOverflow beyond 64 bits.
VectorWork vector_work(const Layer& layer, std::size_t batch, bool backward);

}  // namespace fastsim::workload

namespace fastsim::workload {

/// `workload` without its vector-unit layers (for the planner, which splits GEMMs): each
/// consumer reads what the removed layers read, so a residual add becomes a join of its
/// producers and a pool's consumer reads the pool's producer. The shape check is turned off
/// (pools change shapes). `removed` receives the names left out.
Workload without_vector_layers(const Workload& workload, std::vector<std::string>* removed = nullptr);

}  // namespace fastsim::workload
