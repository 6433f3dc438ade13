// SPDX-License-Identifier: MIT
// The workload and precision sections, and run.mode training_step
// (docs/config.md#workload, #precision).
#include "config/sections.h"

#include <filesystem>

#include "config/energy_table.h"
#include "config/load.h"
#include "config/node_keys.h"
#include "config/trace_reader.h"

namespace fastsim::config {
namespace {

template <typename Visit, typename W>
void workload_keys(Visit& visit, W& w) {
    visit(w.trace, {"trace",
                    "a network trace, `.yaml` (fastsim) or `.csv` (SCALE-Sim) ([workloads.md](workloads.md)); a "
                    "relative path is taken from the config file's folder",
                    nullptr, "— (required)", "an existing file"});
    visit(w.batch, {"batch", "samples per step (in `cluster`: the whole cluster's)", &kWorkloadBatch});
}

template <typename Visit, typename P>
void precision_keys(Visit& visit, P& p) {
    visit(p.defaults.weights, {"weights", "weights' mantissa bits, every layer and phase", &kMantissaWidth});
    visit(p.defaults.activations, {"activations", "activations' mantissa bits", &kMantissaWidth});
    visit(p.defaults.gradients, {"gradients", "gradients' mantissa bits", &kMantissaWidth});
    visit(p.rounding.activations, {"rounding.activations", "converter rounding for activations"});
    visit(p.rounding.gradients, {"rounding.gradients", "converter rounding for gradients (FAST)"});
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

/// Every layer's GEMMs, and the MACs of the whole step, fit 64 bits at `batch`: a layer that
/// does not is an error at the layer in its trace that also names workload.batch.
void check_lowering(const workload::Workload& w, std::uint64_t batch, const Location& batch_where) {
    std::uint64_t step_macs = 0;
    for (const workload::Layer& l : w.layers) {
        std::uint64_t layer_macs = 0;
        try {
            layer_macs = workload::lower(l, batch).forward_macs();
        } catch (const SizeOverflow& e) {
            throw layer_size_error(l, batch, batch_where, e);
        }
        const bool fits = !__builtin_mul_overflow(layer_macs, std::uint64_t{3}, &layer_macs) &&
                          !__builtin_add_overflow(step_macs, layer_macs, &step_macs);
        if (!fits)
            throw ConfigError(batch_where, "the training step's MACs overflow 64 bits at batch " + std::to_string(batch) +
                                               " (at layer '" + l.name + "', " + l.where.describe() + "); lower workload.batch");
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
    if (w.trace.written.empty())
        throw ConfigError(top.has("workload") ? reader.where("trace") : top.location(),
                          "run.mode " + std::string(to_string(run.mode)) +
                              " needs workload.trace: a network trace (traces/*.yaml or a SCALE-Sim .csv)");
    w.trace.resolved = resolve_path(top.document()->file, w.trace.written);
    if (std::error_code ec; !std::filesystem::is_regular_file(w.trace.resolved, ec))
        throw ConfigError(reader.where("trace"), "no trace file at " + w.trace.resolved +
                                                     " (a relative path is taken from the config file's folder)");
    w.network = read_trace(w.trace.resolved);
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

    // (3) Precision: defaults, then the overrides in order.
    PrecisionParams& pp = p.precision;
    KeyReader precision = read_keys(top, "precision", pp, kPrecisionKeys);
    for (const auto& [key, width] : {std::pair{"weights", pp.defaults.weights}, {"activations", pp.defaults.activations},
                                     {"gradients", pp.defaults.gradients}})
        check_mantissa_format(p.bfp, width, precision.where(key));
    const auto& layers = p.workload.network.layers;
    pp.per_layer.assign(layers.size(), node::LayerPrecision{pp.defaults, pp.defaults, pp.defaults});
    for (MapReader& entry : precision.section().maps("layers")) {
        const Location entry_where = entry.location();
        PrecisionOverride o;
        KeyReader reader = read_keys(std::move(entry), o, kOverrideKeys);
        reader.finish();
        if (!reader.given("layer"))
            throw ConfigError(entry_where, "expected layer: the name of a layer in " + p.workload.trace.written);
        for (const auto& [key, width] : {std::pair{"weights", o.weights}, {"activations", o.activations},
                                         {"gradients", o.gradients}})
            if (width) check_mantissa_format(p.bfp, *width, reader.where(key));
        std::size_t index = layers.size();
        for (std::size_t l = 0; l < layers.size(); ++l)
            if (layers[l].name == o.layer) index = l;
        if (index == layers.size())
            throw ConfigError(reader.where("layer"), "no layer named '" + o.layer + "' in " + p.workload.trace.written);
        for (std::size_t ph = 0; ph < 3; ++ph) {
            if (o.phase && static_cast<std::size_t>(*o.phase) != ph) continue;
            node::TensorPrecision& t = pp.per_layer[index][ph];
            t.weights = o.weights.value_or(t.weights);
            t.activations = o.activations.value_or(t.activations);
            t.gradients = o.gradients.value_or(t.gradients);
        }
        pp.overrides.push_back(o);
    }
    precision.finish();

    // (4) Energy table, with the node's DRAM type.
    p.energy = read_energy_section(top);
    p.energy.resolved = load_energy_table(p.energy.table.resolved, p.node.dram_type, node.where("dram.type"));

    // (5) Every phase must tile onto this node: checked here, where the SRAM keys are known.
    check_tiling(node::training_step_phases(p.workload.network, p.workload.batch, pp.per_layer, pp.rounding), p.node,
                 node, p.workload.network);
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
    out << YAML::EndSeq << YAML::EndMap;
    dump_energy_section(out, p.energy);
}

std::vector<std::pair<std::string, std::string>> training_key_tables() {
    return {{"workload", key_table<WorkloadParams>(kWorkloadKeys)},
            {"precision", key_table<PrecisionParams>(kPrecisionKeys)},
            {"precision.layers", key_table<PrecisionOverride>(kOverrideKeys)}};
}

}  // namespace fastsim::config
