// SPDX-License-Identifier: MIT
// The two kinds of plan (step_plan.h): a hierarchy plan and a stage plan.
#include "planner/step_plan.h"

#include "planner/pipeline.h"

namespace fastsim::planner {
namespace {

/// The synchronisations a walked step asks for; nothing else.
class SyncCollector final : public StepVisitor {
public:
    SyncCollector(const Plan& plan, std::vector<SyncJob>& out) : m_plan(plan), m_out(out) {}
    void exchange(std::size_t /*group*/, const SideVolumes& /*bytes*/, const StepTag& /*tag*/,
                  ExchangeTensor /*tensor*/) override {}
    void compute(std::size_t /*phase*/, const StepTag& /*tag*/) override {}
    void all_reduce(const std::vector<ReplicaSet>& sets, const StepTag& /*tag*/) override {
        for (const ReplicaSet& set : sets) m_out.push_back(sync_job(m_plan, set));
    }

private:
    const Plan& m_plan;
    std::vector<SyncJob>& m_out;
};

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
    std::vector<SyncJob> sync_jobs(const LayerGraph& graph, const Plan& plan,
                                   std::uint64_t bucket_bytes) const override {
        std::vector<SyncJob> jobs;
        SyncCollector collector(plan, jobs);
        StepWalk walk;
        walk.bucket_bytes = bucket_bytes;
        walk_step(graph, plan, collector, walk);
        return jobs;
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
    std::vector<SyncJob> sync_jobs(const LayerGraph& graph, const Plan& plan,
                                   std::uint64_t bucket_bytes) const override {
        std::vector<SyncJob> jobs;
        for (const PipelineStage& stage : plan.pipeline->stages) {
            SyncCollector collector(stage.plan, jobs);
            StepWalk walk;  // the backward pass, whose last micro-batch synchronises
            walk.forward = false;
            walk.bucket_bytes = bucket_bytes;
            walk.first_layer = stage.first_layer;
            walk.network_layers = graph.layers.size();
            walk_step(stage.graph, stage.plan, collector, walk);
        }
        return jobs;
    }
    PlanDecisions decisions(const Plan& plan) const override {
        const PipelinePlan& p = *plan.pipeline;
        PipelineDecisions pd;
        pd.schedule = p.schedule;
        pd.microbatches = p.microbatches;
        pd.objective_s = p.objective_s;
        pd.chosen_from = plan.chosen_from;
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
