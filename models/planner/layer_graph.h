// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/enum_names.h"
#include "workload/layer.h"

namespace fastsim::planner {

/// The three partition types of AccPar and spatial parallelism (docs/planner.md, "Partition
/// types"). Arrays indexed by type have kPartitionTypes entries.
enum class PartitionType : std::uint8_t {
    batch = 0,         ///< Type I: split B (data parallelism); costs the weight-gradient sum
    in_channels = 1,   ///< Type II: split D_i; costs the output partial sums
    out_channels = 2,  ///< Type III: split D_o; costs the input-error partial sums
    spatial = 3        ///< Type IV: split a convolution's output rows; costs the halo and the weight-gradient sum
};
inline constexpr std::size_t kPartitionTypes = 4;

/// "I", "II", "III" or "IV".
const char* to_string(PartitionType type);
/// Every type's name ("batch", "in_channels", "out_channels", "spatial"), for name_of.
const EnumNames<PartitionType, kPartitionTypes>& enum_names(PartitionType);

/// The GEMM view of one layer that the planner splits: (B x D_i) * (D_i x D_o), with a
/// convolution's tensors scaled by their spatial sizes (AccPar's accounting), and the rows of
/// a convolution's output image that Type IV splits.
struct LayerDims {
    std::uint64_t batch = 0;         ///< B: samples
    std::uint64_t in_channels = 0;   ///< D_i
    std::uint64_t out_channels = 0;  ///< D_o
    std::uint64_t out_rows = 1;      ///< output image rows (H_out of a convolution; 1 for other layers)

    [[nodiscard]] std::uint64_t& along(PartitionType type);
    [[nodiscard]] std::uint64_t along(PartitionType type) const;
    friend bool operator==(const LayerDims& a, const LayerDims& b) {
        return a.batch == b.batch && a.in_channels == b.in_channels && a.out_channels == b.out_channels &&
               a.out_rows == b.out_rows;
    }
};

/// The input image rows each side of a Type IV cut reads: side A's output rows read input rows
/// [0, a_end), side B's [b_begin, height), of an input window of `height` rows (halo included:
/// both sides read the rows [b_begin, a_end) when b_begin < a_end).
struct SpatialInputRows {
    std::uint64_t height = 0, a_end = 0, b_begin = 0;
    /// Rows both sides read: max(0, a_end - b_begin).
    [[nodiscard]] std::uint64_t halo() const { return a_end > b_begin ? a_end - b_begin : 0; }
};

/// The part of a grouped convolution one share computes: `groups` groups, each reducing over
/// `in_per_group` channels into `out_per_group` filters.
struct GroupedShare {
    std::uint64_t groups = 1, in_per_group = 1, out_per_group = 1;
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
    /// The part of the consumer's input channels the edge's tensor is: below 1 for an operand of
    /// a concatenation (workload::Layer::input_shares), 1 for a chain or a residual add's operand.
    double share = 1;
};

/// One weighted layer as the planner sees it.
struct PlanLayer {
    std::string name;
    workload::Layer layer;            ///< the trace's layer (re-lowered with split channels)
    LayerDims dims;                   ///< whole-cluster sizes
    std::uint64_t in_positions = 1;   ///< H_in * W_in (tokens, or m * repeat for a matmul)
    std::uint64_t out_positions = 1;  ///< H_out * W_out
    std::uint64_t kernel_area = 1;    ///< k_h * k_w
    // Image rows (Type IV). A layer without them (fc, matmul) has one input and one output row
    // holding all its positions, kernel height 1, stride 1 and no padding.
    std::uint64_t in_height = 1;      ///< H_in: input image rows
    std::uint64_t in_width = 1;       ///< positions per input row (W_in); in_height * in_width = in_positions
    std::uint64_t out_width = 1;      ///< positions per output row (W_out); dims.out_rows * out_width = out_positions
    std::uint64_t kernel_height = 1;  ///< input rows one window spans: k_h, or more if dilated
    std::uint64_t stride = 1;         ///< rows between consecutive output rows' windows
    std::uint64_t padding = 0;        ///< zero rows above (and below) the input image
    bool has_weights = true;          ///< false for a matmul of two activations
    std::uint64_t groups = 1;     ///< a grouped convolution's groups (each group's weights see C_in / groups channels)
    std::vector<Edge> producers;  ///< empty: reads the network input
    /// The vector-unit layers this layer carries (workload::Workload::hosted, in trace order):
    /// their work is split as this layer's output, or its input for those `on_input`
    /// (vector_share), and costed with this layer's forward and backward-data phases. Shared, so
    /// that the many copies of a graph (pipeline stages, alpa's blocks) do not copy them.
    std::shared_ptr<const std::vector<workload::HostedLayer>> vector_layers;
    /// *vector_layers, or none.
    [[nodiscard]] const std::vector<workload::HostedLayer>& carried() const;
    /// Whether the layer has a backward-data phase (computes its input's error): it reads another
    /// layer, or carries a vector-unit layer on its input, which it reads on one node (as the
    /// node model, a layer reading only the network input has none).
    [[nodiscard]] bool has_backward_data() const;

