// SPDX-License-Identifier: MIT
#pragma once

// The hierarchy of two-way cuts that the intra-layer planners plan (docs/planner.md,
// "Hierarchy", "The dynamic program"): a DP per group, top down, under a strategy's rules.

#include <array>
#include <functional>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "planner/plan_decisions.h"
#include "planner/planner.h"

namespace fastsim::planner {

/// How a strategy plans each group of the hierarchy.
struct PartitionRules {
    /// The partition types a layer may take.
    std::function<std::array<bool, kPartitionTypes>(const PlanLayer& layer)> allowed;
    Objective objective = Objective::comm_volume;
    SplitRule split = SplitRule::equal;
    /// Every layer at its group's common share (one batch share per node, network-wide).
    bool one_share = false;

    /// allowed(layer) less what the layer itself cannot take: a grouped convolution keeps its
    /// groups whole, so it takes no channel split (Type II or III).
    [[nodiscard]] std::array<bool, kPartitionTypes> types_for(const PlanLayer& layer) const {
        auto types = allowed(layer);
        if (layer.groups > 1)
            types[static_cast<std::size_t>(PartitionType::in_channels)] =
                types[static_cast<std::size_t>(PartitionType::out_channels)] = false;
        return types;
    }
};

/// The whole hierarchy planned under `rules` (plan.options = `options`): each group's DP top
/// down, then, for balanced splits, up to `calibration_rounds` calibration rounds
/// (docs/planner.md, "A side's time"), and the plan's predictions and footprint. `memory_weight` > 0 adds the memory penalty to
/// every option (docs/planner.md, "Memory"). PlanError as check_batch, or for a layer a group
/// cannot split. A plan whose step would end after `give_up_after_s` seconds may be predicted
/// only that far, its step_s then +infinity (AccPar's bound from the candidates it has).
Plan plan_hierarchy(const PlanningInputs& inputs, const PartitionRules& rules, const PlannerOptions& options,
                    double memory_weight = 0, int calibration_rounds = kRefinementRounds,
                    double give_up_after_s = std::numeric_limits<double>::infinity());

/// plan_hierarchy without calibration rounds and without walking the step: the plan's
/// communication, footprint and memory shortfalls; its step_s NaN, and compute_s, layer_step_s
/// and sync_comm_s empty. For a caller that walks the plan its own way (alpa's block costs walk a micro-batch's
/// forward and backward, never the step with its all-reduces).
Plan plan_hierarchy_unwalked(const PlanningInputs& inputs, const PartitionRules& rules, const PlannerOptions& options);

/// The hierarchy plan `given` makes over in.groups, with its predictions and footprint
/// (plan_decisions.h); PlanError naming `where` and the entry ("groups[2], layer 'conv1'") for a
/// choice the group cannot take. The memory is not checked here.
Plan evaluate_hierarchy(const PlanningInputs& inputs, const HierarchyDecisions& given, const PlannerOptions& options,
                        const std::string& where = "groups");

/// Seconds a set of nodes (`type_counts[t]` nodes of type t) takes for `layer` (id `l`) at
/// `dims`, assuming they share the work in proportion to their speed and each node's share is
/// the largest dimension halved until the halvings cover the nodes (docs/planner.md, "A side's time").
double speed_estimate(const ComputeModel& compute, const std::vector<std::size_t>& type_counts, const PlanLayer& layer,
                      LayerId l, const LayerDims& dims);

/// PlanError if `rules` put some layer on Type I alone and the batch is smaller than the node
/// count: "planner owt splits the batch of layer 'conv1' over every node: batch 1 is smaller
/// than the 16 nodes", the same message from every command.
void check_batch(const LayerGraph& graph, const ClusterView& cluster, const PartitionRules& rules,
                 std::string_view planner);

}  // namespace fastsim::planner
