// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>

#include "planner/layer_graph.h"

namespace fastsim::planner {

/// Elements (or bytes) each side of a two-way split receives. Side A holds the fraction
/// alpha of every split tensor, side B the rest.
struct SideVolumes {
    double to_a = 0;
    double to_b = 0;

    [[nodiscard]] double max() const { return to_a > to_b ? to_a : to_b; }
    [[nodiscard]] bool empty() const { return to_a == 0 && to_b == 0; }
    SideVolumes& operator+=(const SideVolumes& o) {
        to_a += o.to_a;
        to_b += o.to_b;
        return *this;
    }
    [[nodiscard]] SideVolumes scaled(double factor) const { return {to_a * factor, to_b * factor}; }
};

/// The extents of a boundary tensor: rows = samples, columns = a sample's features, channel-major:
/// `channels` blocks of height x width positions, each block its channel's image row by row.
struct TensorShape {
    std::uint64_t samples = 0;
    std::uint64_t channels = 1;
    std::uint64_t height = 1;  ///< image rows (1 for a tensor without them)
    std::uint64_t width = 1;   ///< positions per image row
    [[nodiscard]] std::uint64_t columns() const { return channels * height * width; }
};

/// How the two sides of a group hold (or need) a tensor: split by rows or by columns (side A
/// takes the first `share` of them, side B the rest), by image rows (within every channel's
/// block, side A the first `share` of the image rows, side B those from `b_from` on: a set of
/// column stripes, not one column block), or whole on both sides.
struct TensorLayout {
    enum class Split : std::uint8_t { rows, columns, image_rows, none } split = Split::none;
    double share = 1;   ///< side A's fraction of the split dimension
    double b_from = 1;  ///< image_rows: where side B's rows begin (< share: both hold the halo between)
};

/// The choice a layer made at a group: its partition type and side A's share. For Type IV,
/// alpha is side A's share of the output rows, and input_a_end / input_b_begin are the fractions
/// of its input window's rows where side A's reads end and side B's begin (halo included;
/// negative: at alpha, no halo).
struct SplitChoice {
    PartitionType type = PartitionType::batch;
    double alpha = 0.5;
    double input_a_end = -1;
    double input_b_begin = -1;
};

/// The Type IV choice of `layer` at `dims` with side A taking `split_a` of dims.out_rows
/// output rows, its input rows from PlanLayer::spatial_input_rows.
SplitChoice spatial_choice(const PlanLayer& layer, const LayerDims& dims, std::uint64_t split_a);

/// What a layer with choice `c` holds of its tensors: input F_l (needed by the forward pass;
/// E_l is produced in this layout by backward-data) and output F_l+1 (produced by the forward
/// pass, after Type II's partial sums; E_l+1 is needed in this layout by the backward pass)
/// (docs/planner.md, "Ownership"):
///
///   type   input F_l, E_l      output F_l+1, E_l+1
///   I      rows at alpha       rows at alpha
///   II     columns at alpha    whole (the partial sums are exchanged)
///   III    whole (E_l's partial sums are exchanged)   columns at alpha
///   IV     image rows [0, a_end) | [b_begin, H) (the halo's E partial sums are exchanged)
///                              image rows at alpha
TensorLayout input_layout(const SplitChoice& c);
TensorLayout output_layout(const SplitChoice& c);

/// Elements of a tensor of `shape` that each side needs in `needed` and does not hold in
/// `held`: side A's needed part minus what it holds, likewise B. Split positions are the
/// shares times the extents, rounded to whole rows, columns or image rows; exact in elements.
SideVolumes missing_elements(const TensorLayout& held, const TensorLayout& needed, const TensorShape& shape);
/// The same for a rows x columns tensor without image rows (one channel block per column).
SideVolumes missing_elements(const TensorLayout& held, const TensorLayout& needed, std::uint64_t rows,
                             std::uint64_t columns);

/// Re-partitioning one edge's boundary tensors between the choices of its two layers
/// (`from`, `to`): F before `to`'s forward pass, E before `from`'s backward pass; elements each
/// side receives of a tensor of `shape`. At alpha = 1/2 this gives AccPar's tables, chain
/// (producer_output) and block (accpar_block).
struct EdgeTransfer {
    SideVolumes forward;   ///< of F
    SideVolumes backward;  ///< of E
};
EdgeTransfer edge_transfer(EdgeKind kind, const SplitChoice& from, const SplitChoice& to, const TensorShape& shape);
/// The same for a rows x columns tensor without image rows.
EdgeTransfer edge_transfer(EdgeKind kind, const SplitChoice& from, const SplitChoice& to, std::uint64_t rows,
                           std::uint64_t columns);

/// A layer's own partial-sum or gradient reduction between the two sides (elements each side
/// receives, whatever the split): Type I A(dW), Type II A(F_l+1), Type III A(E_l), Type IV A(dW)
/// (its halo's input-error partial sums are spatial_halo_elements).
double intra_elements(const PlanLayer& layer, PartitionType type, const LayerDims& dims);

/// The reductions of the statistics of the normalisations `layer` carries (docs/planner.md,
/// "Statistics"), in elements each side receives: 2 per row for a layernorm or softmax whose rows
/// `type` splits (the rows' sums and sums of squares, or maxima and sums; backward 2 for a
/// layernorm, 1 for a softmax), 2 per channel forward and backward for a synchronised batchnorm
/// whose samples or image rows it splits.
/// A carried layer's tensor is its host's output (Type II leaves it whole), or its input for one
/// `on_input` (Type III leaves it whole). `backward`: the backward pass's reductions, of the
/// layers that have one.
double statistics_elements(const PlanLayer& layer, PartitionType type, const LayerDims& dims, bool backward);

/// Type IV's input-error partial sums (elements each side receives): both sides' backward-data
/// writes the halo rows both read, so each sends the other its part of them:
/// batch x D_i x halo rows x W_in, halo = SpatialInputRows::halo() (k_h - stride inside the
/// image, 0 when stride >= k_h).
double spatial_halo_elements(const PlanLayer& layer, const LayerDims& dims, std::uint64_t split_a);

}  // namespace fastsim::planner
