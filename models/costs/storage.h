// SPDX-License-Identifier: MIT
#pragma once

// What tensors take on the wire and in DRAM, per node type (docs/planner.md, "Memory").

#include <vector>

#include "costs/node_type.h"
#include "planner/planner.h"

namespace fastsim::costs {

/// The run's BFP storage format: values per shared exponent and the exponent's bits.
struct BfpStorage {
    int group_size = 16;
    int exponent_bits = 8;
};

/// Bytes per element crossing a link: BFP storage width of the widest node type (or 2 bytes
/// for every tensor with comm_only, AccPar's bf16 accounting); partial and weight-gradient sums fp32.
planner::ElementBytes element_bytes(const std::vector<NodeType>& types, const BfpStorage& bfp, bool comm_only);

/// The memory side of the cluster for the planner: each node type's `dram_capacity_gib`, its
/// BFP storage of weights, activations and gradients (the FAST layout, node.md), fp32 weight
/// gradients and optimiser state, and `optimizer_copies` copies of that state.
planner::MemoryModel memory_model(const std::vector<NodeType>& types, const BfpStorage& bfp, int optimizer_copies);

}  // namespace fastsim::costs
