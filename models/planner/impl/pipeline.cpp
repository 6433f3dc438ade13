// SPDX-License-Identifier: MIT
// `pipeline`: pipeline stages as planner.pipeline gives them, each planned by its intra-layer planner (docs/pipeline.md).
#include "planner/impl/pipeline_strategy.h"

namespace fastsim::planner {

const Strategy& pipeline_strategy() {
    static const PipelineStrategy strategy(PlannerKind::pipeline, plan_given_stages);
    return strategy;
}

}  // namespace fastsim::planner