    /// Whether Type IV may split this layer: a convolution with at least 2 output rows.
    [[nodiscard]] bool spatial_splittable() const {
        return layer.kind == workload::LayerKind::conv && dims.out_rows >= 2;
    }
    /// Input image rows that `out_rows` consecutive output rows read: all of them for the whole
    /// output, else the window min(H_in, (out_rows - 1) * stride + k_h).
    [[nodiscard]] std::uint64_t input_rows(std::uint64_t out_rows) const;
    /// The rows each side reads when a Type IV cut at `dims` (dims.out_rows output rows, their
    /// input window input_rows(dims.out_rows)) gives side A the first `split_a` output rows
    /// (docs/planner.md, "Type IV"): a_end = min(H, (split_a - 1) * stride + k_h - p),
    /// b_begin = min(H, split_a * stride - p), each at least 0, where p is the padding above the
    /// window: the layer's padding for the whole image, else min(padding, the window's missing rows).
    [[nodiscard]] SpatialInputRows spatial_input_rows(const LayerDims& dims, std::uint64_t split_a) const;

    /// Element counts at `d`: A(F_l) = A(E_l) (input: the rows d.out_rows read), A(F_l+1)
    /// (output), A(W) = A(dW).
    [[nodiscard]] std::uint64_t input_elements(const LayerDims& d) const {
        return d.batch * d.in_channels * input_rows(d.out_rows) * in_width;
    }
    [[nodiscard]] std::uint64_t output_elements(const LayerDims& d) const {
        return d.batch * d.out_channels * d.out_rows * out_width;
    }
    [[nodiscard]] std::uint64_t weight_elements(const LayerDims& d) const {
        return has_weights ? d.in_channels * d.out_channels * kernel_area / groups : 0;
    }
    /// The groups a grouped convolution's share `d` computes (groups > 1): each group keeps the
    /// layer's channels per group, cut to the share's channels where fewer, and the share holds
    /// ceil(d.in_channels * d.out_channels / (groups * in_per_group * out_per_group)) of them, at
    /// least 1: the weights of a d.in_channels x d.out_channels block at the layer's density
    /// 1 / groups, as weight_elements counts them. A depthwise layer (one channel per group) split
    /// to c input channels computes c groups.
    [[nodiscard]] GroupedShare grouped_share(const LayerDims& d) const;
    /// The trace layer with its channels (and so its GEMM) reduced to `d` (a grouped
    /// convolution's to grouped_share(d)). A convolution with
    /// fewer output rows than its whole output is lowered as its padded input window: padding
    /// 0, in_width W_in + 2 * padding, in_height (d.out_rows - 1) * stride + k_h, so that
    /// out_height() = d.out_rows and out_width() is unchanged (docs/planner.md, "Type IV").
    [[nodiscard]] workload::Layer with_dims(const LayerDims& d) const;
    /// The part of a carried vector-unit layer's per-sample work one share `d` does, as
    /// numerator / denominator: the share's output channels x output rows of the layer's
    /// (its input channels x input rows read, for one `on_input`). A Type II share holds the
    /// whole output, so it does the whole of an output's vector work for its samples.
    [[nodiscard]] std::pair<std::uint64_t, std::uint64_t> vector_share(const LayerDims& d, bool on_input) const;
};

/// Layers in trace order (a topological order); edges from each layer's `inputs`.
struct LayerGraph {
    std::vector<PlanLayer> layers;
    /// Index of the last layer reading each layer's output (the layer itself if none).
    std::vector<std::size_t> last_consumer;
};

/// The stage's layer graph: network layers [first, end) at `batch` samples, their edges from
/// inside the range kept (renumbered), those from earlier layers dropped (they become transfers).
LayerGraph stage_graph(const LayerGraph& graph, std::size_t first, std::size_t end, std::uint64_t batch);

/// LayerGraph::last_consumer of `layers`.
std::vector<std::size_t> last_consumers(const std::vector<PlanLayer>& layers);

/// Builds the graph of `workload` at `batch`. Throws std::invalid_argument if an input names
/// no earlier layer.
LayerGraph build_layer_graph(const workload::Workload& workload, std::uint64_t batch);

}  // namespace fastsim::planner
