// SPDX-License-Identifier: MIT
#include "output/training_report.h"

#include <array>
#include <iterator>
#include <set>
#include <sstream>

#include "common/csv_writer.h"
#include "common/json_writer.h"
#include "common/output_files.h"
#include "common/units.h"
#include "output/run_summary.h"
#include "output/table.h"

namespace fastsim::output {
namespace {

const std::string& layer_name(const config::Params& params, const run::PhaseResult& r) {
    return params.workload.network.layers[r.step.layer].name;
}

double micro(double pj) { return pj * 1e-6; }

/// One layer phase of a training step with its counters (node::counter_values, in the order of
/// node::counter_infos): a row of layers.csv and an entry of report.json's "phases".
struct PhaseRow {
    const run::PhaseResult& result;
    std::vector<node::CounterValue> counters;
};

std::vector<PhaseRow> phase_rows(const run::TrainingStepResult& result) {
    std::vector<PhaseRow> rows;
    rows.reserve(result.phases.size());
    for (const run::PhaseResult& r : result.phases) rows.push_back(PhaseRow{r, node::counter_values(r.counters)});
    return rows;
}

/// The job a report shows for a phase: its GEMM shape with the most MACs (the phase's only one
/// but for a strided convolution's transposed backward-data), or none on the vector unit.
const node::PhaseJob& shown_job(const node::StepPhase& s) {
    static const node::PhaseJob kNone{};
    return s.on_vector_unit ? kNone : s.largest_gemm().job;
}

/// The columns of one phase, declared once for layers.csv and report.json's "phases": the job,
/// then the work counters, utilisation_percent, the action counters (those shown), then energy
/// in pJ.
CsvWriter<PhaseRow> phase_table(const config::Params& params) {
    const auto job_count = [](std::uint64_t fmac::GemmShape::*member) {
        return [member](const PhaseRow& p) { return CsvCell::integer(shown_job(p.result.step).shape.*member); };
    };
    std::vector<CsvColumn<PhaseRow>> columns{
        {"layer", [&params](const PhaseRow& p) { return CsvCell::quoted_text(layer_name(params, p.result)); }},
        {"phase", [](const PhaseRow& p) { return CsvCell::quoted_text(node::phase_name(p.result.step)); }},
        {"gemm_count", [](const PhaseRow& p) { return CsvCell::integer(p.result.step.gemm_count()); }},
        {"m", job_count(&fmac::GemmShape::m)},
        {"k", job_count(&fmac::GemmShape::k)},
        {"n", job_count(&fmac::GemmShape::n)},
        {"x_mantissa_bits",
         [](const PhaseRow& p) { return CsvCell::integer(shown_job(p.result.step).x_mantissa_bits); }},
        {"y_mantissa_bits",
         [](const PhaseRow& p) { return CsvCell::integer(shown_job(p.result.step).y_mantissa_bits); }},
        {"passes_per_group",
         [](const PhaseRow& p) {
             const node::PhaseJob& j = shown_job(p.result.step);
             return CsvCell::integer(fmac::passes_per_group(j.x_mantissa_bits, j.y_mantissa_bits));
         }},
    };
    const std::vector<CounterInfo>& infos = node::counter_infos();
    const auto add_counters = [&](CounterKind kind) {
        for (std::size_t i = 0; i < infos.size(); ++i)
            if (infos[i].kind == kind && infos[i].show != CounterShow::hidden)
                columns.push_back({std::string(infos[i].name),
                                   [i](const PhaseRow& p) { return CsvCell::integer(p.counters[i].value); }});
    };
    add_counters(CounterKind::work);
    columns.push_back({"utilisation_percent", [&params](const PhaseRow& p) {
                           return CsvCell::number(100.0 * utilisation(params, p.result.counters));
                       }});
    add_counters(CounterKind::action);
    columns.push_back(
        {"dram_saved_bits", [](const PhaseRow& p) { return CsvCell::integer(p.result.dram_saved_bits); }});
    for (const energy::EnergyComponent& e : energy::kEnergyComponents)
        columns.push_back({"energy_" + std::string(e.name) + "_pj",
                           [pj = e.pj](const PhaseRow& p) { return CsvCell::number(p.result.energy.*pj); }});
    columns.push_back(
        {"energy_total_pj", [](const PhaseRow& p) { return CsvCell::number(p.result.energy.total_pj()); }});
    return CsvWriter<PhaseRow>(std::move(columns));
}

/// The energy components of `e` in pJ, as the items of the object open in `json`.
void write_energy(JsonWriter& json, const energy::EnergyBreakdown& e) {
    for (const energy::EnergyComponent& c : energy::kEnergyComponents) json.key(c.name).number(e.*c.pj);
}

}  // namespace

double utilisation(const config::Params& params, const node::PhaseCounters& c) {
    return c.array.utilisation(c.cycles, params.node.resolved.array);
}

namespace {

/// m x k x n of a phase's GEMM, "(xN)" for N independent ones; for several shapes the largest,
/// "+" the others.
std::string gemm_shape(const run::PhaseResult& r) {
    if (r.step.on_vector_unit) return "vector unit, " + std::to_string(r.step.vector.work.writes) + " values";
    const node::PhaseJob& j = shown_job(r.step);
    std::string shape = std::to_string(j.shape.m) + "x" + std::to_string(j.shape.k) + "x" + std::to_string(j.shape.n);
    if (r.step.gemms.size() > 1) shape += "+";
    if (r.step.gemm_count() > 1) shape += " (x" + std::to_string(r.step.gemm_count()) + ")";
    return shape;
}

std::string percent_of(double part, double whole) { return Table::fixed(whole > 0 ? 100.0 * part / whole : 0.0, 1); }

void print_per_layer_table(std::ostream& out, const config::Params& params, const run::TrainingStepResult& result) {
    std::vector<std::string> titles{"layer",       "phase",       "m x k x n", "bits_x/y",  "macs_M",   "cycles",
                                    "busy_cycles", "wait_cycles", "util_%",    "sram_Mbit", "dram_Mbit"};
    for (const energy::EnergyComponent& e : energy::kEnergyComponents) titles.push_back(std::string(e.name) + "_uJ");
    titles.emplace_back("total_uJ");
    Table table(titles);
    for (const auto& r : result.phases) {
        const node::PhaseCounters& c = r.counters;
        const node::PhaseJob& j = shown_job(r.step);
        const node::VectorJob& v = r.step.vector;
        std::vector<std::string> row{layer_name(params, r),
                                     std::string(node::phase_name(r.step)),
                                     gemm_shape(r),
                                     r.step.on_vector_unit
                                         ? std::to_string(v.activation_bits) + "/" + std::to_string(v.gradient_bits)
                                         : std::to_string(j.x_mantissa_bits) + "/" + std::to_string(j.y_mantissa_bits),
                                     Table::fixed(static_cast<double>(c.macs) * 1e-6, 1),
                                     std::to_string(c.cycles),
                                     std::to_string(c.array_cycles + c.vector_cycles),
                                     std::to_string(c.cycles - c.array_cycles - c.vector_cycles),
                                     Table::fixed(100.0 * utilisation(params, c), 1),
                                     Table::fixed(static_cast<double>(c.traffic.sram_bits()) * 1e-6, 1),
                                     Table::fixed(static_cast<double>(c.traffic.dram_bits()) * 1e-6, 1)};
        for (const energy::EnergyComponent& e : energy::kEnergyComponents)
            row.push_back(Table::fixed(micro(r.energy.*e.pj), 2));
        row.push_back(Table::fixed(micro(r.energy.total_pj()), 2));
        table.add_row(row);
    }
    table.print(out);
}

}  // namespace

namespace {

/// "dataflow ws", or "dataflow ws/ws/os (forward/backward_data/weight_gradient)" when phases differ.
std::string dataflow_text(const node::NodeParams& n) {
    if (n.dataflow[1] == n.dataflow[0] && n.dataflow[2] == n.dataflow[0])
        return "dataflow " + std::string(name_of(n.dataflow[0]));
    std::string names, phases;
    for (const auto& phase : enum_names(fmac::TrainingPhase{})) {
        const bool first = phase.value == fmac::TrainingPhase::forward;
        names += (first ? "" : "/") + std::string(name_of(n.dataflow[static_cast<std::size_t>(phase.value)]));
        phases += (first ? "" : "/") + std::string(phase.name);
    }
    return "dataflow " + names + " (" + phases + ")";
}

}  // namespace

void print_training_step(std::ostream& out, const config::Params& params, const run::TrainingStepResult& result,
                         const StepReportDetail detail) {
    const node::NodeParams& n = params.node.resolved;
    std::string phase_list;  // run.phases, when not every phase
    if (params.run.phase_selection() != node::kEveryPhase)
        for (const fmac::TrainingPhase p : params.run.phases)
            phase_list += std::string(phase_list.empty() ? ", phases " : " + ") + fmac::to_string(p);
    out << "Training step of " << params.workload.network.name << " (batch " << params.workload.batch << phase_list
        << ") on a " << n.array.rows << "x" << n.array.cols << " FAST node, g=" << n.array.group_size << ", "
        << dataflow_text(n) << ", " << params.node.clock_mhz << " MHz, fidelity "
        << config::to_string(params.run.fidelity) << ", energy table " << params.energy.resolved.name << "\n";
    // What the array can do at each phase's default widths (layers of their own widths differ).
    const node::TensorPrecision& w = params.precision.defaults;
    const std::array<std::pair<int, int>, 3> widths{
        std::pair{w.activations, w.weights}, std::pair{w.gradients, w.weights}, std::pair{w.activations, w.gradients}};
    out << "peak MAC/cycle (R x C x g / passes):";
    for (std::size_t p = 0; p < widths.size(); ++p) {
        const int passes = fmac::passes_per_group(widths[p].first, widths[p].second);
        out << (p ? ", " : " ") << fmac::to_string(static_cast<fmac::TrainingPhase>(p)) << " "
            << static_cast<std::uint64_t>(n.array.rows) * static_cast<std::uint64_t>(n.array.cols) *
                   static_cast<std::uint64_t>(n.array.group_size) / static_cast<std::uint64_t>(passes)
            << " at " << widths[p].first << "x" << widths[p].second << " bits";
    }
    out << "\n\n";
    const node::PhaseCounters& t = result.total;
    const energy::EnergyBreakdown& e = result.total_energy;
    const double macs = static_cast<double>(t.macs);
    const auto per_mac = [&](double pj) { return macs > 0 ? pj / macs : 0.0; };
    out << "total: " << t.cycles << " cycles (" << Table::fixed(to_seconds(Cycles(t.cycles), n.clock_hz) * 1e3, 3)
        << " ms at " << params.node.clock_mhz << " MHz), " << Table::fixed(macs * 1e-9, 3) << " GMAC, utilisation "
        << Table::fixed(100.0 * utilisation(params, t), 1) << "%\n";
    out << "cycles:";
    for (std::size_t i = 0; i < std::size(node::kCycleParts); ++i)
        out << (i ? ", " : " ") << node::kCycleParts[i].phrase << " " << t.*node::kCycleParts[i].member;
    out << "\n";
    out << "energy: " << Table::fixed(micro(e.total_pj()), 2) << " uJ, " << Table::fixed(per_mac(e.total_pj()), 3)
        << " pJ/MAC";
    for (const energy::EnergyComponent& c : energy::kEnergyComponents)
        out << (c.pj == energy::kEnergyComponents.front().pj ? " = " : " + ") << c.name << " "
            << Table::fixed(per_mac(e.*c.pj), 3);
    out << "\n";
    const std::optional<energy::AreaBreakdown> area = run::node_area(params);
    const Efficiency f = efficiency(macs, to_seconds(Cycles(t.cycles), n.clock_hz), e.total_pj(), params.workload.batch,
                                    area ? std::optional(area->total_mm2()) : std::nullopt);
    print_area_and_power(out, area, params.energy.process_nm, params.energy.resolved, "", "DRAM interface", f);
    out << "\n";

    // Per phase: the three GEMMs of training, summed over the layers.
    const double total_cycles = static_cast<double>(t.cycles), total_energy = e.total_pj();
    Table phases({"phase", "layers", "gmac", "cycles", "cycles_%", "util_%", "energy_uJ", "energy_%", "bound_by"});
    for (const fmac::TrainingPhase phase :
         {fmac::TrainingPhase::forward, fmac::TrainingPhase::backward_data, fmac::TrainingPhase::weight_gradient}) {
        node::PhaseCounters sum;
        double energy_pj = 0;
        std::set<std::size_t> layers;  // a layer's col2im or weight update is part of its phase
        for (const auto& r : result.phases)
            if (r.step.phase == phase) {
                sum += r.counters;
                energy_pj += r.energy.total_pj();
                layers.insert(r.step.layer);
            }
        phases.add_row({std::string(fmac::to_string(phase)), std::to_string(layers.size()),
                        Table::fixed(static_cast<double>(sum.macs) * 1e-9, 3), std::to_string(sum.cycles),
                        percent_of(static_cast<double>(sum.cycles), total_cycles),
                        Table::fixed(100.0 * utilisation(params, sum), 1), Table::fixed(micro(energy_pj), 2),
                        percent_of(energy_pj, total_energy), std::string(node::bottleneck(sum).bottleneck)});
    }
    phases.print(out);

    if (detail == StepReportDetail::per_layer) {
        out << "\n";
        print_per_layer_table(out, params, result);
        return;
    }
    // The layer phases that take the most cycles.
    constexpr std::size_t kTopLayers = 5;
    std::vector<const run::PhaseResult*> order;
    for (const auto& r : result.phases) order.push_back(&r);
    std::stable_sort(order.begin(), order.end(), [](const run::PhaseResult* a, const run::PhaseResult* b) {
        return a->counters.cycles > b->counters.cycles;
    });
    order.resize(std::min(order.size(), kTopLayers));
    out << "\nthe " << order.size() << " of " << result.phases.size() << " layer phases that take the most cycles:\n";
    Table top({"layer", "phase", "m x k x n", "cycles", "cycles_%", "util_%", "energy_uJ"});
    for (const run::PhaseResult* r : order)
        top.add_row(
            {layer_name(params, *r), std::string(node::phase_name(r->step)), gemm_shape(*r),
             std::to_string(r->counters.cycles), percent_of(static_cast<double>(r->counters.cycles), total_cycles),
             Table::fixed(100.0 * utilisation(params, r->counters), 1), Table::fixed(micro(r->energy.total_pj()), 2)});
    top.print(out);
    out << "(every layer and phase: --per-layer, and layers.csv with --out)\n";
}

void print_whole_run(std::ostream& out, const config::Params& params, const run::WholeRunResult& run) {
    const node::NodeParams& n = params.node.resolved;
    out << "\nwhole run: " << params.workload.steps << " steps (workload.steps) in " << run.segments.size()
        << " precision segment" << (run.segments.size() == 1 ? "" : "s") << ", " << run.distinct_steps
        << " distinct step" << (run.distinct_steps == 1 ? "" : "s") << " simulated (the report above is step 0's)\n";
    Table table({"steps", "widths_w/a/g", "cycles_per_step", "energy_uJ_per_step", "cycles", "energy_uJ"});
    for (const run::RunSegment& s : run.segments)
        table.add_row({std::to_string(s.first_step) + "-" + std::to_string(s.first_step + s.steps - 1),
                       s.uniform ? std::to_string(s.widths.weights) + "/" + std::to_string(s.widths.activations) + "/" +
                                       std::to_string(s.widths.gradients)
                                 : std::string("per layer"),
                       std::to_string(s.step_cycles), Table::fixed(micro(s.step_energy_pj), 2),
                       std::to_string(s.step_cycles * s.steps),
                       Table::fixed(micro(s.step_energy_pj * static_cast<double>(s.steps)), 2)});
    table.print(out);
    out << "run total: " << run.total_cycles << " cycles ("
        << format_number(to_seconds(Cycles(run.total_cycles), n.clock_hz)) << " s at " << params.node.clock_mhz
        << " MHz), " << format_number(run.total_energy_pj * 1e-12) << " J\n";
}

std::string training_step_json(const config::Params& params, const run::TrainingStepResult& result,
                               const run::RunProvenance& provenance, const run::WholeRunResult* whole_run) {
    const node::NodeParams& n = params.node.resolved;
    const node::PhaseCounters& t = result.total;
    JsonWriter o;
    o.begin_object(JsonLayout::one_per_line);
    o.key("config").string(params.source_file).key("fastsim_version").string(provenance.fastsim_version);
    o.key("command_line").string(provenance.command_line).key("network").string(params.workload.network.name);
    o.key("batch").integer(params.workload.batch).key("fidelity").string(config::to_string(params.run.fidelity));
    o.key("node").begin_object().key("array_rows").integer(n.array.rows).key("array_cols").integer(n.array.cols);
    o.key("group_size").integer(n.array.group_size).key("clock_hz").integer(n.clock_hz);
    o.key("dataflow").begin_object();
    for (const auto& phase : enum_names(fmac::TrainingPhase{}))
        o.key(phase.name).string(name_of(n.dataflow[static_cast<std::size_t>(phase.value)]));
    o.end_object();
    o.key("sram_read_latency_cycles").begin_object().key("exponent").integer(n.sram.exponent_bank.read_latency_cycles);
    o.key("mantissa").integer(n.sram.mantissa_bank.read_latency_cycles).end_object().end_object();
    o.key("energy_table").string(params.energy.resolved.name).key("total_cycles").integer(t.cycles);
    o.key("total_seconds").number(to_seconds(Cycles(t.cycles), n.clock_hz)).key("total_macs").integer(t.macs);
    o.key("total_energy_pj").number(result.total_energy.total_pj());
    o.key("energy_pj").begin_object();
    write_energy(o, result.total_energy);
    o.end_object();
    o.key("pj_per_mac").number(t.macs ? result.total_energy.total_pj() / static_cast<double>(t.macs) : 0.0);
    const std::optional<energy::AreaBreakdown> area = run::node_area(params);
    const Efficiency f = efficiency(static_cast<double>(t.macs), to_seconds(Cycles(t.cycles), n.clock_hz),
                                    result.total_energy.total_pj(), params.workload.batch,
                                    area ? std::optional(area->total_mm2()) : std::nullopt);
    write_area_and_efficiency(o, area, params.energy.process_nm, params.energy.resolved, f);
    o.key("utilisation_percent").number(100.0 * utilisation(params, t));
    o.key("cycles").begin_object();
    for (const node::CyclePart& part : node::kCycleParts) o.key(part.key).integer(t.*part.member);
    o.end_object();
    if (whole_run != nullptr) {
        o.key("whole_run").begin_object().key("steps").integer(params.workload.steps);
        o.key("total_cycles").integer(whole_run->total_cycles);
        o.key("total_seconds").number(to_seconds(Cycles(whole_run->total_cycles), n.clock_hz));
        o.key("total_energy_pj").number(whole_run->total_energy_pj);
        o.key("distinct_steps_simulated").integer(whole_run->distinct_steps).key("segments").begin_array();
        for (const run::RunSegment& s : whole_run->segments) {
            o.begin_object().key("first_step").integer(s.first_step).key("steps").integer(s.steps);
            o.key("weights").integer(s.widths.weights).key("activations").integer(s.widths.activations);
            o.key("gradients").integer(s.widths.gradients).key("uniform").boolean(s.uniform);
            o.key("step_cycles").integer(s.step_cycles).key("step_energy_pj").number(s.step_energy_pj);
            o.end_object();
        }
        o.end_array().end_object();
    }
    const CsvWriter<PhaseRow> phases = phase_table(params);
    o.key("phases").begin_array(JsonLayout::one_per_line);
    for (const PhaseRow& row : phase_rows(result)) {
        o.begin_object();
        phases.write_json_fields(o, row);
        o.end_object();
    }
    o.end_array().end_object();
    return o.take();
}

std::string training_step_csv(const config::Params& params, const run::TrainingStepResult& result) {
    // A step without phases has always written an empty file, header included.
    if (result.phases.empty()) return {};
    return phase_table(params).table(phase_rows(result));
}

}  // namespace fastsim::output
