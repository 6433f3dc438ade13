// SPDX-License-Identifier: MIT
#include "planner/plan_view.h"

#include "planner/step_plan.h"

namespace fastsim::planner {

void describe(const Plan& plan, const LayerGraph& graph, PlanVisitor& visitor) {
    step_plan_of(plan).describe(plan, graph, visitor);
}

void for_each_part(const Plan& plan, const LayerGraph& graph, const std::function<void(const PlanPart&)>& on_part) {
    struct Parts : PlanVisitor {
        const std::function<void(const PlanPart&)>& on;
        explicit Parts(const std::function<void(const PlanPart&)>& f) : on(f) {}
        void part(const PlanPart& p) override { on(p); }
    } parts(on_part);
    describe(plan, graph, parts);
}

std::size_t microbatches(const Plan& plan) { return step_plan_of(plan).microbatches(plan); }

}  // namespace fastsim::planner
