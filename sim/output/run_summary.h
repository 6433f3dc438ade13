// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "common/summary.h"
#include "config/params.h"
#include "run/cluster_step.h"
#include "run/training_step.h"

namespace fastsim::output {

/// A training step's summary fields (kSummaryFields: cycles, time, MACs, energy, energy per MAC,
/// utilisation), then the cycle breakdown (node::kCycleParts), the DRAM traffic and
/// energy_<component>_uj.
Summary training_step_summary(const config::Params& params, const run::TrainingStepResult& result);
/// A cluster step's summary fields (kSummaryFields: simulated and planned step, planned
/// communication, MACs, energy, energy per MAC), then energy_<component>_uj including links.
Summary cluster_step_summary(const run::ClusterStepResult& result);

}  // namespace fastsim::output
