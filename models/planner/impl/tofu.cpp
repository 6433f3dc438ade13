// SPDX-License-Identifier: MIT
// Tofu-style recursive cuts: a DP over Types I-IV minimising communication with equal halves. (docs/planner.md, "Planners").
#include "planner/impl/rule_strategy.h"

namespace fastsim::planner {

const Strategy& tofu_strategy() {
    static const RuleStrategy strategy(PlannerKind::tofu, every_type, false, false);
    return strategy;
}

}  // namespace fastsim::planner
