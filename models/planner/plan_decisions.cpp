// SPDX-License-Identifier: MIT
#include "planner/plan_decisions.h"

#include "planner/hierarchy.h"
#include "planner/pipeline.h"
#include "planner/step_plan.h"

namespace fastsim::planner {

HierarchyDecisions hierarchy_decisions(const Plan& plan) {
    HierarchyDecisions d;
    d.chosen_from = plan.chosen_from;
    d.objective = plan.objective;
    d.split = plan.split;
    d.groups.resize(plan.groups.size());
    for (std::size_t g = 0; g < plan.groups.size(); ++g) {
        if (plan.groups[g].leaf()) continue;
        for (const LayerChoice& c : plan.choices[g]) {
            LayerDecision decision;
            decision.type = c.type;
            decision.split_a = c.split_a;
            decision.compute_a_s = c.compute_a_s;
            decision.compute_b_s = c.compute_b_s;
            d.groups[g].push_back(decision);
        }
    }
    return d;
}

PlanDecisions decisions_of(const Plan& plan) { return step_plan_of(plan).decisions(plan); }

Plan evaluate_plan(const PlanningInputs& inputs, const PlanDecisions& decisions) {
    Plan plan = decisions.pipeline ? evaluate_pipeline(inputs, decisions.options, *decisions.pipeline)
                                   : evaluate_hierarchy(inputs, decisions.hierarchy, decisions.options);
    replay_step(inputs, plan);
    check_fits_in_memory(plan, inputs);
    return plan;
}

}  // namespace fastsim::planner
