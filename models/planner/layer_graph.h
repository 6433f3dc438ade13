// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "workload/layer.h"

namespace fastsim::planner {

/// The three partition types of AccPar (docs/planner.md, "Partition types").
enum class PartitionType : std::uint8_t {
    batch = 0,         ///< Type I: split B (data parallelism); costs the weight-gradient sum
    in_channels = 1,   ///< Type II: split D_i; costs the output partial sums
    out_channels = 2   ///< Type III: split D_o; costs the input-error partial sums
};
inline constexpr std::size_t kPartitionTypes = 3;

/// "I", "II" or "III".
const char* to_string(PartitionType type);

/// The GEMM view of one layer that the planner splits: (B x D_i) * (D_i x D_o), with a
/// convolution's tensors scaled by their spatial sizes (AccPar's accounting).
struct LayerDims {
    std::uint64_t batch = 0;         ///< B: samples
    std::uint64_t in_channels = 0;   ///< D_i
    std::uint64_t out_channels = 0;  ///< D_o

    [[nodiscard]] std::uint64_t& along(PartitionType type);
    [[nodiscard]] std::uint64_t along(PartitionType type) const;
    friend bool operator==(const LayerDims& a, const LayerDims& b) {
        return a.batch == b.batch && a.in_channels == b.in_channels && a.out_channels == b.out_channels;
    }
};

/// Which tensor an edge of the layer graph moves (docs/planner.md, "Ownership").
enum class EdgeKind : std::uint8_t {
    /// The producer's output is (part of) the consumer's input: a chain edge, and a shortcut in
    /// fastsim's traces (workload::ShortcutConvention::producer).
    producer_output,
    /// AccPar's block shortcut (its code's Com_Cost_Inter_Layer_Block, traces with
    /// `shortcuts: accpar`): the tensor the edge's `from` layer takes as input, moved into the
    /// layout of the consumer's output.
    accpar_block
};

/// One edge of the layer graph into the layer that lists it.
struct Edge {
    std::size_t from = 0;
    EdgeKind kind = EdgeKind::producer_output;
};

/// One weighted layer as the planner sees it.
struct PlanLayer {
    std::string name;
    workload::Layer layer;               ///< the trace's layer (re-lowered with split channels)
    LayerDims dims;                      ///< whole-cluster sizes
    std::uint64_t in_positions = 1;      ///< H_in * W_in (tokens, or m * repeat for a matmul)
    std::uint64_t out_positions = 1;     ///< H_out * W_out
    std::uint64_t kernel_area = 1;       ///< k_h * k_w
    bool has_weights = true;             ///< false for a matmul of two activations
    std::vector<Edge> producers;         ///< empty: reads the network input

    /// Element counts at `d`: A(F_l) = A(E_l) (input), A(F_l+1) (output), A(W) = A(dW).
    [[nodiscard]] std::uint64_t input_elements(const LayerDims& d) const { return d.batch * d.in_channels * in_positions; }
    [[nodiscard]] std::uint64_t output_elements(const LayerDims& d) const { return d.batch * d.out_channels * out_positions; }
    [[nodiscard]] std::uint64_t weight_elements(const LayerDims& d) const {
        return has_weights ? d.in_channels * d.out_channels * kernel_area : 0;
    }
    /// The trace layer with its channels (and so its GEMM) reduced to `d`.
    [[nodiscard]] workload::Layer with_dims(const LayerDims& d) const;
};

/// Layers in trace order (a topological order); edges from each layer's `inputs`.
struct LayerGraph {
    std::vector<PlanLayer> layers;
    /// Index of the last layer reading each layer's output (the layer itself if none).
    std::vector<std::size_t> last_consumer;
};

/// Builds the graph of `workload` at `batch`. Throws std::invalid_argument if an input names
/// no earlier layer.
LayerGraph build_layer_graph(const workload::Workload& workload, std::uint64_t batch);

}  // namespace fastsim::planner
