// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "common/json_writer.h"
#include "common/summary.h"
#include "config/params.h"
#include "run/cluster_step.h"
#include "run/provenance.h"
#include "run/training_step.h"

namespace fastsim::output {

/// What a paper quotes of a step: average power, efficiency and energy-delay product, and, when
/// the area is known, area and throughput per mm². An op is half a MAC (TOPS = 2 x MACs / s / 1e12).
struct Efficiency {
    double power_w = 0;                  ///< step energy / step time
    double tops_per_w = 0;               ///< 2 x MACs / energy in J / 1e12
    double edp_js = 0;                   ///< step energy (J) x step time (s)
    double energy_per_sample_uj = 0;     ///< step energy / batch
    std::optional<double> area;          ///< mm²
    std::optional<double> tops_per_mm2;  ///< 2 x MACs / step time / 1e12 / area
};
Efficiency efficiency(double macs, double seconds, double energy_pj, std::uint64_t batch, std::optional<double> area);

/// The summary fields of a node's area: the total, then area_<component>_mm2.
Summary area_summary(const energy::AreaBreakdown& area);

/// A training step's summary fields (kSummaryFields: cycles, time, MACs, energy, energy per MAC,
/// utilisation), then the cycle breakdown (node::kCycleParts), the DRAM traffic and
/// energy_<component>_uj, then the efficiency and, when the energy table has an area section,
/// the area fields (add_efficiency).
/// The whole run's time and energy follow (run_time_s, run_energy_j): `whole_run`'s, or, when
/// it is null (the run has one precision), workload.steps times the step's.
Summary training_step_summary(const config::Params& params, const run::TrainingStepResult& result,
                              const run::WholeRunResult* whole_run = nullptr);
/// The terminal's `area:` line (total at the process node, `whose` after it, e.g. " over 4
/// nodes", then each component, then `not_counted` in parentheses; or `area: unknown` naming the
/// table) and its `power:` line.
void print_area_and_power(std::ostream& out, const std::optional<energy::AreaBreakdown>& area,
                          std::optional<double> process_nm, const energy::EnergyTable& table, const std::string& whose,
                          const std::string& not_counted, const Efficiency& f);
/// report.json's area (total, by component, and the process node it is at, from `table`'s area
/// section unless `process_nm` is given; nulls when unknown) and the efficiency of `f`, as every
/// run's report.json writes them (docs/cli.md).
void write_area_and_efficiency(JsonWriter& j, const std::optional<energy::AreaBreakdown>& area,
                               std::optional<double> process_nm, const energy::EnergyTable& table, const Efficiency& f);
/// Appends the efficiency fields of `f` and, when `area` is known, the area's (total, then each
/// component's) to a summary.
void add_efficiency(Summary& s, const Efficiency& f, const std::optional<energy::AreaBreakdown>& area);
/// A cluster step's efficiency: every node's MACs and the step's energy (nodes, links,
/// compression) over the simulated step, on the cluster's area.
Efficiency cluster_efficiency(const config::Params& params, const run::ClusterStepResult& result,
                              const std::optional<energy::AreaBreakdown>& area);
/// A cluster step's summary fields (kSummaryFields: simulated and planned step, planned
/// communication, MACs, energy, energy per MAC), then energy_<component>_uj including links, the
/// node count `nodes`, the efficiency fields (add_efficiency) over every node's area, and the
/// whole run's time and energy (workload.steps steps).
Summary cluster_step_summary(const config::Params& params, const run::ClusterStepResult& result);

/// The files of a `run --out` folder, by name, in the order they are written.
using RunFiles = std::vector<std::pair<std::string, std::string>>;
/// A node run's: report.json (with the whole run when given), layers.csv, summary.json, config.yaml.
RunFiles training_step_files(const config::Params& params, const run::TrainingStepResult& result,
                             const run::RunProvenance& made_by, const run::WholeRunResult* whole_run);
/// A cluster run's: report.json, layers.csv, nodes.csv, plan.json, plan.csv, summary.json, config.yaml.
RunFiles cluster_step_files(const config::Params& params, const run::ClusterStepResult& result,
                            const run::RunProvenance& made_by);

}  // namespace fastsim::output
