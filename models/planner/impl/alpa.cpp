// SPDX-License-Identifier: MIT
// `alpa`: Alpa's inter-operator DP over layer ranges x sub-meshes, an intra-layer planner inside each stage (docs/pipeline.md).
#include "planner/impl/pipeline_strategy.h"

namespace fastsim::planner {

const Strategy& alpa_strategy() {
    static const PipelineStrategy strategy(PlannerKind::alpa, plan_alpa);
    return strategy;
}

}  // namespace fastsim::planner
