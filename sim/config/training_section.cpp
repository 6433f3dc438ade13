// SPDX-License-Identifier: MIT
// The workload and precision sections, and run.mode training_step
// (docs/config.md#workload, #precision).
#include "config/sections.h"

#include <algorithm>
#include <filesystem>

#include "config/energy_table.h"
#include "config/load.h"
#include "config/node_keys.h"
#include "config/onnx_model.h"
#include "config/trace_reader.h"
#include "workload/vector_work.h"
#include "common/csv_reader.h"

namespace fastsim::config {
namespace {

template <typename Visit, typename W>
void workload_keys(Visit& visit, W& w) {
    visit(w.trace, {"trace",
                    "a network trace, `.yaml` (fastsim) or `.csv` (SCALE-Sim) ([workloads.md](workloads.md)); a "
                    "relative path is taken from the config file's folder",
                    nullptr, "— (this or `model`)", "an existing file"});
    visit(w.model,
          {"model",
           "an ONNX model (`.onnx`) instead of `trace`, imported as `fastsim import` does ([onnx.md](onnx.md)); "
           "a relative path is taken from the config file's folder",
           nullptr, "— (this or `trace`)", "an existing file"});
    visit(w.batch, {"batch", "samples per step (in `cluster`: the whole cluster's)", &kWorkloadBatch});
    visit(w.steps, {"steps",
                    "training steps of the whole run: the report adds the run's cycles (`cluster`: seconds) and "
                    "energy; in `training_step` each distinct precision of `precision.schedule` is simulated once",
                    &kWorkloadSteps});
}

template <typename Visit, typename P>
void precision_keys(Visit& visit, P& p) {
    visit(p.defaults.weights, {"weights", "weights' mantissa bits, every layer and phase", &kMantissaWidth});
    visit(p.defaults.activations, {"activations", "activations' mantissa bits", &kMantissaWidth});
    visit(p.defaults.gradients, {"gradients", "gradients' mantissa bits", &kMantissaWidth});
    visit(p.rounding.activations, {"rounding.activations", "converter rounding for activations"});
    visit(p.rounding.gradients, {"rounding.gradients", "converter rounding for gradients (FAST)"});
    visit(p.schedule_policy,
          {"schedule_policy",
           "with `schedule` naming a `fastsim train` precision_log.csv: the policy whose rows apply (a log of "
           "`fastsim train --out` holds every costed policy's)",
           nullptr, "empty: the log holds one policy's rows"});
}

template <typename Visit, typename E>
void schedule_keys(Visit& visit, E& e) {
    visit(e.from_step, {"from_step",
                        "the first step (0-based) at these widths; entries in increasing order, each below "
                        "`workload.steps`",
                        nullptr, "— (required)", "0 … 1099511627775"});
    visit(e.weights, {"weights", "weights' width from that step on", &kMantissaWidth, "`precision.weights`"});
    visit(e.activations,
          {"activations", "activations' width from that step on", &kMantissaWidth, "`precision.activations`"});
    visit(e.gradients, {"gradients", "gradients' width from that step on", &kMantissaWidth, "`precision.gradients`"});
}

template <typename Visit, typename O>
void override_keys(Visit& visit, O& o) {
    visit(o.layer, {"layer", "the layer overridden: a layer name in the trace", nullptr, "— (required)"});
    visit(o.phase, {"phase", "the phase overridden", nullptr, "every phase"});
    visit(o.weights, {"weights", "the new width of weights", &kMantissaWidth, "unchanged"});
    visit(o.activations, {"activations", "the new width of activations", &kMantissaWidth, "unchanged"});
    visit(o.gradients, {"gradients", "the new width of gradients", &kMantissaWidth, "unchanged"});
}

constexpr auto kWorkloadKeys = [](auto& visit, auto& w) { workload_keys(visit, w); };
constexpr auto kPrecisionKeys = [](auto& visit, auto& p) { precision_keys(visit, p); };
constexpr auto kOverrideKeys = [](auto& visit, auto& o) { override_keys(visit, o); };
constexpr auto kScheduleKeys = [](auto& visit, auto& e) { schedule_keys(visit, e); };

/// Every layer's precision: `defaults` everywhere, then the overrides in order.
std::vector<node::LayerPrecision> layer_precisions(const node::TensorPrecision& defaults,
                                                   const std::vector<PrecisionOverride>& overrides,
                                                   const std::vector<workload::Layer>& layers) {
    std::vector<node::LayerPrecision> out(layers.size(), node::LayerPrecision{defaults, defaults, defaults});
    apply_overrides(out, overrides, layers);
    return out;
}

/// Every layer's GEMMs, and the MACs of the whole step, fit 64 bits at `batch`: a layer that
/// does not is an error at the layer in its trace that also names workload.batch.
void check_lowering(const workload::Workload& w, std::uint64_t batch, const Location& batch_where) {
    std::uint64_t step_macs = 0;
    for (const workload::Layer& l : w.layers) {
        std::uint64_t layer_macs = 0;
        try {
            layer_macs = workload::lower(l, batch).forward_macs();
            if (workload::runs_on_vector_unit(l.kind))
                for (const bool backward : {false, true}) (void)workload::vector_work(l, batch, backward);
        } catch (const SizeOverflow& e) {
            throw layer_size_error(l, batch, batch_where, e);
        }
        const bool fits = !__builtin_mul_overflow(layer_macs, std::uint64_t{3}, &layer_macs) &&
                          !__builtin_add_overflow(step_macs, layer_macs, &step_macs);
        if (!fits)
            throw ConfigError(batch_where, "the training step's MACs overflow 64 bits at batch " +
                                               std::to_string(batch) + " (at layer '" + l.name + "', " +
                                               l.where.describe() + "); lower workload.batch");
    }
}

}  // namespace

ConfigError layer_size_error(const workload::Layer& layer, std::uint64_t batch, const Location& batch_where,
                             const SizeOverflow& overflow) {
    return ConfigError(layer.where, "layer '" + layer.name + "': its " + overflow.quantity() +
                                        " overflow 64 bits at workload.batch " + std::to_string(batch) + " (" +
                                        batch_where.describe() + "); lower the batch or the layer's sizes");
}

void read_workload_section(MapReader& top, const RunParams& run, Params& p) {
    WorkloadParams& w = p.workload;
    KeyReader reader = read_keys(top, "workload", w, kWorkloadKeys);
    reader.finish();
    if (w.trace.written.empty() && w.model.written.empty())
        throw ConfigError(
            top.has("workload") ? reader.where("trace") : top.location(),
            "run.mode " + std::string(to_string(run.mode)) +
                " needs workload.trace (a network trace: traces/*.yaml or a SCALE-Sim .csv) or workload.model "
                "(an ONNX model)");
    if (!w.trace.written.empty() && !w.model.written.empty())
        throw ConfigError(reader.where("model"), "give workload.trace or workload.model, not both");
    const char* key = w.model.written.empty() ? "trace" : "model";
    FilePath& file = w.model.written.empty() ? w.trace : w.model;
    file.resolved = resolve_path(top.document()->file, file.written);
    if (std::error_code ec; !std::filesystem::is_regular_file(file.resolved, ec)) {
        const std::string what = w.model.written.empty() ? "trace" : "model";
        const auto status = std::filesystem::status(file.resolved, ec);
        const char* is = status.type() == std::filesystem::file_type::directory ? "a directory"
                         : status.type() == std::filesystem::file_type::fifo    ? "a FIFO"
                         : std::filesystem::exists(status)                      ? "not a regular file"
                                                                                : nullptr;
        throw ConfigError(reader.where(key),
                          is ? file.resolved + " is " + is + ": expected a " + what + " file (a regular file)"
                             : "no " + what + " file at " + file.resolved +
                                   " (a relative path is taken from the config file's folder)");
    }
    if (!w.model.written.empty() && std::filesystem::path(file.resolved).extension() != ".onnx")
        throw ConfigError(reader.where(key),
                          "expected an ONNX model (.onnx): a fastsim or SCALE-Sim trace goes under workload.trace");
    w.network = w.model.written.empty() ? read_trace(file.resolved) : read_onnx_model(file.resolved);
    if (run.mode == RunMode::cluster) {
        // The planner splits GEMM layers; each vector-unit layer is carried by one of them.
        w.network = workload::without_vector_layers(w.network);
        if (w.network.layers.empty())
            throw ConfigError(reader.where(key),
                              "the network has no GEMM layer (conv, fc, matmul) for a cluster run to split");
        for (const workload::Layer& l : w.network.layers)
            if (l.kind == workload::LayerKind::gemm)
                throw ConfigError(
                    l.where,
                    "layer '" + l.name +
                        "' is a gemm layer (one GEMM, not scaled by the batch, such as a "
                        "row of SCALE-Sim's Layer, M, N, K form); a cluster run splits layers by sample and "
                        "channel, so give it per-sample layers (fc with tokens: M) or use run.mode training_step");
    }
    w.batch_where = reader.where("batch");
    check_lowering(w.network, w.batch, w.batch_where);
}

void dump_workload_section(YAML::Emitter& out, const WorkloadParams& workload) {
    out << YAML::Key << "workload" << YAML::Value << YAML::BeginMap;
    write_keys(out, workload, kWorkloadKeys);
    out << YAML::EndMap;
}

void resolve_training(MapReader& top, Params& p) {
    // (1) Workload, (2) node.
    read_workload_section(top, p.run, p);
    KeyReader node(submap(top, "node"));
    node_keys(node, p.node);
    node.finish();
    resolve_node(p.node, p.bfp);
    // A phase's own dataflow applies to that phase's GEMMs: only to a phase the run simulates.
    const node::PhaseSelection simulated = p.run.phase_selection();
    for (std::size_t phase = 0; phase < simulated.size(); ++phase) {
        const char* name = fmac::to_string(static_cast<fmac::TrainingPhase>(phase));
        const std::string key = std::string("array.dataflow_per_phase.") + name;
        if (!simulated[phase] && node.given(key))
            throw ConfigError(node.where(key), std::string("run.phases leaves out ") + name +
                                                   ", so no GEMM takes this dataflow (add " + name +
                                                   " to run.phases, or leave this key out)");
    }

    // (3) Precision: defaults, then the overrides in order.
    PrecisionParams& pp = p.precision;
    KeyReader precision = read_keys(top, "precision", pp, kPrecisionKeys);
    for (const auto& [key, width] : {std::pair{"weights", pp.defaults.weights},
                                     {"activations", pp.defaults.activations},
                                     {"gradients", pp.defaults.gradients}})
        check_mantissa_format(p.bfp, width, precision.where(key));
    const auto& layers = p.workload.network.layers;
    for (MapReader& entry : precision.section().maps("layers")) {
        const Location entry_where = entry.location();
        PrecisionOverride o;
        KeyReader reader = read_keys(std::move(entry), o, kOverrideKeys);
        reader.finish();
        if (!reader.given("layer"))
            throw ConfigError(entry_where, "expected layer: the name of a layer in " + p.workload.trace.written);
        for (const auto& [key, width] :
             {std::pair{"weights", o.weights}, {"activations", o.activations}, {"gradients", o.gradients}})
            if (width) check_mantissa_format(p.bfp, *width, reader.where(key));
        const bool known =
            std::any_of(layers.begin(), layers.end(), [&](const workload::Layer& l) { return l.name == o.layer; });
        if (!known)
            throw ConfigError(reader.where("layer"), "no layer named '" + o.layer + "' in " + p.workload.trace.written);
        pp.overrides.push_back(o);
    }

    // (3b) The schedule: segments of workload.steps, each entry's widths as the defaults.
    pp.schedule.clear();
    pp.segments.clear();
    pp.schedule_log = {};
    const YAML::Node schedule_node = precision.section().raw("schedule");
    const bool from_log = schedule_node && schedule_node.IsScalar();
    if (from_log) {
        pp.schedule_log.written = schedule_node.as<std::string>();
        pp.schedule_log.resolved = resolve_path(top.document()->file, pp.schedule_log.written);
    }
    for (MapReader& entry : from_log ? std::vector<MapReader>{} : precision.section().maps("schedule")) {
        const Location where = entry.location();
        ScheduleEntry e;
        KeyReader reader = read_keys(std::move(entry), e, kScheduleKeys);
        reader.finish();
        if (!reader.given("from_step")) throw ConfigError(where, "expected from_step: the first step at these widths");
        for (const auto& [key, width] :
             {std::pair{"weights", e.weights}, {"activations", e.activations}, {"gradients", e.gradients}})
            if (width) check_mantissa_format(p.bfp, *width, reader.where(key));
        if (e.from_step >= p.workload.steps)
            throw ConfigError(reader.where("from_step"), "from_step " + std::to_string(e.from_step) +
                                                             " is not a step of the run: workload.steps is " +
                                                             std::to_string(p.workload.steps));
        if (!pp.schedule.empty() && e.from_step <= pp.schedule.back().from_step)
            throw ConfigError(reader.where("from_step"), "from_step " + std::to_string(e.from_step) +
                                                             " must be greater than the previous entry's (" +
                                                             std::to_string(pp.schedule.back().from_step) + ")");
        pp.schedule.push_back(e);
    }
    if (!from_log && !pp.schedule_policy.empty())
        throw ConfigError(precision.where("schedule_policy"),
                          "applies only with precision.schedule naming a fastsim train precision_log.csv");
    precision.finish();
    const auto segment_at = [&](std::uint64_t first, const node::TensorPrecision& defaults) {
        pp.segments.push_back({first, 0, defaults, layer_precisions(defaults, pp.overrides, layers)});
    };
    if (from_log)
        pp.segments = segments_from_log(pp.schedule_log.resolved, precision.section().location_of("schedule"),
                                        layer_precisions(pp.defaults, pp.overrides, layers), pp.defaults, layers,
                                        p.workload.steps, p.bfp, pp.schedule_policy, pp.overrides);
    else if (pp.schedule.empty() || pp.schedule.front().from_step > 0)
        segment_at(0, pp.defaults);
    for (const ScheduleEntry& e : pp.schedule)
        segment_at(e.from_step,
                   {e.weights.value_or(pp.defaults.weights), e.activations.value_or(pp.defaults.activations),
                    e.gradients.value_or(pp.defaults.gradients)});
    for (std::size_t i = 0; i < pp.segments.size(); ++i)
        pp.segments[i].steps =
            (i + 1 < pp.segments.size() ? pp.segments[i + 1].first_step : p.workload.steps) - pp.segments[i].first_step;
    pp.per_layer = pp.segments.front().per_layer;

    // (4) Energy table, with the node's DRAM type.
    p.energy = read_energy_section(top);
    p.energy.resolved = load_energy_table(p.energy.table.resolved, p.node.dram_type, node.where("dram.type"),
                                          p.node.sram_exponent_kib, p.node.sram_mantissa_kib);
    check_process_nm(p.energy, p.energy.resolved);
    set_sram_read_latency(p.node, p.energy.resolved, node);

    // (5) Every phase the run simulates must tile onto this node at every precision of the run:
    // checked here, where the SRAM keys are known.
    for (const PrecisionSegment& segment : pp.segments)
        check_tiling(node::training_step_phases(p.workload.network, p.workload.batch, segment.per_layer, pp.rounding,
                                                p.node.resolved, p.run.phase_selection(), p.run.optimizer),
                     p.node, node, p.workload.network);
}

void dump_training(YAML::Emitter& out, const Params& p) {
    dump_workload_section(out, p.workload);
    out << YAML::Key << "node" << YAML::Value << YAML::BeginMap;
    dump_node_keys(out, p.node);
    out << YAML::EndMap;
    out << YAML::Key << "precision" << YAML::Value << YAML::BeginMap;
    write_keys(out, p.precision, kPrecisionKeys);
    out << YAML::Key << "layers" << YAML::Value << YAML::BeginSeq;
    for (const auto& o : p.precision.overrides) {
        out << YAML::Flow << YAML::BeginMap;
        write_keys(out, o, kOverrideKeys);
        out << YAML::EndMap;
    }
    out << YAML::EndSeq;
    if (!p.precision.schedule_log.written.empty()) {
        out << YAML::Key << "schedule" << YAML::Value << p.precision.schedule_log.resolved;
    } else if (!p.precision.schedule.empty()) {
        out << YAML::Key << "schedule" << YAML::Value << YAML::BeginSeq;
        for (const auto& e : p.precision.schedule) {
            out << YAML::Flow << YAML::BeginMap;
            write_keys(out, e, kScheduleKeys);
            out << YAML::EndMap;
        }
        out << YAML::EndSeq;
    }
    out << YAML::EndMap;
    dump_energy_section(out, p.energy);
}

std::vector<std::pair<std::string, std::string>> training_key_tables() {
    return {{"workload", key_table<WorkloadParams>(kWorkloadKeys)},
            {"precision", key_table<PrecisionParams>(kPrecisionKeys)},
            {"precision.layers", key_table<PrecisionOverride>(kOverrideKeys)},
            {"precision.schedule", key_table<ScheduleEntry>(kScheduleKeys)}};
}

}  // namespace fastsim::config
