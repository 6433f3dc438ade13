// SPDX-License-Identifier: MIT
// The two kinds of plan (step_plan.h): a hierarchy plan and a stage plan.
#include "planner/step_plan.h"

#include "planner/pipeline.h"

namespace fastsim::planner {
namespace {

/// One hierarchy of groups over every layer of the network, run once a step.
class HierarchyStepPlan final : public StepPlan {
public:
    void describe(const Plan& plan, const LayerGraph& graph, PlanVisitor& visitor) const override {
        visitor.part({graph, plan, 0, plan.groups.front().nodes, std::nullopt});
    }
    std::size_t microbatches(const Plan& /*plan*/) const override { return 1; }
    std::vector<interconnect::NodeProgram> lower(const LayerGraph& graph, const Plan& plan, std::size_t node_count,
                                                 const ComputePicoseconds& compute_ps,
                                                 GradientSync& gradient_sync) const override {
        return build_hierarchy_schedule(graph, plan, node_count, compute_ps, gradient_sync);
    }
    PlanDecisions decisions(const Plan& plan) const override {
        PlanDecisions d;
        d.options = plan.options;
        d.hierarchy = hierarchy_decisions(plan);
        return d;
    }
};

/// Pipeline stages (plan.pipeline), each a hierarchy plan over its layers and nodes, run once
/// per micro-batch.
class StageStepPlan final : public StepPlan {
public:
    void describe(const Plan& plan, const LayerGraph& /*graph*/, PlanVisitor& visitor) const override {
        visitor.pipeline(*plan.pipeline);
        for (std::size_t s = 0; s < plan.pipeline->stages.size(); ++s) {
            const PipelineStage& stage = plan.pipeline->stages[s];
            visitor.part({stage.graph, stage.plan, stage.first_layer, stage.nodes, s});
        }
    }
    std::size_t microbatches(const Plan& plan) const override { return plan.pipeline->microbatches; }
    std::vector<interconnect::NodeProgram> lower(const LayerGraph& /*graph*/, const Plan& plan, std::size_t node_count,
                                                 const ComputePicoseconds& compute_ps,
                                                 GradientSync& gradient_sync) const override {
        return build_pipeline_schedule(plan, node_count, compute_ps, gradient_sync);
    }
    PlanDecisions decisions(const Plan& plan) const override {
        const PipelinePlan& p = *plan.pipeline;
        PipelineDecisions pd;
        pd.schedule = p.schedule;
        pd.microbatches = p.microbatches;
        pd.objective_s = p.objective_s;
        for (const PipelineStage& s : p.stages)
            pd.stages.push_back({s.first_layer, s.end_layer, s.nodes, hierarchy_decisions(s.plan)});
        PlanDecisions d;
        d.options = plan.options;
        d.pipeline = std::move(pd);
        return d;
    }
};

}  // namespace

const StepPlan& step_plan_of(const Plan& plan) {
    static const HierarchyStepPlan kHierarchy;
    static const StageStepPlan kStages;
    if (plan.pipeline) return kStages;
    return kHierarchy;
}

}  // namespace fastsim::planner
