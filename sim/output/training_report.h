// SPDX-License-Identifier: MIT
#pragma once

#include <ostream>
#include <string>

#include "config/params.h"
#include "run/provenance.h"
#include "run/training_step.h"

namespace fastsim::output {

/// The terminal report of a training step: a table per layer and phase, then totals with
/// pJ/MAC by component (docs/cli.md, "fastsim run: training_step").
/// How much of a training step the terminal report shows.
enum class StepReportDetail {
    summary,   ///< totals, the three phases, the layer phases that take the most cycles
    per_layer  ///< totals, the three phases, then every layer and phase
};

/// The whole-run block of the terminal report: each precision segment's steps and costs, and
/// the run's totals (printed when workload.steps > 1 or precision.schedule has entries).
void print_whole_run(std::ostream& out, const config::Params& params, const run::WholeRunResult& run);

/// The terminal report of a training step.
void print_training_step(std::ostream& out, const config::Params& params, const run::TrainingStepResult& result,
                         StepReportDetail detail);

/// report.json: run summary (total_cycles, total_energy_pj, ...) and one entry per layer and phase.
std::string training_step_json(const config::Params& params, const run::TrainingStepResult& result,
                               const run::RunProvenance& provenance, const run::WholeRunResult* whole_run = nullptr);

/// layers.csv: one row per layer and phase; every column name carries its unit.
std::string training_step_csv(const config::Params& params, const run::TrainingStepResult& result);

/// Share of PE-cycles that did a chunk pass over the counters' wall cycles on the configured
/// array (fmac::ArrayCounters::utilisation).
double utilisation(const config::Params& params, const node::PhaseCounters& counters);

}  // namespace fastsim::output
