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

/// How the two sides of a group hold (or need) a tensor of rows x columns elements (rows =
/// samples, columns = a sample's features: channels x positions): split by rows or by columns
/// (side A takes the first `share` of them, side B the rest), or whole on both sides.
struct TensorLayout {
    enum class Split : std::uint8_t { rows, columns, none } split = Split::none;
    double share = 1;  ///< side A's fraction of the split dimension
};

/// What a layer with partition `type` and side-A share `alpha` holds of its tensors:
/// input F_l (needed by the forward pass; E_l is produced in this layout by backward-data)
/// and output F_l+1 (produced by the forward pass, after Type II's partial sums; E_l+1 is
/// needed in this layout by the backward pass) (docs/planner.md, "Ownership"):
///
///   type   input F_l, E_l      output F_l+1, E_l+1
///   I      rows at alpha       rows at alpha
///   II     columns at alpha    whole (the partial sums are exchanged)
///   III    whole (E_l's partial sums are exchanged)   columns at alpha
TensorLayout input_layout(PartitionType type, double alpha);
TensorLayout output_layout(PartitionType type, double alpha);

/// Elements of a rows x columns tensor that each side needs in `needed` and does not hold in
/// `held`: side A's needed part minus what it holds, likewise B. Split positions are the
/// shares times the extents, rounded to whole rows or columns; exact in elements.
SideVolumes missing_elements(const TensorLayout& held, const TensorLayout& needed, std::uint64_t rows,
                             std::uint64_t columns);

/// The choice a layer made at a group: its partition type and side A's share.
struct SplitChoice {
    PartitionType type = PartitionType::batch;
    double alpha = 0.5;
};

/// Re-partitioning one edge's boundary tensors between the choices of its two layers
/// (`from`, `to`): F before `to`'s forward pass, E before `from`'s backward pass; elements each
/// side receives of a rows x columns tensor. At alpha = 1/2 this gives AccPar's tables, chain
/// (producer_output) and block (accpar_block).
struct EdgeTransfer {
    SideVolumes forward;   ///< of F
    SideVolumes backward;  ///< of E
};
EdgeTransfer edge_transfer(EdgeKind kind, const SplitChoice& from, const SplitChoice& to, std::uint64_t rows,
                           std::uint64_t columns);

/// A layer's own partial-sum or gradient reduction between the two sides (elements each side
/// receives, whatever the split): Type I A(dW), Type II A(F_l+1), Type III A(E_l).
double intra_elements(const PlanLayer& layer, PartitionType type, const LayerDims& dims);

}  // namespace fastsim::planner
