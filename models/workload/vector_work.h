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
    std::uint64_t writes = 0;            ///< values written (in BFP, through the converter)
    std::uint64_t fp32_reads = 0;        ///< fp32 values read (weight gradients, master weights, optimiser state)
    std::uint64_t fp32_writes = 0;       ///< fp32 values written (master weights, optimiser state)

    friend bool operator==(const VectorWork& a, const VectorWork& b) {
        return a.ops == b.ops && a.activation_reads == b.activation_reads && a.gradient_reads == b.gradient_reads &&
               a.writes == b.writes && a.fp32_reads == b.fp32_reads && a.fp32_writes == b.fp32_writes;
    }
};

/// The weight update a training step ends with (run.optimizer), on the vector unit.
enum class Optimizer : std::uint8_t {
    none,          ///< the step is its three GEMM phases (and vector-unit layers) only
    sgd,           ///< w -= lr * g
    sgd_momentum,  ///< v = mu * v + g; w -= lr * v
    adam           ///< Kingma & Ba 2015, with bias correction
};
const EnumNames<Optimizer, 4>& enum_names(Optimizer);

/// Weights of a layer: conv k_h x k_w x C/G x F, fc in x out, gemm k x n; 0 for matmul and
/// vector-unit layers (their few batchnorm and layernorm parameters are not counted).
std::uint64_t weight_count(const Layer& layer);

/// The update of `layer`'s weights by `optimizer` (docs/vector_unit.md, "The optimiser step"):
/// it reads the fp32 weight gradient, the fp32 master weights and the optimiser's state, writes
/// the weights and state back in fp32 and the re-quantised BFP weights through the converter.
/// Nothing for Optimizer::none or a layer without weights.
VectorWork optimizer_work(const Layer& layer, Optimizer optimizer);
/// The same for `weights` weights (a share of a layer's).
VectorWork optimizer_work(std::uint64_t weights, Optimizer optimizer);

/// `numerator / denominator` of every count of `work`, each rounded up (a share of a layer's
/// work split across nodes). std::invalid_argument unless 0 <= numerator <= denominator > 0.
VectorWork share_of(const VectorWork& work, std::uint64_t numerator, std::uint64_t denominator);

/// The forward (`backward` false) or backward pass of vector-unit layer `layer` over `batch`
/// samples. std::invalid_argument for a GEMM layer; SizeOverflow beyond 64 bits.
VectorWork vector_work(const Layer& layer, std::size_t batch, bool backward);

/// A grouped convolution's forward (or, `backward`, backward-data) pass on the vector unit
/// (node.lowering.depthwise vector): one multiply-add per MAC; forward reads the input and the
/// weights and writes the output, backward reads ∇O and the weights and writes ∇A (weights
/// counted with the pass's other reads, at its width). SizeOverflow beyond 64 bits.
VectorWork grouped_conv_vector_work(const Layer& layer, std::size_t batch, bool backward);

/// The col2im after a convolution's backward-data under BackwardDataLowering::col2im
/// (docs/array.md, "Backward-data lowering"): read the im2col-form gradient (batch x output
/// positions x taps x C_in values), add each into its input position of ∇A, write ∇A (batch x
/// input positions x C_in values). None when the im2col form is ∇A itself (1 x 1, stride 1, no
/// padding) or the layer is not a convolution. SizeOverflow beyond 64 bits.
VectorWork col2im_work(const Layer& layer, std::size_t batch);

}  // namespace fastsim::workload

namespace fastsim::workload {

/// `workload` as its GEMM layers, each vector-unit layer carried by a GEMM layer
/// (Workload::hosted; docs/planner.md, "Vector-unit layers"). A vector-unit layer's output is
/// its first producer's tensor: it is hosted by the GEMM layer that tensor comes from, or, if it
/// comes from the network input, by the next GEMM layer (`on_input`). A GEMM layer reads the GEMM
/// outputs its producers' tensors are: a vector-unit layer's first producer's, and the other
/// operands' of a join (a residual add becomes a join of the block's last GEMM and its shortcut's
/// GEMM). The shape check is turned off (pools change shapes). `removed` receives the names of
/// the vector-unit layers.
Workload without_vector_layers(const Workload& workload, std::vector<std::string>* removed = nullptr);

}  // namespace fastsim::workload
