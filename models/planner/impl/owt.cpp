// SPDX-License-Identifier: MIT
// "One weird trick" (Krizhevsky 2014): convolutions Type I, every other layer Type II. (docs/planner.md, "Planners").
#include "planner/impl/rule_strategy.h"

namespace fastsim::planner {

const Strategy& owt_strategy() {
    static const RuleStrategy strategy(
        PlannerKind::owt,
        [](const PlanLayer& l) {
            return l.layer.kind == workload::LayerKind::conv ? RuleStrategy::Allowed{true, false, false, false}
                                                             : RuleStrategy::Allowed{false, true, false, false};
        },
        false, false);
    return strategy;
}

}  // namespace fastsim::planner
