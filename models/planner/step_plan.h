// SPDX-License-Identifier: MIT
#pragma once

// What a plan does with the step it plans, whatever its kind (docs/planner.md, "Plans as
// input"): a hierarchy plan (one hierarchy of groups over every layer) and a stage plan (pipeline
// stages, each a hierarchy plan over its layers) are its two implementations. Lowering, the
// writers and the plan file reach a plan only through it (plan_view.h, schedule.h,
// plan_decisions.h), so a new kind of plan is one new implementation and no branch elsewhere.

#include <cstddef>
#include <vector>

#include "interconnect/program.h"
#include "planner/plan_decisions.h"
#include "planner/plan_view.h"
#include "planner/schedule.h"

namespace fastsim::planner {

class StepPlan {
public:
    virtual ~StepPlan() = default;
    /// Walks `plan`, made over `graph` (the whole network), for a writer (PlanVisitor's order).
    virtual void describe(const Plan& plan, const LayerGraph& graph, PlanVisitor& visitor) const = 0;
    /// How many times each node runs its layers in one step.
    [[nodiscard]] virtual std::size_t microbatches(const Plan& plan) const = 0;
    /// The step as one program per node (compute and comm streams).
    [[nodiscard]] virtual std::vector<interconnect::NodeProgram> lower(const LayerGraph& graph, const Plan& plan,
                                                                       std::size_t node_count,
                                                                       const ComputePicoseconds& compute_ps,
                                                                       GradientSync& gradient_sync) const = 0;
    /// Every replica set's gradient synchronisation in one step, in the order lower() asks
    /// `gradient_sync` for them (a pipeline's once per step, stage by stage).
    [[nodiscard]] virtual std::vector<SyncJob> sync_jobs(const LayerGraph& graph, const Plan& plan,
                                                         std::uint64_t bucket_bytes) const = 0;
    /// What plan.json records: the decisions evaluate_plan turns back into this plan.
    [[nodiscard]] virtual PlanDecisions decisions(const Plan& plan) const = 0;
};

/// The implementation `plan` is made by (the one place that tells the kinds apart).
const StepPlan& step_plan_of(const Plan& plan);

/// A hierarchy plan's decisions (a stage's too).
HierarchyDecisions hierarchy_decisions(const Plan& plan);
/// A hierarchy plan's step as one program per node (ScheduleBuilder over walk_step).
std::vector<interconnect::NodeProgram> build_hierarchy_schedule(const LayerGraph& graph, const Plan& plan,
                                                                std::size_t node_count,
                                                                const ComputePicoseconds& compute_ps,
                                                                GradientSync& gradient_sync);

}  // namespace fastsim::planner
