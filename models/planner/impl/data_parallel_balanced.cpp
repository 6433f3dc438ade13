// SPDX-License-Identifier: MIT
// Data parallelism split by measured node speed: Type I everywhere, one batch share per node
// across the whole network. (docs/planner.md, "Planners").
#include "planner/impl/rule_strategy.h"

namespace fastsim::planner {

const Strategy& data_parallel_balanced_strategy() {
    static const RuleStrategy strategy(PlannerKind::data_parallel_balanced, RuleStrategy::batch_only, true, true);
    return strategy;
}

}  // namespace fastsim::planner
