// SPDX-License-Identifier: MIT
#include "output/run_summary.h"

#include "common/units.h"
#include "output/training_report.h"

namespace fastsim::output {
namespace {

constexpr double kMicroPerPico = 1e-6;

void add_energy(Summary& s, const energy::EnergyBreakdown& e) {
    for (const energy::EnergyComponent& c : energy::kEnergyComponents)
        s.emplace_back("energy_" + std::string(c.name) + "_uj", e.*c.pj * kMicroPerPico);
}

}  // namespace

Summary training_step_summary(const config::Params& params, const run::TrainingStepResult& result) {
    const node::PhaseCounters& t = result.total;
    const double macs = static_cast<double>(t.macs);
    const double total_pj = result.total_energy.total_pj();
    Summary s{
        {"cycles", static_cast<double>(t.cycles)},
        {"time_ms", to_seconds(Cycles(t.cycles), params.node.resolved.clock_hz) * 1e3},
        {"macs", macs},
        {"energy_uj", total_pj * kMicroPerPico},
        {"pj_per_mac", macs > 0 ? total_pj / macs : 0.0},
        {"utilisation_percent", 100.0 * utilisation(params, t)},
    };
    for (const node::CyclePart& part : node::kCycleParts)
        s.emplace_back(std::string(node::counter_info(part.member).name), static_cast<double>(t.*part.member));
    s.emplace_back("dram_mbit", static_cast<double>(t.traffic.dram_bits()) * 1e-6);
    add_energy(s, result.total_energy);
    return s;
}

Summary cluster_step_summary(const run::ClusterStepResult& result) {
    double macs = 0;
    for (const run::NodeReport& n : result.nodes) macs += static_cast<double>(n.counters.macs);
    const double total_pj = result.compute_energy.total_pj() + result.link_energy_pj + result.compression_energy_pj;
    Summary s{
        {"step_ms", result.step_s * 1e3},
        {"planned_step_ms", result.planned.plan.step_s * 1e3},
        {"comm_mb_planned", result.planned.plan.comm_bytes * 1e-6},
        {"macs", macs},
        {"energy_uj", total_pj * kMicroPerPico},
        {"pj_per_mac", macs > 0 ? total_pj / macs : 0.0},
    };
    add_energy(s, result.compute_energy);
    s.emplace_back("energy_links_uj", result.link_energy_pj * kMicroPerPico);
    return s;
}

}  // namespace fastsim::output
