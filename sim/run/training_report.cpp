// SPDX-License-Identifier: MIT
#include "run/training_report.h"

#include <iterator>
#include <sstream>

#include "common/output_files.h"
#include "common/units.h"
#include "run/table.h"

namespace fastsim::run {
namespace {

const std::string& layer_name(const config::Params& params, const PhaseResult& r) {
    return params.workload.network.layers[r.step.layer].name;
}

double micro(double pj) { return pj * 1e-6; }

/// The CSV / JSON fields of one phase, in order: name, value. After the job come the work
/// counters, utilisation_percent, the action counters (node::counter_values, those shown), then energy.
std::vector<std::pair<std::string, std::string>> phase_fields(const config::Params& params, const PhaseResult& r) {
    const node::PhaseCounters& c = r.counters;
    const node::PhaseJob& j = r.step.job;
    const auto u = [](std::uint64_t v) { return std::to_string(v); };
    std::vector<std::pair<std::string, std::string>> fields{
        {"layer", json_string(layer_name(params, r))},
        {"phase", json_string(fmac::to_string(r.step.phase))},
        {"gemm_count", u(r.step.count)},
        {"m", u(j.shape.m)},
        {"k", u(j.shape.k)},
        {"n", u(j.shape.n)},
        {"x_mantissa_bits", std::to_string(j.x_mantissa_bits)},
        {"y_mantissa_bits", std::to_string(j.y_mantissa_bits)},
        {"passes_per_group", std::to_string(fmac::passes_per_group(j.x_mantissa_bits, j.y_mantissa_bits))},
    };
    const std::vector<node::CounterValue> counters = node::counter_values(c);
    const auto add_counters = [&](CounterKind kind) {
        for (const node::CounterValue& v : counters)
            if (v.info.kind == kind && v.info.show != CounterShow::hidden) fields.emplace_back(v.info.name, u(v.value));
    };
    add_counters(CounterKind::work);
    fields.emplace_back("utilisation_percent", format_number(100.0 * utilisation(params, c)));
    add_counters(CounterKind::action);
    fields.insert(fields.end(), {
        {"energy_fmac_pj", format_number(r.energy.fmac_pj)},
        {"energy_converter_pj", format_number(r.energy.converter_pj)},
        {"energy_sram_pj", format_number(r.energy.sram_pj)},
        {"energy_dram_pj", format_number(r.energy.dram_pj)},
        {"energy_leakage_pj", format_number(r.energy.leakage_pj)},
        {"energy_total_pj", format_number(r.energy.total_pj())},
    });
    return fields;
}

std::string energy_json(const energy::EnergyBreakdown& e) {
    return "{\"fmac\": " + format_number(e.fmac_pj) + ", \"converter\": " + format_number(e.converter_pj) + ", \"sram\": " +
           format_number(e.sram_pj) + ", \"dram\": " + format_number(e.dram_pj) + ", \"leakage\": " + format_number(e.leakage_pj) + "}";
}

}  // namespace

double utilisation(const config::Params& params, const node::PhaseCounters& c) {
    return c.array.utilisation(c.cycles, params.node.resolved.array);
}

void print_training_step(std::ostream& out, const config::Params& params, const TrainingStepResult& result) {
    const node::NodeParams& n = params.node.resolved;
    out << "Training step of " << params.workload.network.name << " (batch " << params.workload.batch << ") on a "
        << n.array.rows << "x" << n.array.cols << " FAST node, g=" << n.array.group_size << ", "
        << params.node.clock_mhz << " MHz, fidelity " << config::to_string(params.run.fidelity) << ", energy table "
        << params.energy.resolved.name << "\n\n";
    Table table({"layer", "phase", "m x k x n", "bits_x/y", "macs_M", "cycles", "array_cycles", "wait_cycles",
                 "util_%", "sram_Mbit", "dram_Mbit", "fmac_uJ", "conv_uJ", "sram_uJ", "dram_uJ", "leak_uJ", "total_uJ"});
    for (const auto& r : result.phases) {
        const node::PhaseCounters& c = r.counters;
        const node::PhaseJob& j = r.step.job;
        const double sram_bits = static_cast<double>(c.traffic.sram_bits());
        std::string shape = std::to_string(j.shape.m) + "x" + std::to_string(j.shape.k) + "x" + std::to_string(j.shape.n);
        if (r.step.count > 1) shape += " (x" + std::to_string(r.step.count) + ")";
        table.add_row({layer_name(params, r), fmac::to_string(r.step.phase), shape,
                       std::to_string(j.x_mantissa_bits) + "/" + std::to_string(j.y_mantissa_bits),
                       Table::fixed(static_cast<double>(c.macs) * 1e-6, 1), std::to_string(c.cycles),
                       std::to_string(c.array_cycles), std::to_string(c.cycles - c.array_cycles),
                       Table::fixed(100.0 * utilisation(params, c), 1), Table::fixed(sram_bits * 1e-6, 1),
                       Table::fixed(static_cast<double>(c.traffic.dram_bits()) * 1e-6, 1),
                       Table::fixed(micro(r.energy.fmac_pj), 2), Table::fixed(micro(r.energy.converter_pj), 2),
                       Table::fixed(micro(r.energy.sram_pj), 2), Table::fixed(micro(r.energy.dram_pj), 2),
                       Table::fixed(micro(r.energy.leakage_pj), 2), Table::fixed(micro(r.energy.total_pj()), 2)});
    }
    table.print(out);
    const node::PhaseCounters& t = result.total;
    const energy::EnergyBreakdown& e = result.total_energy;
    const double macs = static_cast<double>(t.macs);
    const auto per_mac = [&](double pj) { return macs > 0 ? pj / macs : 0.0; };
    out << "\ntotal: " << t.cycles << " cycles (" << Table::fixed(to_seconds(Cycles(t.cycles), n.clock_hz) * 1e3, 3)
        << " ms at " << params.node.clock_mhz << " MHz), " << Table::fixed(macs * 1e-9, 3) << " GMAC, utilisation "
        << Table::fixed(100.0 * utilisation(params, t), 1) << "%\n";
    out << "cycles:";
    for (std::size_t i = 0; i < std::size(node::kCycleParts); ++i)
        out << (i ? ", " : " ") << node::kCycleParts[i].phrase << " " << t.*node::kCycleParts[i].member;
    out << "\n";
    out << "energy: " << Table::fixed(micro(e.total_pj()), 2) << " uJ, " << Table::fixed(per_mac(e.total_pj()), 3)
        << " pJ/MAC = fmac " << Table::fixed(per_mac(e.fmac_pj), 3) << " + converter "
        << Table::fixed(per_mac(e.converter_pj), 3) << " + sram " << Table::fixed(per_mac(e.sram_pj), 3) << " + dram "
        << Table::fixed(per_mac(e.dram_pj), 3) << " + leakage " << Table::fixed(per_mac(e.leakage_pj), 3) << "\n";
}

std::string training_step_json(const config::Params& params, const TrainingStepResult& result,
                               const RunProvenance& provenance) {
    const node::NodeParams& n = params.node.resolved;
    const node::PhaseCounters& t = result.total;
    std::ostringstream o;
    o << "{\n";
    o << "  \"config\": " << json_string(params.source_file) << ",\n";
    o << "  \"fastsim_version\": " << json_string(provenance.fastsim_version) << ",\n";
    o << "  \"command_line\": " << json_string(provenance.command_line) << ",\n";
    o << "  \"network\": " << json_string(params.workload.network.name) << ",\n";
    o << "  \"batch\": " << params.workload.batch << ",\n";
    o << "  \"fidelity\": " << json_string(std::string(config::to_string(params.run.fidelity))) << ",\n";
    o << "  \"node\": {\"array_rows\": " << n.array.rows << ", \"array_cols\": " << n.array.cols
      << ", \"group_size\": " << n.array.group_size << ", \"clock_hz\": " << n.clock_hz << "},\n";
    o << "  \"energy_table\": " << json_string(params.energy.resolved.name) << ",\n";
    o << "  \"total_cycles\": " << t.cycles << ",\n";
    o << "  \"total_seconds\": " << format_number(to_seconds(Cycles(t.cycles), n.clock_hz)) << ",\n";
    o << "  \"total_macs\": " << t.macs << ",\n";
    o << "  \"total_energy_pj\": " << format_number(result.total_energy.total_pj()) << ",\n";
    o << "  \"energy_pj\": " << energy_json(result.total_energy) << ",\n";
    o << "  \"pj_per_mac\": " << format_number(t.macs ? result.total_energy.total_pj() / static_cast<double>(t.macs) : 0.0) << ",\n";
    o << "  \"utilisation_percent\": " << format_number(100.0 * utilisation(params, t)) << ",\n";
    o << "  \"cycles\": {";
    for (std::size_t i = 0; i < std::size(node::kCycleParts); ++i)
        o << (i ? ", " : "") << json_string(std::string(node::kCycleParts[i].key)) << ": " << t.*node::kCycleParts[i].member;
    o << "},\n";
    o << "  \"phases\": [\n";
    for (std::size_t i = 0; i < result.phases.size(); ++i) {
        o << "    {";
        const auto fields = phase_fields(params, result.phases[i]);
        for (std::size_t f = 0; f < fields.size(); ++f)
            o << (f ? ", " : "") << json_string(fields[f].first) << ": " << fields[f].second;
        o << "}" << (i + 1 < result.phases.size() ? "," : "") << "\n";
    }
    o << "  ]\n}\n";
    return o.str();
}

std::string training_step_csv(const config::Params& params, const TrainingStepResult& result) {
    std::ostringstream o;
    bool header = true;
    for (const auto& r : result.phases) {
        const auto fields = phase_fields(params, r);
        if (header) {
            for (std::size_t f = 0; f < fields.size(); ++f) o << (f ? "," : "") << fields[f].first;
            o << "\n";
            header = false;
        }
        for (std::size_t f = 0; f < fields.size(); ++f) o << (f ? "," : "") << fields[f].second;
        o << "\n";
    }
    return o.str();
}

}  // namespace fastsim::run
