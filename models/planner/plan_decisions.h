// SPDX-License-Identifier: MIT
#pragma once

// The plan as an intermediate form (docs/planner.md, "Plans as input"): the decisions a planner
// made, and nothing it derived from them. `fastsim plan` writes them into plan.json; `fastsim run
// --plan` reads them back and evaluate_plan gives the same Plan (volumes, predictions, footprint)
// the planner gave, as Timeloop's model evaluates a mapping whatever produced it.

#include <cstdint>
#include <optional>
#include <vector>

#include "planner/planner.h"

namespace fastsim::planner {

/// One layer's split at one group of the hierarchy.
struct LayerDecision {
    PartitionType type = PartitionType::batch;
    std::uint64_t split_a = 0;  ///< side A's part of the split dimension, 1 .. D - 1; 0: from alpha
    /// Side A's share of the split dimension: split_a = round(alpha x D) when split_a is 0; when
    /// both are given they must agree to within half an element.
    std::optional<double> alpha;
    /// The planner's estimates of each side's compute (seconds); kept when given, else estimated
    /// from the node speeds. They change nothing but plan.csv's compute_a_s and compute_b_s.
    std::optional<double> compute_a_s, compute_b_s;
};

/// Where a group sits in the hierarchy, as a plan file records it (each checked when given).
struct GroupShape {
    std::optional<std::size_t> depth, side_a, side_b;
};

/// A hierarchy plan: per group of bisect's hierarchy (an empty list for a leaf), per layer.
struct HierarchyDecisions {
    PlannerKind chosen_from = PlannerKind::accpar;  ///< whose rules made the choices (a label)
    Objective objective = Objective::time;          ///< what they minimised (a label)
    SplitRule split = SplitRule::balanced;          ///< how they split (a label)
    std::vector<std::vector<LayerDecision>> groups;
    /// Per group, its node ids, checked against bisect's groups when given (empty: not given).
    std::vector<std::vector<std::size_t>> group_nodes;
    /// Per group, its depth and children, checked against bisect's groups when given (may be empty).
    std::vector<GroupShape> group_shapes;
};

/// One pipeline stage: layers [first_layer, end_layer) on `nodes` (node ids, a consecutive run
/// of the cluster's topology order), split among them by `intra`.
struct StageDecisions {
    std::size_t first_layer = 0, end_layer = 0;
    std::vector<std::size_t> nodes;
    HierarchyDecisions intra;
};

struct PipelineDecisions {
    PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
    std::size_t microbatches = 1;
    double objective_s = 0;                           ///< alpa's search objective, reported as made (0: none)
    PlannerKind chosen_from = PlannerKind::pipeline;  ///< whose plan it is (a label: accpar may keep pipeline's)
    std::vector<StageDecisions> stages;
};

/// A whole plan's decisions. `options` are those it was planned with (options.kind names the
/// planner; comm_only sets the element widths the volumes are counted in).
struct PlanDecisions {
    PlannerOptions options;
    HierarchyDecisions hierarchy;               ///< a hierarchy plan's (unused for a pipeline plan)
    std::optional<PipelineDecisions> pipeline;  ///< a pipeline plan's stages
};

/// The decisions `plan` made.
PlanDecisions decisions_of(const Plan& plan);

/// The plan `decisions` describe, evaluated as the planner evaluates its own: the same choices,
/// volumes, predictions and footprint that make_plan gave for the plan they came from.
/// PlanError naming the entry (as plan.json spells it: "groups[2], layer 'conv1'", "pipeline.
/// stages[1]") when they do not fit `inputs` (group count, a split out of range, stages that do
/// not cover every layer and node once, in order), or when the plan does not fit in memory.
Plan evaluate_plan(const PlanningInputs& inputs, const PlanDecisions& decisions);

}  // namespace fastsim::planner
