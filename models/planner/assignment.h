// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <vector>

#include "common/errors.h"
#include "planner/layer_graph.h"

namespace fastsim::planner {

/// The input asks for a plan that cannot be made (a layer that cannot be split over the
/// nodes, a graph too wide for the exact DP, a plan that fits no node's memory): a user
/// error, reported with the config file.
class PlanError : public UserError {
public:
    using UserError::UserError;
};

/// Cost of choosing an option for each layer at one level of the hierarchy (docs/planner.md,
/// "The dynamic program"): the sum of every layer's own cost and every edge's conversion cost.
/// A layer's options are whatever the planner offers it (a partition type and a share).
struct AssignmentCosts {
    /// One producer edge: cost[from option * to_options + to option].
    struct EdgeCosts {
        std::size_t to_options = 0;
        std::vector<double> cost;
        [[nodiscard]] double at(std::size_t from, std::size_t to) const { return cost[from * to_options + to]; }
    };
    std::vector<std::vector<double>> layer;    ///< per layer, per option; +infinity = not allowed
    std::vector<std::vector<EdgeCosts>> edge;  ///< per layer, one per producer edge, in order
};

struct Assignment {
    std::vector<std::size_t> options;  ///< one per layer
    double cost = 0;
};

/// The cost of one assignment.
double assignment_cost(const LayerGraph& graph, const AssignmentCosts& costs, const std::vector<std::size_t>& options);

/// The most states the exact DP keeps at once (the product of the live layers' option counts).
inline constexpr std::size_t kMaxAssignmentStates = std::size_t{1} << 20;

/// The minimum-cost assignment, exactly, on any layer graph: a dynamic program over the
/// layers in order whose state is the options of the "live" layers (those whose output a later
/// layer still reads), so a shortcut edge sees the option its producer really has. Cost grows
/// as the product of the live layers' option counts (6^3 for the shipped ResNets); PlanError
/// beyond kMaxAssignmentStates, or if no assignment has a finite cost.
Assignment solve_exact(const LayerGraph& graph, const AssignmentCosts& costs);

/// Every assignment (at most 2^22 of them): the reference the dynamic program is tested against.
Assignment solve_brute_force(const LayerGraph& graph, const AssignmentCosts& costs);

}  // namespace fastsim::planner
