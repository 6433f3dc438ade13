// SPDX-License-Identifier: MIT
#include "output/run_summary.h"

#include <stdexcept>

#include "common/json_writer.h"
#include "common/output_files.h"
#include "common/units.h"
#include "config/load.h"
#include "output/cluster_report.h"
#include "output/table.h"
#include "output/training_report.h"

namespace fastsim::output {
namespace {

constexpr double kMicroPerPico = 1e-6;

void add_energy(Summary& s, const energy::EnergyBreakdown& e) {
    for (const energy::EnergyComponent& c : energy::kEnergyComponents)
        s.emplace_back("energy_" + std::string(c.name) + "_uj", e.*c.pj * kMicroPerPico);
}

}  // namespace

Efficiency efficiency(double macs, double seconds, double energy_pj, std::uint64_t batch, std::optional<double> area) {
    const double joules = energy_pj * 1e-12, tera_ops = 2 * macs * 1e-12;
    Efficiency e;
    e.power_w = seconds > 0 ? joules / seconds : 0;
    e.tops_per_w = joules > 0 ? tera_ops / joules : 0;
    e.edp_js = joules * seconds;
    e.energy_per_sample_uj = batch > 0 ? energy_pj * kMicroPerPico / static_cast<double>(batch) : 0;
    e.area = area;
    if (area && *area > 0 && seconds > 0) e.tops_per_mm2 = tera_ops / seconds / *area;
    return e;
}

Summary area_summary(const energy::AreaBreakdown& area) {
    Summary s{{"area_mm2", area.total_mm2()}};
    for (const energy::AreaComponent& c : energy::kAreaComponents)
        s.emplace_back("area_" + std::string(c.name) + "_mm2", area.*c.mm2);
    return s;
}

void add_efficiency(Summary& s, const Efficiency& f, const std::optional<energy::AreaBreakdown>& area) {
    s.emplace_back("power_w", f.power_w);
    s.emplace_back("tops_per_w", f.tops_per_w);
    s.emplace_back("edp_js", f.edp_js);
    s.emplace_back("energy_per_sample_uj", f.energy_per_sample_uj);
    if (area) {
        const Summary parts = area_summary(*area);
        s.push_back(parts.front());
        s.emplace_back("tops_per_mm2", f.tops_per_mm2.value_or(0.0));
        s.insert(s.end(), parts.begin() + 1, parts.end());
    }
}

void write_area_and_efficiency(JsonWriter& j, const std::optional<energy::AreaBreakdown>& area,
                               std::optional<double> process_nm, const energy::EnergyTable& table,
                               const Efficiency& f) {
    if (area && table.area) {
        j.key("total_area_mm2").number(area->total_mm2()).key("area_mm2").begin_object();
        for (const energy::AreaComponent& c : energy::kAreaComponents) j.key(c.name).number((*area).*c.mm2);
        j.end_object();
        j.key("area_process_nm").number(process_nm.value_or(table.area->process_nm));
    } else {
        j.key("total_area_mm2").null().key("area_mm2").null();
    }
    j.key("power_w").number(f.power_w).key("tops_per_w").number(f.tops_per_w);
    if (f.tops_per_mm2)
        j.key("tops_per_mm2").number(*f.tops_per_mm2);
    else
        j.key("tops_per_mm2").null();
    j.key("edp_js").number(f.edp_js).key("energy_per_sample_uj").number(f.energy_per_sample_uj);
}

void print_area_and_power(std::ostream& out, const std::optional<energy::AreaBreakdown>& area,
                          std::optional<double> process_nm, const energy::EnergyTable& table, const std::string& whose,
                          const std::string& not_counted, const Efficiency& f) {
    if (area && table.area) {
        out << "area: " << Table::fixed(area->total_mm2(), 3) << " mm2 at "
            << process_nm.value_or(table.area->process_nm) << " nm" << whose;
        for (const energy::AreaComponent& c : energy::kAreaComponents)
            out << (c.mm2 == energy::kAreaComponents.front().mm2 ? " = " : " + ") << c.name << " "
                << Table::fixed((*area).*c.mm2, 3);
        out << " (" << not_counted << " not counted)\n";
    } else {
        out << "area: unknown (energy table " << table.name << " has no area section)\n";
    }
    out << "power: " << Table::fixed(f.power_w, 3) << " W average, " << Table::fixed(f.tops_per_w, 3) << " TOPS/W";
    if (f.tops_per_mm2) out << ", " << Table::fixed(*f.tops_per_mm2, 4) << " TOPS/mm2";
    out << ", EDP " << format_number(f.edp_js) << " J*s per step\n";
}

/// The whole run's fields: its time in s and its energy in J.
void add_whole_run(Summary& s, double seconds, double energy_pj) {
    s.emplace_back("run_time_s", seconds);
    s.emplace_back("run_energy_j", energy_pj * 1e-12);
}

Summary training_step_summary(const config::Params& params, const run::TrainingStepResult& result,
                              const run::WholeRunResult* whole_run) {
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
    const std::optional<energy::AreaBreakdown> area = run::node_area(params);
    const Efficiency f =
        efficiency(macs, to_seconds(Cycles(t.cycles), params.node.resolved.clock_hz), total_pj, params.workload.batch,
                   area ? std::optional<double>(area->total_mm2()) : std::nullopt);
    add_efficiency(s, f, area);
    if (whole_run) {
        add_whole_run(s, to_seconds(Cycles(whole_run->total_cycles), params.node.resolved.clock_hz),
                      whole_run->total_energy_pj);
    } else {
        if (params.precision.segments.size() > 1)
            throw std::logic_error("training_step_summary: a run of several precisions needs its whole run");
        const auto steps = static_cast<double>(params.workload.steps);
        add_whole_run(s, to_seconds(Cycles(t.cycles), params.node.resolved.clock_hz) * steps, total_pj * steps);
    }
    return s;
}

Efficiency cluster_efficiency(const config::Params& params, const run::ClusterStepResult& result,
                              const std::optional<energy::AreaBreakdown>& area) {
    double macs = 0;
    for (const run::NodeReport& n : result.nodes) macs += static_cast<double>(n.counters.macs);
    const double total_pj = result.compute_energy.total_pj() + result.link_energy_pj + result.compression_energy_pj;
    return efficiency(macs, result.step_s, total_pj, params.workload.batch,
                      area ? std::optional<double>(area->total_mm2()) : std::nullopt);
}

Summary cluster_step_summary(const config::Params& params, const run::ClusterStepResult& result) {
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
    s.emplace_back("nodes", static_cast<double>(result.nodes.size()));
    const std::optional<energy::AreaBreakdown> area = run::cluster_area(params);
    add_efficiency(s, cluster_efficiency(params, result, area), area);
    const auto steps = static_cast<double>(params.workload.steps);
    add_whole_run(s, result.step_s * steps, total_pj * steps);
    return s;
}

RunFiles training_step_files(const config::Params& params, const run::TrainingStepResult& result,
                             const run::RunProvenance& made_by, const run::WholeRunResult* whole_run) {
    return {{"report.json", training_step_json(params, result, made_by, whole_run)},
            {"layers.csv", training_step_csv(params, result)},
            {"summary.json", summary_json(training_step_summary(params, result, whole_run))},
            {"config.yaml", config::dump(params)}};
}

RunFiles cluster_step_files(const config::Params& params, const run::ClusterStepResult& result,
                            const run::RunProvenance& made_by) {
    return {{"report.json", cluster_step_json(params, result, made_by)},
            {"layers.csv", cluster_layers_csv(params, result)},
            {"nodes.csv", cluster_nodes_csv(params, result)},
            {"plan.json", plan_json(params, result.planned, &result.all_reduces)},
            {"plan.csv", plan_csv(params, result.planned)},
            {"summary.json", summary_json(cluster_step_summary(params, result))},
            {"config.yaml", config::dump(params)}};
}

}  // namespace fastsim::output
