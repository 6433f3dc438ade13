// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <string>
#include <vector>

#include "common/enum_names.h"
#include "common/errors.h"
#include "fmac/training_gemm.h"

namespace fastsim::workload {

/// The name that stands for the network's input in Layer::inputs.
inline constexpr const char* kNetworkInput = "input";

enum class LayerKind : std::uint8_t {
    conv,    ///< 2-D convolution, lowered by im2col
    fc,      ///< fully connected
    matmul,  ///< a GEMM of two activations per sample (e.g. attention Q K^T), `repeat` times
    gemm,    ///< one GEMM (m x k) * (k x n) with a weight operand, not scaled by the batch
             ///< (a row of SCALE-Sim's `Layer, M, N, K` form)
    // Layers of the vector unit (no GEMM): their tensor is [in_height, in_width, in_channels].
    pool,       ///< max or average pooling over kernel windows, per channel
    batchnorm,  ///< batch normalisation (training mode: batch statistics per channel)
    relu,
    gelu,       ///< GELU, tanh approximation
    add,        ///< elementwise sum of its inputs (a residual join)
    softmax,    ///< over the last axis (in_channels)
    layernorm,  ///< over the last axis (in_channels)
    concat,     ///< its inputs side by side along the last axis; the tensor is the result
    embedding   ///< a lookup of `tokens` rows of a vocab x features table by token id; tensor [1, tokens, features]
};

/// What a layer kind is, in one row: its name (a trace's `type`) and the unit that runs it.
struct LayerKindTraits {
    LayerKind kind;
    std::string_view name;
    bool vector_unit;  ///< runs on the vector unit and lowers to no GEMM; else a GEMM on the array
};
/// Every kind's row, in enumerator order (a static_assert in layer.cpp checks it); enum_names
/// and runs_on_vector_unit read it. A new kind is its enumerator, its row, and its case in each
/// switch over LayerKind (none has a default, so the compiler names each one missed).
inline constexpr std::array<LayerKindTraits, 13> kLayerKinds{{
    {LayerKind::conv, "conv", false},
    {LayerKind::fc, "fc", false},
    {LayerKind::matmul, "matmul", false},
    {LayerKind::gemm, "gemm", false},
    {LayerKind::pool, "pool", true},
    {LayerKind::batchnorm, "batchnorm", true},
    {LayerKind::relu, "relu", true},
    {LayerKind::gelu, "gelu", true},
    {LayerKind::add, "add", true},
    {LayerKind::softmax, "softmax", true},
    {LayerKind::layernorm, "layernorm", true},
    {LayerKind::concat, "concat", true},
    {LayerKind::embedding, "embedding", true},
}};

const EnumNames<LayerKind, kLayerKinds.size()>& enum_names(LayerKind);

/// True for the layer kinds the vector unit runs: they lower to no GEMM.
inline bool runs_on_vector_unit(LayerKind kind) { return kLayerKinds[static_cast<std::size_t>(kind)].vector_unit; }

enum class PoolMode : std::uint8_t { max, average };
const EnumNames<PoolMode, 2>& enum_names(PoolMode);
inline const char* to_string(LayerKind kind) { return name_of(kind).data(); }

/// One layer of a network. Sizes are per sample; the batch comes from the run.
struct Layer {
    std::string name;
    LayerKind kind = LayerKind::fc;
    // conv, and the tensor of a vector-unit layer (pool: its input; concat: the joined result)
    int in_height = 0, in_width = 0, in_channels = 0;
    int kernel_height = 0, kernel_width = 0;
    int filters = 0;
    int stride = 1;        ///< rows between consecutive windows (and columns, unless stride_width is set)
    int stride_width = 0;  ///< columns between consecutive windows; 0 = stride
    int padding = 0;       ///< zero padding on each side
    int groups = 1;        ///< channel groups: in_channels and filters split into `groups` independent convolutions
    int dilation = 1;      ///< conv: input positions between a kernel's taps (1 = dense), both axes
    PoolMode pool_mode = PoolMode::max;  ///< pool only (kernel, stride, stride_width, padding as for conv)
    /// SCALE-Sim's output-size rule: a last window that runs past the input's edge still
    /// counts, so out = ceil((H + 2p - k) / s) + 1 instead of floor(...) + 1.
    bool partial_windows = false;
    // fc
    int in_features = 0, out_features = 0;
    int tokens = 1;  ///< rows per sample (sequence length for a transformer projection)
    // matmul: (m x k) * (k x n) per sample and repeat; gemm: (m x k) * (k x n) once
    int m = 0, k = 0, n = 0;
    int repeat = 1;  ///< independent GEMMs per sample (attention heads)
    // embedding: its table is vocab x in_channels (features); in_width is tokens, in_height 1
    int vocab = 0;        ///< rows of the table (token ids it can look up)
    std::string tied_to;  ///< a later fc layer (features -> vocab) whose weights are the table; empty: its own
    /// Producers of this layer's input (names of earlier layers, or kNetworkInput); empty =
    /// the previous layer; more than one = a join (residual add, concatenation).
    std::vector<std::string> inputs;
    /// In a GEMM-only view (without_vector_layers), per entry of `inputs`, the part of this
    /// layer's input channels it provides: below 1 for an operand of a concatenation. Empty:
    /// every input is the whole input (a chain, or a residual add's operands).
    std::vector<double> input_shares;
    Location where;  ///< the layer in its trace file (file, line, column, `layers[i]`); empty if built in

