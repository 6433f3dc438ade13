// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "config/params.h"
#include "run/cluster_step.h"
#include "run/training_step.h"

namespace fastsim::report {

/// A run's key results: name (with its unit as suffix) and value, in a fixed order. These are
/// summary.json's fields and, for sweeps, results.csv's result columns (docs/sweeps.md).
using Summary = std::vector<std::pair<std::string, double>>;

/// cycles, time_ms, macs, energy_uj, pj_per_mac, utilisation_percent, the cycle breakdown and
/// energy_<component>_uj.
Summary training_step_summary(const config::Params& params, const run::TrainingStepResult& result);
/// step_ms (simulated), planned_step_ms, comm_mb_planned, macs, energy_uj, pj_per_mac and
/// energy_<component>_uj including links.
Summary cluster_step_summary(const run::ClusterStepResult& result);

/// A flat JSON object {"name": value, ...}, one field per line.
std::string summary_json(const Summary& summary);

}  // namespace fastsim::report
