// SPDX-License-Identifier: MIT
// HyPar: a DP over Types I and II minimising communication, equal splits. (docs/planner.md, "Planners").
#include "planner/impl/rule_strategy.h"

namespace fastsim::planner {

const Strategy& hypar_strategy() {
    static const RuleStrategy strategy(
        PlannerKind::hypar,
        [](const PlanLayer&) {
            return RuleStrategy::Allowed{true, true, false, false};
        },
        false, false);
    return strategy;
}

}  // namespace fastsim::planner