    /// Input rows (columns) one window spans: dilation * (kernel - 1) + 1.
    [[nodiscard]] int window_height() const { return dilation * (kernel_height - 1) + 1; }
    [[nodiscard]] int window_width() const { return dilation * (kernel_width - 1) + 1; }
    [[nodiscard]] int out_height() const { return windows(in_height + 2 * padding - window_height(), stride); }
    [[nodiscard]] int out_width() const {
        return windows(in_width + 2 * padding - window_width(), stride_width > 0 ? stride_width : stride);
    }

private:
    /// Windows along one axis whose padded extent exceeds the kernel by `slack` >= 0.
    [[nodiscard]] int windows(int slack, int step) const {
        return (partial_windows ? (slack + step - 1) / step : slack / step) + 1;
    }
};

/// A layer as GEMMs: `count` independent forward GEMMs of `dims` (batch x in) * (in x out).
struct LayerGemm {
    fmac::LayerDims dims;
    std::uint64_t count = 1;

    /// Multiply-accumulates of the forward pass (each training phase does the same number);
    /// SizeOverflow beyond 64 bits.
    [[nodiscard]] std::uint64_t forward_macs() const;
};

/// Lowers a layer for a batch: a vector-unit layer -> no GEMM (count 0); conv -> `groups` GEMMs of (batch * out_h * out_w) x
/// (k_h * k_w * C_in / groups) x (filters / groups) (im2col per group); fc -> (batch * tokens) x
/// in x out; matmul -> batch * repeat GEMMs of m x k x n; gemm -> one GEMM of m x k x n.
/// SizeOverflow if a dimension, the count or the forward MACs do not fit 64 bits.
LayerGemm lower(const Layer& layer, std::size_t batch);

/// How a layer's backward-data GEMM is lowered onto the array (node.lowering.backward_data;
/// docs/array.md, "Backward-data lowering"). They differ for convolutions only.
enum class BackwardDataLowering : std::uint8_t {
    /// A transposed convolution: ∇A = conv(∇O, W flipped, channels swapped), reduction over
    /// kernel taps x filters, n = input channels; a strided one as one GEMM per class of input
    /// positions the same taps reach (sub-pixel), so no zero of a dilated ∇O is multiplied.
    transposed,
    /// The forward GEMM transposed: ∇A in im2col form (reduction over filters only, n = taps x
    /// input channels), folded back by a col2im scatter-add.
    col2im
};
const EnumNames<BackwardDataLowering, 2>& enum_names(BackwardDataLowering);
inline const char* to_string(BackwardDataLowering l) { return name_of(l).data(); }

/// How a grouped convolution's per-group GEMMs meet the array (node.lowering.depthwise;
/// docs/array.md, "Grouped and depthwise convolutions").
enum class DepthwiseLowering : std::uint8_t {
    /// Several groups' GEMMs packed block-diagonally into one, as many as fill a fold.
    array_packed,
    /// On the vector unit, one multiply-add per MAC (every phase of the layer).
    vector,
    /// One GEMM per group.
    per_channel
};
const EnumNames<DepthwiseLowering, 3>& enum_names(DepthwiseLowering);
inline const char* to_string(DepthwiseLowering l) { return name_of(l).data(); }

/// The node's lowering choices (node.lowering).
struct Lowering {
    BackwardDataLowering backward_data = BackwardDataLowering::transposed;
    DepthwiseLowering depthwise = DepthwiseLowering::array_packed;
};

/// `count` GEMMs of one shape in the array's view: X (m x k) streams, Y^T (n x k) is held, k
/// is the reduction. With blocks > 1, each is `blocks` independent GEMMs of `block` packed
/// block-diagonally: X is theirs side by side along k, each block's k padded to whole BFP
/// groups, and Y^T holds each block's rows against its own k only (zeros elsewhere).
struct ShapedGemms {
    fmac::GemmShape shape;
    std::uint64_t count = 1;
    std::uint64_t blocks = 1;
    fmac::GemmShape block;  ///< one block's own shape; shape itself when blocks == 1
    friend bool operator==(const ShapedGemms& a, const ShapedGemms& b) {
        return a.shape.m == b.shape.m && a.shape.k == b.shape.k && a.shape.n == b.shape.n && a.count == b.count &&
               a.blocks == b.blocks && a.block.m == b.block.m && a.block.k == b.block.k && a.block.n == b.block.n;
    }
};

/// `gemms` (independent GEMMs of a grouped convolution's phase) packed block-diagonally onto
/// `array`: per entry, P = min(R / ceil(k / g), C / n, count) of them into one GEMM of m x (P x
/// ceil(k / g) x g) x (P x n) (as many as fill a weight-stationary fold), the remainder of the
/// count into one more GEMM; entries with P < 2 kept as they are.
std::vector<ShapedGemms> pack_blocks(const std::vector<ShapedGemms>& gemms, const fmac::ArrayGeometry& array);

/// The GEMMs of `phase` of a layer lowered to `gemm` (lower()): forward (batch x in x out),
/// weight-gradient (in x batch x out), backward-data (batch x out x in) but for a convolution
/// under `lowering` transposed: per group and class of input positions (residues of the
/// stride that the same kernel taps reach, per axis), (batch x positions of the class) x
/// (taps of the class x filters / groups) x (C_in / groups), shapes in first-seen order with
/// equal ones merged; classes no tap reaches get no GEMM (their ∇A is 0). Empty for a
/// vector-unit layer. SizeOverflow as lower().
std::vector<ShapedGemms> phase_gemms(const Layer& layer, std::size_t batch, fmac::TrainingPhase phase,
                                     BackwardDataLowering lowering);

/// True for a convolution of more than one group: node.lowering.depthwise applies to it.
[[nodiscard]] inline bool is_grouped_conv(const Layer& layer) {
    return layer.kind == LayerKind::conv && layer.groups > 1;
}

/// True if `lowering` runs `layer`'s forward and backward-data on the vector unit (a grouped
/// convolution under depthwise vector): it then computes ∇A itself, with no im2col form to fold.
[[nodiscard]] inline bool conv_on_vector_unit(const Layer& layer, const Lowering& lowering) {
    return is_grouped_conv(layer) && lowering.depthwise == DepthwiseLowering::vector;
}

/// phase_gemms on a node: a grouped convolution's GEMMs packed onto `array` under
/// depthwise array_packed, none under vector (the layer then runs on the vector unit).
std::vector<ShapedGemms> node_phase_gemms(const Layer& layer, std::size_t batch, fmac::TrainingPhase phase,
                                          const Lowering& lowering, const fmac::ArrayGeometry& array);

/// What a second or later entry of a layer's `inputs` names (docs/workloads.md, "Shortcuts").
enum class ShortcutConvention : std::uint8_t {
    /// The producer of the tensor added to the layer's input (fastsim's traces): the edge moves
    /// that producer's output into the layer's input layout.
    producer,
    /// The first layer of the block the shortcut skips (AccPar's code): the edge moves that
    /// layer's input into the layout of this layer's output, as AccPar's block table does.
    accpar
};
const EnumNames<ShortcutConvention, 2>& enum_names(ShortcutConvention);
inline const char* to_string(ShortcutConvention convention) { return name_of(convention).data(); }

/// What a trace's layer shapes that do not chain lead to (trace key `shape_check`).
enum class ShapeCheck : std::uint8_t {
    error,  ///< every mismatch is an error (the default for fastsim traces)
    warn,   ///< a warning each: the trace folds layers it does not list (AccPar's pooling)
    off     ///< not checked (SCALE-Sim topologies, lists of independent layers)
};
const EnumNames<ShapeCheck, 3>& enum_names(ShapeCheck);

/// A vector-unit layer that a GEMM-only view of a network (without_vector_layers) carries with
/// one of its GEMM layers, its host: a cluster run splits and costs it as the host's output is
/// split, or as its input when it runs before any GEMM (docs/planner.md, "Vector-unit layers").
struct HostedLayer {
    Layer layer;
    std::size_t host = 0;   ///< index of the host in Workload::layers
    bool on_input = false;  ///< before the host (it works on the network input): split as the host's input
    bool backward = true;   ///< it has a backward pass: false if it reads only the network input
    /// A batchnorm whose statistics span every node's samples (SyncBatchNorm), not each node's
    /// own (PyTorch DDP's default): cluster.batchnorm_statistics.
    bool synchronised_statistics = false;
};

struct Workload {
    std::string name;
    std::string source;  ///< where the layer sizes come from
    std::vector<Layer> layers;
    /// Vector-unit layers carried by GEMM layers, in trace order: filled by without_vector_layers,
    /// empty in a trace as read (whose vector-unit layers are in `layers`).
    std::vector<HostedLayer> hosted;
    ShortcutConvention shortcuts = ShortcutConvention::producer;
    ShapeCheck shape_check = ShapeCheck::error;
    std::vector<std::string>
        warnings;  ///< for the command to print: mismatches under ShapeCheck::warn, layers left out
};

}  // namespace fastsim::workload
