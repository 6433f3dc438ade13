// SPDX-License-Identifier: MIT
#pragma once

// What tensors take on the wire and in DRAM, per node type (docs/planner.md, "Memory").

#include <memory>
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

/// Each node's own widths and converter speed (per node id; `node_type` per id): its
/// activations' and gradients' mantissa bits, and 1 / (lanes x arrays) cycles per value converted
/// plus the pipeline's fill latency, at its clock (docs/planner.md, "Element widths").
std::vector<planner::NodeFormat> node_formats(const std::vector<NodeType>& types,
                                              const std::vector<std::size_t>& node_type);

/// Fills x.into_a and x.into_b for the cut between node lists `side_a` and `side_b`: each side
/// sends its boundary tensors (F at its activations' width, E at its gradients') in its widest
/// node type's format, or AccPar's 2 bytes with comm_only (then nothing converts); `nodes`
/// (node_formats, shared by every cut) says which receivers convert and how fast, and is kept
/// only in the formats some receiver converts.
void set_boundary_formats(planner::ExchangeCost& x,
                          const std::shared_ptr<const std::vector<planner::NodeFormat>>& nodes, const BfpStorage& bfp,
                          bool comm_only, const std::vector<std::size_t>& side_a,
                          const std::vector<std::size_t>& side_b);

/// The memory side of the cluster for the planner: each node type's `dram_capacity_gib`, its
/// BFP storage of weights, activations and gradients (the FAST layout, node.md), fp32 weight
/// gradients and optimiser state, and `optimizer_copies` copies of that state.
planner::MemoryModel memory_model(const std::vector<NodeType>& types, const BfpStorage& bfp, int optimizer_copies);

}  // namespace fastsim::costs
