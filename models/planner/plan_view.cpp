// SPDX-License-Identifier: MIT
#include "planner/plan_view.h"

namespace fastsim::planner {

void describe(const Plan& plan, const LayerGraph& graph, PlanVisitor& visitor) {
    if (!plan.pipeline) {
        visitor.part({graph, plan, 0, plan.groups.front().nodes, std::nullopt});
        return;
    }
    visitor.pipeline(*plan.pipeline);
    for (std::size_t s = 0; s < plan.pipeline->stages.size(); ++s) {
        const PipelineStage& stage = plan.pipeline->stages[s];
        visitor.part({stage.graph, stage.plan, stage.first_layer, stage.nodes, s});
    }
}

void for_each_part(const Plan& plan, const LayerGraph& graph, const std::function<void(const PlanPart&)>& on_part) {
    struct Parts : PlanVisitor {
        const std::function<void(const PlanPart&)>& on;
        explicit Parts(const std::function<void(const PlanPart&)>& f) : on(f) {}
        void part(const PlanPart& p) override { on(p); }
    } parts(on_part);
    describe(plan, graph, parts);
}

std::size_t microbatches(const Plan& plan) { return plan.pipeline ? plan.pipeline->microbatches : 1; }

}  // namespace fastsim::planner
