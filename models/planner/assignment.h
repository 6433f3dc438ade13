// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <cstddef>
#include <vector>

#include "common/errors.h"
#include "planner/layer_graph.h"

namespace fastsim::planner {

/// The input asks for a plan that cannot be made (a layer that cannot be split over the
/// nodes, a graph too wide for the exact DP): a user error, reported with the config file.
class PlanError : public UserError {
public:
    using UserError::UserError;
};

/// Cost of choosing a type for each layer at one level of the hierarchy (docs/planner.md,
/// "The dynamic program"): the sum of every layer's own cost and every edge's conversion cost.
struct AssignmentCosts {
    using TypeCosts = std::array<double, kPartitionTypes>;
    using EdgeCosts = std::array<TypeCosts, kPartitionTypes>;  ///< [producer type][consumer type]
    std::vector<TypeCosts> layer;              ///< per layer; +infinity = type not allowed
    std::vector<std::vector<EdgeCosts>> edge;  ///< per layer, one per producer edge, in order
};

struct Assignment {
    std::vector<PartitionType> types;  ///< one per layer
    double cost = 0;
};

/// The cost of one assignment.
double assignment_cost(const LayerGraph& graph, const AssignmentCosts& costs, const std::vector<PartitionType>& types);

/// The minimum-cost assignment, exactly, on any layer graph: a dynamic program over the
/// layers in order whose state is the types of the "live" layers (those whose output a later
/// layer still reads), so a shortcut edge sees the type its producer really has. Cost grows
/// as 3^(live layers): at most 3^3 for the shipped ResNets. Throws std::invalid_argument if more than 10 layers
/// are live at once, or if no assignment has a finite cost.
Assignment solve_exact(const LayerGraph& graph, const AssignmentCosts& costs);

/// Every one of the 3^n assignments (n <= 14): the reference the dynamic program is tested against.
Assignment solve_brute_force(const LayerGraph& graph, const AssignmentCosts& costs);

}  // namespace fastsim::planner
