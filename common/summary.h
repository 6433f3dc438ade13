// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fastsim {

/// A run's key results: name (with its unit as suffix) and value, in a fixed order. These are
/// summary.json's fields and, for sweeps, results.csv's result columns (docs/sweeps.md).
using Summary = std::vector<std::pair<std::string, double>>;

/// One summary.json field (and a sweep's results.csv column): its name (unit as suffix), its
/// title for people, and its role in the reports. Declared once here: sim/output writes the
/// fields by these names, the sweep and the report page read their titles and roles.
/// Which runs write a summary field.
enum class SummaryScope : std::uint8_t { every_run, node_run, cluster_run };

struct SummaryField {
    std::string_view name;
    std::string_view title;
    bool headline = false;          ///< shown in the report's summary tables, in list order
    bool higher_is_better = false;  ///< efficiency and utilisation: `fastsim explore` minimises, so refuses these
    SummaryScope scope = SummaryScope::every_run;
};

/// The summary fields of fixed name, in headline order first. Counters (node::counter_infos)
/// and energy components (energy_<component>_uj) are named by their own lists.
inline constexpr std::array<SummaryField, 20> kSummaryFields{{
    {"cycles", "cycles", true, false, SummaryScope::node_run},
    {"step_ms", "step (ms)", true, false, SummaryScope::cluster_run},
    {"planned_step_ms", "planned step (ms)", true, false, SummaryScope::cluster_run},
    {"time_ms", "time (ms)", true, false, SummaryScope::node_run},
    {"energy_uj", "energy (µJ)", true},
    {"pj_per_mac", "energy per MAC (pJ)", true},
    {"utilisation_percent", "utilisation (%)", true, true, SummaryScope::node_run},
    {"macs", "MACs", true},
    {"comm_mb_planned", "planned comm (MB)", true, false, SummaryScope::cluster_run},
    {"area_mm2", "area (mm²)", true},
    {"power_w", "average power (W)", true},
    {"tops_per_w", "TOPS/W", true, true},
    {"tops_per_mm2", "TOPS/mm²", true, true},
    {"edp_js", "energy-delay product (J·s)", false},
    {"energy_per_sample_uj", "energy per sample (µJ)", false},
    {"dram_mbit", "DRAM traffic (Mbit)", false, false, SummaryScope::node_run},
    {"energy_total_pj", "energy (pJ)", false, false, SummaryScope::node_run},
    {"nodes", "nodes", false, false, SummaryScope::cluster_run},
    {"run_time_s", "whole run (s)", false},
    {"run_energy_j", "whole run energy (J)", false},
}};

/// The summary fields a run's report.json states too (as total_energy_pj or energy_pj.total,
/// total_seconds or simulated_step_s): a reader checks that the two files describe one run.
inline constexpr std::string_view kEnergyField = "energy_uj";
inline constexpr std::string_view kNodeTimeField = "time_ms";
inline constexpr std::string_view kClusterStepField = "step_ms";

/// The row of `name`, if it has one.
const SummaryField* summary_field(std::string_view name);

/// A flat JSON object {"name": value, ...}, one field per line.
std::string summary_json(const Summary& summary);

}  // namespace fastsim
