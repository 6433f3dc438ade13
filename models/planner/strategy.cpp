// SPDX-License-Identifier: MIT
#include "planner/strategy.h"

namespace fastsim::planner {

std::array<bool, kPartitionTypes> every_type(const PlanLayer& layer) {
    return {true, true, true, layer.spatial_splittable()};
}

}  // namespace fastsim::planner
