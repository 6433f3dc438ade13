// SPDX-License-Identifier: MIT
#pragma once

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

/// The conversion of one edge's boundary tensors between the producer's and the consumer's
/// partitions (docs/planner.md, "Communication"): F (activations) moves before the consumer's
/// forward pass, E (errors) before the producer's backward pass. Volumes in elements.
struct EdgeTransfer {
    SideVolumes forward;   ///< of F, A(F) = the consumer's input
    SideVolumes backward;  ///< of E, A(E) = A(F)
};

/// AccPar's inter-layer table (`Layer::Com_Cost_Inter_Layer`) or, for a shortcut edge, its
/// block table (`Com_Cost_Inter_Layer_Block`), generalised from 1/2 splits to the producer's
/// share `alpha_from` and the consumer's share `alpha_to`: an entry 0.5 A(X) ("the side needs
/// all of X") becomes the other side's share of X, an entry 0.25 A(X) ("the side needs its
/// slice along the other dimension") becomes share x other share. At 1/2 both give the table.
EdgeTransfer edge_transfer(PartitionType from, PartitionType to, bool shortcut, double alpha_from, double alpha_to,
                           double boundary_elements);

/// A layer's own partial-sum or gradient reduction between the two sides (elements each side
/// receives, whatever the split): Type I A(dW), Type II A(F_l+1), Type III A(E_l).
double intra_elements(const PlanLayer& layer, PartitionType type, const LayerDims& dims);

}  // namespace fastsim::planner
