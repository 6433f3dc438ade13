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

/// Gradient buckets as PyTorch DDP fills them (docs/compression.md, "Gradient buckets"): each
/// gradient joins, in the order it becomes ready (the backward order), the open bucket of its
/// replica set (the same nodes); a bucket is synchronised as one message once it holds at least
/// `cap_bytes`, and the buckets still open at the end of the backward pass then. Merged
/// gradients add their elements and PowerSGD's matrix sides (Σ n, Σ m), as a DDP communication
/// hook sees a bucket. A cap of 0 synchronises every gradient on its own.
class GradientBuckets {
public:
    /// `bytes_per_element`: the width a gradient is synchronised at (uncompressed).
    GradientBuckets(std::uint64_t cap_bytes, double bytes_per_element);
    /// Adds one layer's gradients (its replica sets); returns the buckets they fill, in the
    /// order they were opened (the gradients themselves when the cap is 0).
    std::vector<ReplicaSet> add(const std::vector<ReplicaSet>& gradients);
    /// Every bucket still open, in the order they were opened; none is open afterwards.
    std::vector<ReplicaSet> flush();

private:
    [[nodiscard]] bool full(const ReplicaSet& bucket) const;

    std::uint64_t m_cap_bytes;
    double m_bytes_per_element;
    std::vector<ReplicaSet> m_open;
};

}  // namespace fastsim::planner
