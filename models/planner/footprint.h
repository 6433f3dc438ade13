// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "planner/layer_graph.h"

namespace fastsim::planner {

struct Plan;

/// What a node stores, by tensor class (docs/planner.md, "Memory").
enum class Stored : std::uint8_t { weights, weight_gradients, optimizer_state, activations, gradients };

/// The memory side of the cluster as the planner sees it.
struct MemoryModel {
    /// Bytes of `elements` values of `what` in node type `type`'s storage format (empty: no
    /// memory is counted).
    std::function<double(std::size_t type, Stored what, std::uint64_t elements)> bytes;
    std::vector<double> capacity_bytes;  ///< per node type; 0 = not checked
    int optimizer_copies = 1;            ///< optimiser-state values kept per weight (momentum 1, Adam 2)
};

/// One node's peak footprint under a plan, term by term, in bytes.
struct Footprint {
    double weights = 0;              ///< its share of every layer's weights
    double weight_gradients = 0;     ///< the same elements, as the weight-gradient phase writes them
    double optimizer_state = 0;      ///< optimizer_copies values per weight element
    double stashed_activations = 0;  ///< every layer's input share, kept from forward for backward
    double buffers = 0;              ///< the largest layer's output, output error and input error at once
    [[nodiscard]] double total() const {
        return weights + weight_gradients + optimizer_state + stashed_activations + buffers;
    }
};

/// Every node's footprint under `plan`, from its dims (Plan::node_dims) of every layer (all
/// zero for a model without `bytes`, and for the nodes the plan does not use), by node id.
std::vector<Footprint> plan_footprint(const LayerGraph& graph, const Plan& plan,
                                      const std::vector<std::size_t>& node_type, const MemoryModel& memory);

/// The node whose footprint exceeds its type's capacity by the most, if any.
struct MemoryShortfall {
    std::size_t node = 0;
    double footprint_bytes = 0, capacity_bytes = 0;
};
std::vector<MemoryShortfall> memory_shortfalls(const std::vector<Footprint>& footprint,
                                               const std::vector<std::size_t>& node_type, const MemoryModel& memory);

}  // namespace fastsim::planner
