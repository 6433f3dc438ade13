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

/// cycles, time_ms, macs, energy_uj, pj_per_mac, utilisation_percent, the cycle breakdown
/// (node::kCycleParts), dram_mbit and energy_<component>_uj.
Summary training_step_summary(const config::Params& params, const run::TrainingStepResult& result);
/// step_ms (simulated), planned_step_ms, comm_mb_planned, macs, energy_uj, pj_per_mac and
/// energy_<component>_uj including links.
Summary cluster_step_summary(const run::ClusterStepResult& result);

}  // namespace fastsim::output
