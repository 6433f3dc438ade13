// SPDX-License-Identifier: MIT
// Data parallelism as the papers count it: Type I everywhere, the batch split by node count. (docs/planner.md, "Planners").
#include "planner/impl/rule_strategy.h"

namespace fastsim::planner {

const Strategy& data_parallel_strategy() {
    static const RuleStrategy strategy(PlannerKind::data_parallel, RuleStrategy::batch_only, false, false);
    return strategy;
}

}  // namespace fastsim::planner
