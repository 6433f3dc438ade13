// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/units.h"
#include "planner/planner.h"

namespace fastsim::planner {

/// Part of a layer's weights that several nodes hold copies of, and so whose gradients they
/// all-reduce after the weight-gradient phase: the nodes (ascending ids) and the elements.
struct ReplicaSet {
    std::vector<NodeId> nodes;
    std::uint64_t elements = 0;
    /// Its cells as n x m matrices (n = output channels, m = input channels x kernel area), for
    /// PowerSGD's factors: Σ n and Σ m over the cells.
    std::uint64_t factor_rows = 0, factor_cols = 0;
};

/// The weight-gradient all-reduces of layer `layer` under `plan` (docs/planner.md, "Gradient
/// synchronisation"). Each node holds a rectangle of the layer's D_i x D_o weight matrix (times
/// the kernel area): Type II cuts split its rows, Type III its columns, Type I none. The
/// rectangles' cut lines divide the matrix into cells; cells held by the same set of two or
/// more nodes form one ReplicaSet. With equal sub-plans this is the usual replica groups (data
/// parallelism: every node, the whole matrix); with unequal ones a node can be in several sets.
/// Sets are in ascending order of their node lists. Empty for a layer without weights.
std::vector<ReplicaSet> weight_replica_sets(const LayerGraph& graph, const Plan& plan, LayerId layer);

}  // namespace fastsim::planner
