// SPDX-License-Identifier: MIT
#include "config/load.h"
#include "config/sections.h"

#include <array>
#include <cmath>
#include <cstdio>
#include <utility>

#include "common/checked.h"
#include "common/input_file.h"
#include "config/energy_table.h"
#include "config/ranges.h"
#include "config/trace_reader.h"
#include "config/yaml_reader.h"

#include <filesystem>

namespace fastsim::config {
namespace {

constexpr std::array<std::pair<std::string_view, RunMode>, 3> kRunModes{{
    {"bfp_report", RunMode::bfp_report},
    {"training_step", RunMode::training_step},
    {"cluster", RunMode::cluster},
}};
constexpr std::array<std::pair<std::string_view, TopologyKind>, 5> kTopologies{{
    {"ring", TopologyKind::ring},
    {"fully_connected", TopologyKind::fully_connected},
    {"switch", TopologyKind::switch_star},
    {"torus2d", TopologyKind::torus2d},
    {"tree", TopologyKind::tree},
}};
constexpr std::array<std::pair<std::string_view, GradientSyncAlgorithm>, 5> kGradientSync{{
    {"best", GradientSyncAlgorithm::best},
    {"ring", GradientSyncAlgorithm::ring},
    {"tree", GradientSyncAlgorithm::tree},
    {"halving_doubling", GradientSyncAlgorithm::halving_doubling},
    {"direct", GradientSyncAlgorithm::direct},
}};
constexpr std::array<std::pair<std::string_view, OptimizerKind>, 3> kOptimizers{{
    {"sgd", OptimizerKind::sgd},
    {"momentum", OptimizerKind::momentum},
    {"adam", OptimizerKind::adam},
}};
constexpr std::array<std::pair<std::string_view, Fidelity>, 2> kFidelities{{
    {"memo", Fidelity::memo},
    {"stepped", Fidelity::stepped},
}};
constexpr std::array<std::pair<std::string_view, fmac::TrainingPhase>, 3> kPhases{{
    {"forward", fmac::TrainingPhase::forward},
    {"backward_data", fmac::TrainingPhase::backward_data},
    {"weight_gradient", fmac::TrainingPhase::weight_gradient},
}};
constexpr std::array<std::pair<std::string_view, Distribution>, 4> kDistributions{{
    {"normal", Distribution::normal},
    {"relu_normal", Distribution::relu_normal},
    {"laplace", Distribution::laplace},
    {"student_t", Distribution::student_t},
}};

template <typename E, std::size_t N>
std::string_view name_of(const std::array<std::pair<std::string_view, E>, N>& table, E value) {
    for (const auto& [name, v] : table)
        if (v == value) return name;
    return "?";
}

template <typename E, std::size_t N>
std::optional<E> value_of(const std::array<std::pair<std::string_view, E>, N>& table, std::string_view name) {
    for (const auto& [n, v] : table)
        if (n == name) return v;
    return std::nullopt;
}


// (1) Raw layer: every key optional, every value type-checked where it stands.
struct RawRun {
    Field<RunMode> mode;
    Field<std::uint64_t> seed;
    Field<Fidelity> fidelity;
};

struct RawWorkload {
    Field<std::string> trace;
    Field<std::uint64_t> batch;
};

struct RawBank {
    Field<double> capacity_kib;
    Field<std::uint64_t> bits_per_cycle;
};

struct RawNode {
    Field<double> clock_mhz;
    Field<int> rows, cols, lanes, latency_cycles;
    RawBank exponent_bank, mantissa_bank;
    Field<std::string> dram_type;
    Field<double> dram_bandwidth_gb_per_s, dram_latency_ns;
    Field<std::uint64_t> max_tile_rows;
    Field<double> dram_capacity_gib;  ///< cluster node types only
};

struct RawOverride {
    Location where;
    Field<std::string> layer;
    Field<fmac::TrainingPhase> phase;
    Field<int> weights, activations, gradients;
};

struct RawPrecision {
    Field<int> weights, activations, gradients;
    Field<bfp::Rounding> activation_rounding, gradient_rounding;
    std::vector<RawOverride> overrides;
};

struct RawEnergy {
    Field<std::string> table;
};

struct RawLink {
    Location where;
    Field<double> bandwidth_gb_per_s, latency_ns, energy_pj_per_bit;
};

struct RawNodeType {
    Location where;
    Field<std::string> name, source;
    Field<int> arrays;
    RawNode node;
    Field<int> weights, activations, gradients;
};

struct RawGroup {
    Location where;
    Field<std::string> node_type;
    Field<std::uint64_t> count, rows, cols, fanout;
    Field<TopologyKind> topology;
    RawLink link;
};

struct RawCluster {
    Location where;
    std::vector<RawGroup> groups;
    Location groups_where;
    std::optional<Field<TopologyKind>> upper_topology;
    RawLink upper_link;
    Location upper_where;
    Field<GradientSyncAlgorithm> gradient_sync;
    Field<OptimizerKind> optimizer;
};

struct RawPlanner {
    Field<planner::PlannerKind> name;
    Field<bool> comm_only, equal_split;
};

struct RawBfp {
    Field<int> group_size, exponent_bits, exponent_bias, noise_bits, lfsr_bits;
    Field<bfp::Overflow> overflow;
};

struct RawTensor {
    Location where;
    Field<std::string> name;
    Field<Distribution> distribution;
    Field<double> scale, dof;
    Field<std::uint64_t> count;
};

struct RawReport {
    Field<std::vector<Field<int>>> mantissa_bits;
    Field<std::vector<Field<std::string>>> rounding;
    std::optional<std::vector<RawTensor>> tensors;
    Location tensors_where;
};

struct RawConfig {
    RawRun run;
    RawBfp bfp;
    RawReport report;
    bool has_report = false;
    std::optional<RawWorkload> workload;
    std::optional<RawNode> node;
    std::optional<RawPrecision> precision;
    std::optional<RawEnergy> energy;
    std::optional<std::vector<RawNodeType>> node_types;
    Location node_types_where;
    std::optional<RawCluster> cluster;
    std::optional<RawPlanner> planner;
};

RawBank read_bank(MapReader& sram, const std::string& key) {
    RawBank bank;
    auto reader = sram.map(key).value_or(MapReader(*sram.document(), YAML::Node(), sram.path() + "." + key));
    bank.capacity_kib = reader.scalar<double>("capacity_kib");
    bank.bits_per_cycle = reader.scalar<std::uint64_t>("bits_per_cycle");
    reader.finish();
    return bank;
}

/// The keys of a node (the `node:` section, or one entry of `node_types:`); the caller
/// reads its own extra keys and calls finish().
RawNode read_node(MapReader& n, bool cluster_node) {
    RawNode rn;
    rn.clock_mhz = n.scalar<double>("clock_mhz");
    if (auto a = n.map("array")) {
        rn.rows = a->scalar<int>("rows");
        rn.cols = a->scalar<int>("cols");
        a->finish();
    }
    if (auto c = n.map("converter")) {
        rn.lanes = c->scalar<int>("lanes");
        rn.latency_cycles = c->scalar<int>("pipeline_latency_cycles");
        c->finish();
    }
    MapReader sram = n.map("sram").value_or(MapReader(*n.document(), YAML::Node(), n.path() + ".sram"));
    rn.exponent_bank = read_bank(sram, "exponent_bank");
    rn.mantissa_bank = read_bank(sram, "mantissa_bank");
    sram.finish();
    MapReader dram = n.map("dram").value_or(MapReader(*n.document(), YAML::Node(), n.path() + ".dram"));
    rn.dram_type = dram.scalar<std::string>("type");
    rn.dram_bandwidth_gb_per_s = dram.scalar<double>("bandwidth_gb_per_s");
    rn.dram_latency_ns = dram.scalar<double>("latency_ns");
    if (cluster_node) rn.dram_capacity_gib = dram.scalar<double>("capacity_gib");
    dram.finish();
    if (auto t = n.map("tiling")) {
        rn.max_tile_rows = t->scalar<std::uint64_t>("max_tile_rows");
        t->finish();
    }
    return rn;
}

RawLink read_link(MapReader& parent) {
    RawLink link;
    link.where = parent.location_of("link");
    MapReader l = parent.map("link").value_or(MapReader(*parent.document(), YAML::Node(), parent.path() + ".link"));
    link.bandwidth_gb_per_s = l.scalar<double>("bandwidth_gb_per_s");
    link.latency_ns = l.scalar<double>("latency_ns");
    link.energy_pj_per_bit = l.scalar<double>("energy_pj_per_bit");
    l.finish();
    return link;
}

void read_cluster_sections(MapReader& top, RawConfig& raw) {
    const auto topology = [](const std::string& s) { return value_of(kTopologies, s); };
    const std::string topologies = "ring, fully_connected, switch, torus2d, tree";
    raw.node_types_where = top.location_of("node_types");
    const bool has_types = top.has("node_types");
    auto type_readers = top.maps("node_types");  // read even when empty, so the key is known
    if (has_types) {
        raw.node_types.emplace();
        for (auto& t : type_readers) {
            RawNodeType rt;
            rt.where = t.location();
            rt.name = t.scalar<std::string>("name");
            rt.source = t.scalar<std::string>("source");
            rt.arrays = t.scalar<int>("arrays");
            rt.node = read_node(t, true);
            if (auto p = t.map("precision")) {
                rt.weights = p->scalar<int>("weights");
                rt.activations = p->scalar<int>("activations");
                rt.gradients = p->scalar<int>("gradients");
                p->finish();
            }
            t.finish();
            raw.node_types->push_back(std::move(rt));
        }
    }
    if (auto c = top.map("cluster")) {
        RawCluster rc;
        rc.where = c->location();
        rc.groups_where = c->location_of("groups");
        for (auto& g : c->maps("groups")) {
            RawGroup rg;
            rg.where = g.location();
            rg.node_type = g.scalar<std::string>("node_type");
            rg.count = g.scalar<std::uint64_t>("count");
            rg.topology = g.choice<TopologyKind>("topology", topology, topologies);
            if (auto t = g.map("torus")) {
                rg.rows = t->scalar<std::uint64_t>("rows");
                rg.cols = t->scalar<std::uint64_t>("cols");
                t->finish();
            }
            rg.fanout = g.scalar<std::uint64_t>("tree_fanout");
            rg.link = read_link(g);
            g.finish();
            rc.groups.push_back(std::move(rg));
        }
        rc.upper_where = c->location_of("upper");
        if (auto u = c->map("upper")) {
            rc.upper_topology = u->choice<TopologyKind>("topology", topology, "ring, fully_connected, switch");
            rc.upper_link = read_link(*u);
            u->finish();
        }
        rc.optimizer = c->choice<OptimizerKind>(
            "optimizer", [](const std::string& v) { return value_of(kOptimizers, v); }, "sgd, momentum, adam");
        if (auto sync = c->map("gradient_sync")) {
            rc.gradient_sync = sync->choice<GradientSyncAlgorithm>(
                "algorithm", [](const std::string& v) { return value_of(kGradientSync, v); },
                "best, ring, tree, halving_doubling, direct");
            sync->finish();
        }
        c->finish();
        raw.cluster = std::move(rc);
    }
    if (auto p = top.map("planner")) {
        RawPlanner rp;
        rp.name = p->choice<planner::PlannerKind>(
            "name", [](const std::string& s) { return planner::parse_planner(s); }, planner::planner_name_list());
        rp.comm_only = p->scalar<bool>("comm_only");
        rp.equal_split = p->scalar<bool>("equal_split");
        p->finish();
        raw.planner = rp;
    }
}

std::optional<RawEnergy> read_raw_energy(MapReader& top) {
    auto e = top.map("energy");
    if (!e) return std::nullopt;
    RawEnergy re;
    re.table = e->scalar<std::string>("table");
    e->finish();
    return re;
}

void read_training_sections(MapReader& top, RawConfig& raw) {
    const auto rounding = [](const std::string& s) { return bfp::parse_rounding(s); };
    if (auto w = top.map("workload")) {
        RawWorkload rw;
        rw.trace = w->scalar<std::string>("trace");
        rw.batch = w->scalar<std::uint64_t>("batch");
        w->finish();
        raw.workload = rw;
    }
    if (auto n = top.map("node")) {
        raw.node = read_node(*n, false);
        n->finish();
    }
    if (auto p = top.map("precision")) {
        RawPrecision rp;
        rp.weights = p->scalar<int>("weights");
        rp.activations = p->scalar<int>("activations");
        rp.gradients = p->scalar<int>("gradients");
        if (auto r = p->map("rounding")) {
            rp.activation_rounding = r->choice<bfp::Rounding>("activations", rounding, "nearest, even, truncate, stochastic");
            rp.gradient_rounding = r->choice<bfp::Rounding>("gradients", rounding, "nearest, even, truncate, stochastic");
            r->finish();
        }
        for (auto& o : p->maps("layers")) {
            RawOverride ro;
            ro.where = o.location();
            ro.layer = o.scalar<std::string>("layer");
            ro.phase = o.choice<fmac::TrainingPhase>(
                "phase", [](const std::string& s) { return value_of(kPhases, s); },
                "forward, backward_data, weight_gradient");
            ro.weights = o.scalar<int>("weights");
            ro.activations = o.scalar<int>("activations");
            ro.gradients = o.scalar<int>("gradients");
            o.finish();
            rp.overrides.push_back(ro);
        }
        p->finish();
        raw.precision = rp;
    }
    raw.energy = read_raw_energy(top);
}

RawBfp read_raw_bfp(MapReader& top) {
    RawBfp raw;
    MapReader bfp = top.map("bfp").value_or(MapReader(*top.document(), YAML::Node(), "bfp"));
    raw.group_size = bfp.scalar<int>("group_size");
    raw.exponent_bits = bfp.scalar<int>("exponent_bits");
    raw.exponent_bias = bfp.scalar<int>("exponent_bias");
    raw.overflow = bfp.choice<bfp::Overflow>(
        "overflow", [](const std::string& s) { return bfp::parse_overflow(s); }, "nan, saturate");
    raw.noise_bits = bfp.scalar<int>("noise_bits");
    raw.lfsr_bits = bfp.scalar<int>("lfsr_bits");
    bfp.finish();
    return raw;
}

RawConfig read_raw(const Document& doc) {
    RawConfig raw;
    MapReader top(doc, doc.root, "");
    if (auto run = top.map("run")) {
        raw.run.mode = run->choice<RunMode>(
            "mode", [](const std::string& s) { return parse_run_mode(s); }, "bfp_report, training_step, cluster");
        raw.run.seed = run->scalar<std::uint64_t>("seed");
        raw.run.fidelity = run->choice<Fidelity>(
            "fidelity", [](const std::string& s) { return parse_fidelity(s); }, "memo, stepped");
        run->finish();
    }
    raw.bfp = read_raw_bfp(top);
    raw.has_report = top.has("bfp_report");
    if (auto report = top.map("bfp_report")) {
        raw.report.mantissa_bits = report->list<int>("mantissa_bits");
        raw.report.rounding = report->list<std::string>("rounding");
        raw.report.tensors_where = report->location_of("tensors");
        const bool tensors_given = report->has("tensors");  // "tensors:" with no value means the defaults
        auto tensor_readers = report->maps("tensors");
        if (tensors_given) {
            raw.report.tensors.emplace();
            for (auto& t : tensor_readers) {
                RawTensor rt;
                rt.where = t.location();
                rt.name = t.scalar<std::string>("name");
                rt.distribution = t.choice<Distribution>(
                    "distribution", [](const std::string& s) { return parse_distribution(s); },
                    "normal, relu_normal, laplace, student_t");
                rt.scale = t.scalar<double>("scale");
                rt.dof = t.scalar<double>("dof");
                rt.count = t.scalar<std::uint64_t>("count");
                t.finish();
                raw.report.tensors->push_back(std::move(rt));
            }
        }
        report->finish();
    }
    read_training_sections(top, raw);
    read_cluster_sections(top, raw);
    top.finish();
    return raw;
}

// (2) Resolved layer: defaults, ranges, cross-field rules.
BfpParams resolve(const RawBfp& raw) {
    BfpParams p;
    p.group_size = in_range(raw.group_size, p.group_size, kGroupSize);
    p.exponent_bits = in_range(raw.exponent_bits, p.exponent_bits, kExponentBits);
    p.exponent_bias = in_range(raw.exponent_bias, p.exponent_bias, kExponentBias);
    p.overflow = raw.overflow.value_or(p.overflow);
    p.lfsr_bits = in_range(raw.lfsr_bits, p.lfsr_bits, kLfsrBits);
    p.noise_bits = in_range(raw.noise_bits, p.noise_bits, kNoiseBits);
    p.noise_bits = in_range(raw.noise_bits, p.noise_bits, 1, p.lfsr_bits);
    // Whole-format rules that hold for every mantissa width: the largest exponent fits
    // float32, the LFSR draws cover its period. The smallest LSB depends on m: see the report.
    if (auto error = bfp::validate(p.format(2)))
        throw ConfigError(raw.exponent_bias.where, *error);
    if (auto error = bfp::validate(p.noise(1)))
        throw ConfigError(raw.noise_bits.where, *error);
    return p;
}

TensorSpec resolve(const RawTensor& raw, std::size_t index) {
    TensorSpec t;
    t.name = raw.name.value_or("tensor" + std::to_string(index));
    t.distribution = raw.distribution.value_or(Distribution::normal);
    t.scale = in_range(raw.scale, 1.0, kTensorScale);
    if (raw.dof.value && t.distribution != Distribution::student_t)
        throw ConfigError(raw.dof.where, "dof applies only to distribution student_t");
    t.dof = in_range(raw.dof, 3.0, kTensorDof);
    t.count = static_cast<std::size_t>(in_range<std::uint64_t>(raw.count, 65536, kTensorCount));
    return t;
}

BfpReportParams resolve(const RawReport& raw, const BfpParams& bfp_params, const Location& bfp_where) {
    BfpReportParams p;
    if (raw.mantissa_bits.value) {
        p.mantissa_bits.clear();
        for (const auto& m : *raw.mantissa_bits.value) {
            check_range(*m.value, std::to_string(*m.value), kReportMantissaBits, m.where);
            if (auto error = bfp::validate(bfp_params.format(*m.value))) throw ConfigError(m.where, *error);
            p.mantissa_bits.push_back(*m.value);
        }
        if (p.mantissa_bits.empty()) throw ConfigError(raw.mantissa_bits.where, "expected at least one mantissa width");
    }
    if (!raw.mantissa_bits.value) {
        // Default widths: a bias that pushes their LSB below float32's range is still an error.
        for (const int m : p.mantissa_bits)
            if (auto error = bfp::validate(bfp_params.format(m))) throw ConfigError(bfp_where, *error);
    }
    if (raw.rounding.value) {
        p.roundings.clear();
        for (const auto& r : *raw.rounding.value) {
            const auto mode = bfp::parse_rounding(*r.value);
            if (!mode) throw ConfigError(r.where, "expected one of nearest, even, truncate, stochastic, got '" + *r.value + "'");
            p.roundings.push_back(*mode);
        }
        if (p.roundings.empty()) throw ConfigError(raw.rounding.where, "expected at least one rounding mode");
    }
    if (raw.tensors) {
        if (raw.tensors->empty()) throw ConfigError(raw.tensors_where, "expected at least one tensor");
        for (std::size_t i = 0; i < raw.tensors->size(); ++i) p.tensors.push_back(resolve((*raw.tensors)[i], i));
    } else {
        p.tensors = default_report_tensors();
    }
    return p;
}

/// Mantissa widths the fMAC array takes: 2, 4, 6 or 8 bits, valid with the BFP settings.
int mantissa_width(const Field<int>& field, int fallback, const BfpParams& bfp_params) {
    const int m = field.value_or(fallback);
    if (m != 2 && m != 4 && m != 6 && m != 8)
        throw ConfigError(field.where, "expected a mantissa width of 2, 4, 6 or 8 bits (whole 2-bit chunks), got " +
                                           std::to_string(m));
    if (auto error = bfp::validate(bfp_params.format(m))) throw ConfigError(field.where, *error);
    return m;
}

std::string resolve_path(const std::string& config_file, const std::string& path) {
    namespace fs = std::filesystem;
    const fs::path p(path);
    if (p.is_absolute()) return path;
    return (fs::path(config_file).parent_path() / p).lexically_normal().string();
}

/// KiB (a kSramCapacityKib value) in whole bits, at least 1.
std::uint64_t kib_to_bits(double kib) { return std::max<std::uint64_t>(1, checked_round(kib * 1024 * 8, "SRAM bits")); }

}  // namespace

ConfigError layer_size_error(const workload::Layer& layer, std::uint64_t batch, const Location& batch_where,
                             const SizeOverflow& overflow) {
    return ConfigError(layer.where, "layer '" + layer.name + "': its " + overflow.quantity() +
                                        " overflow 64 bits at workload.batch " + std::to_string(batch) + " (" +
                                        batch_where.describe() + "); lower the batch or the layer's sizes");
}

namespace {

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

/// The workload section: a trace file and a batch.
void resolve_workload(const RawConfig& raw, const Document& doc, Params& p) {
    const Location top_where = doc.locate(doc.root, "");
    if (!raw.workload || !raw.workload->trace.value)
        throw ConfigError(raw.workload ? raw.workload->trace.where : top_where,
                          "run.mode " + std::string(to_string(p.run.mode)) +
                              " needs workload.trace: a network trace (traces/*.yaml or a SCALE-Sim .csv)");
    p.workload.trace = *raw.workload->trace.value;
    p.workload.trace_path = resolve_path(doc.file, p.workload.trace);
    p.workload.batch = static_cast<std::size_t>(in_range<std::uint64_t>(raw.workload->batch, 32, kWorkloadBatch));
    if (std::error_code ec; !std::filesystem::is_regular_file(p.workload.trace_path, ec))
        throw ConfigError(raw.workload->trace.where, "no trace file at " + p.workload.trace_path +
                                                         " (a relative path is taken from the config file's folder)");
    p.workload.network = read_trace(p.workload.trace_path);
    p.workload.batch_where = raw.workload->batch.where;
    check_lowering(p.workload.network, p.workload.batch, p.workload.batch_where);
}

/// energy.table as written and resolved against the config's folder (empty = the built-in table).
EnergyParams energy_paths(const std::optional<RawEnergy>& raw, const Document& doc) {
    EnergyParams energy;
    energy.table = raw.value_or(RawEnergy{}).table.value_or("");
    energy.table_path = energy.table.empty() ? "" : resolve_path(doc.file, energy.table);
    return energy;
}

/// A node's keys in the config's units (MHz, KiB, GB/s, ns) into cycles and bits.
void resolve_node(const RawNode& rn, const BfpParams& bfp_params, NodeConfig& nc) {
    node::NodeParams& np = nc.resolved;
    nc.clock_mhz = in_range(rn.clock_mhz, nc.clock_mhz, kClockMhz);
    np.clock_hz = checked_round(nc.clock_mhz * 1e6, "clock in Hz");
    np.array.rows = in_range(rn.rows, 32, kArrayDim);
    np.array.cols = in_range(rn.cols, 32, kArrayDim);
    np.array.group_size = bfp_params.group_size;
    np.converter = converter::ConverterParams::derived_from(bfp_params.group_size);
    np.converter.lanes = in_range(rn.lanes, np.converter.lanes, kConverterLanes);
    np.converter.pipeline_latency_cycles =
        in_range(rn.latency_cycles, np.converter.pipeline_latency_cycles, kConverterLatency);
    nc.sram_exponent_kib = in_range(rn.exponent_bank.capacity_kib, nc.sram_exponent_kib, kSramCapacityKib);
    nc.sram_mantissa_kib = in_range(rn.mantissa_bank.capacity_kib, nc.sram_mantissa_kib, kSramCapacityKib);
    np.sram.exponent_bank.capacity_bits = kib_to_bits(nc.sram_exponent_kib);
    np.sram.mantissa_bank.capacity_bits = kib_to_bits(nc.sram_mantissa_kib);
    np.sram.exponent_bank.bits_per_cycle =
        in_range<std::uint64_t>(rn.exponent_bank.bits_per_cycle, np.sram.exponent_bank.bits_per_cycle, kSramBitsPerCycle);
    np.sram.mantissa_bank.bits_per_cycle =
        in_range<std::uint64_t>(rn.mantissa_bank.bits_per_cycle, np.sram.mantissa_bank.bits_per_cycle, kSramBitsPerCycle);
    nc.dram_type = rn.dram_type.value_or(nc.dram_type);
    nc.dram_bandwidth_gb_per_s = in_range(rn.dram_bandwidth_gb_per_s, nc.dram_bandwidth_gb_per_s, kBandwidthGbPerS);
    np.dram.bandwidth_bits_per_s = checked_round(nc.dram_bandwidth_gb_per_s * 8e9, "DRAM bits per second");
    nc.dram_latency_ns = in_range(rn.dram_latency_ns, nc.dram_latency_ns, kLatencyNs);
    np.dram.latency_cycles = checked_ceil(std::max(0.0, nc.dram_latency_ns * nc.clock_mhz / 1000.0 - 1e-9), "DRAM latency cycles");
    np.exponent_bits = bfp_params.exponent_bits;
    np.noise_bits = bfp_params.noise_bits;
    np.max_tile_rows = in_range<std::uint64_t>(rn.max_tile_rows, np.max_tile_rows, kMaxTileRows);
}

/// Throws ConfigError at the bank's capacity key if a phase of `phases` cannot be tiled.
void check_tiling(const std::vector<node::StepPhase>& phases, const node::NodeParams& np, const RawNode& rn,
                  const Params& p) {
    for (const auto& phase : phases) {
        try {
            (void)node::plan_tiles(phase.job, np);
        } catch (const node::TilingError& e) {
            const RawBank& bank = e.bank() == node::SramBank::exponent ? rn.exponent_bank : rn.mantissa_bank;
            throw ConfigError(bank.capacity_kib.where, "layer '" + p.workload.network.layers[phase.layer].name + "' (" +
                                                           fmac::to_string(phase.phase) + ") cannot be tiled: " +
                                                           e.what() + "; enlarge the bank");
        }
    }
}

void resolve_training(const RawConfig& raw, const Document& doc, Params& p) {
    // (1) Workload, (2) node.
    resolve_workload(raw, doc, p);
    const RawNode rn = raw.node.value_or(RawNode{});
    NodeConfig& nc = p.node;
    node::NodeParams& np = nc.resolved;
    resolve_node(rn, p.bfp, nc);

    // (3) Precision: defaults, then the overrides in order.
    const RawPrecision rp = raw.precision.value_or(RawPrecision{});
    PrecisionParams& pp = p.precision;
    pp.defaults.weights = mantissa_width(rp.weights, 8, p.bfp);
    pp.defaults.activations = mantissa_width(rp.activations, 8, p.bfp);
    pp.defaults.gradients = mantissa_width(rp.gradients, 8, p.bfp);
    pp.rounding.activations = rp.activation_rounding.value_or(pp.rounding.activations);
    pp.rounding.gradients = rp.gradient_rounding.value_or(pp.rounding.gradients);
    const auto& layers = p.workload.network.layers;
    pp.per_layer.assign(layers.size(), node::LayerPrecision{pp.defaults, pp.defaults, pp.defaults});
    for (const RawOverride& ro : rp.overrides) {
        PrecisionOverride o;
        if (!ro.layer.value) throw ConfigError(ro.where, "expected layer: the name of a layer in " + p.workload.trace);
        o.layer = *ro.layer.value;
        o.phase = ro.phase.value;
        if (ro.weights.value) o.weights = mantissa_width(ro.weights, 8, p.bfp);
        if (ro.activations.value) o.activations = mantissa_width(ro.activations, 8, p.bfp);
        if (ro.gradients.value) o.gradients = mantissa_width(ro.gradients, 8, p.bfp);
        std::size_t index = layers.size();
        for (std::size_t l = 0; l < layers.size(); ++l)
            if (layers[l].name == o.layer) index = l;
        if (index == layers.size())
            throw ConfigError(ro.layer.where, "no layer named '" + o.layer + "' in " + p.workload.trace);
        for (std::size_t ph = 0; ph < 3; ++ph) {
            if (o.phase && static_cast<std::size_t>(*o.phase) != ph) continue;
            node::TensorPrecision& t = pp.per_layer[index][ph];
            t.weights = o.weights.value_or(t.weights);
            t.activations = o.activations.value_or(t.activations);
            t.gradients = o.gradients.value_or(t.gradients);
        }
        pp.overrides.push_back(o);
    }

    // (4) Energy table, with the node's DRAM type.
    p.energy = energy_paths(raw.energy, doc);
    p.energy.resolved = load_energy_table(p.energy.table_path, nc.dram_type, rn.dram_type.where);

    // (5) Every phase must tile onto this node: checked here, where the SRAM keys are known.
    check_tiling(node::training_step_phases(p.workload.network, p.workload.batch, pp.per_layer, pp.rounding), np, rn, p);
}

interconnect::LinkParams resolve_link(const RawLink& raw) {
    interconnect::LinkParams link;
    link.bandwidth_gb_per_s = in_range(raw.bandwidth_gb_per_s, 100.0, kBandwidthGbPerS);
    link.latency_ns = in_range(raw.latency_ns, 500.0, kLatencyNs);
    link.energy_pj_per_bit = in_range(raw.energy_pj_per_bit, 5.0, kLinkEnergyPjPerBit);
    return link;
}

/// The most links a cluster may have: routing keeps state per link (a fully connected group
/// grows as count^2: 16384 nodes would be 134 million links and many gigabytes).
constexpr std::uint64_t kMaxLinks = std::uint64_t{1} << 20;

/// Links `kind` uses to join `count` nodes (trees: at most 2 per node, switches included).
std::uint64_t topology_links(TopologyKind kind, std::uint64_t count) {
    switch (kind) {
    case TopologyKind::fully_connected: return count * (count - 1) / 2;
    case TopologyKind::torus2d:
    case TopologyKind::tree: return 2 * count;
    case TopologyKind::ring:
    case TopologyKind::switch_star: return count;
    }
    return count;
}

/// `total` + `more` links, or a ConfigError at the topology key beyond kMaxLinks.
std::uint64_t add_links(std::uint64_t total, std::uint64_t more, const Location& where, TopologyKind kind,
                        std::uint64_t count) {
    if (total + more > kMaxLinks)
        throw ConfigError(where, "topology " + std::string(to_string(kind)) + " joins " + std::to_string(count) +
                                     " nodes with " + std::to_string(more) + " links, which brings the cluster to " +
                                     std::to_string(total + more) + "; a cluster has at most " + std::to_string(kMaxLinks) +
                                     " links (routing keeps state per link): join large groups with switch, torus2d or tree");
    return total + more;
}

interconnect::Topology build_group(const NodeGroupParams& g) {
    using interconnect::Topology;
    switch (g.topology) {
    case TopologyKind::ring: return Topology::ring(g.count, g.link);
    case TopologyKind::fully_connected: return Topology::fully_connected(g.count, g.link);
    case TopologyKind::switch_star: return Topology::switch_star(g.count, g.link);
    case TopologyKind::torus2d: return Topology::torus2d(g.torus_rows, g.torus_cols, g.link);
    case TopologyKind::tree: return Topology::tree(g.count, g.tree_fanout, g.link);
    }
    return Topology(g.count);
}

void resolve_cluster(const RawConfig& raw, const Document& doc, Params& p) {
    // (1) Workload and the energy table's path.
    resolve_workload(raw, doc, p);
    p.energy = energy_paths(raw.energy, doc);
    const Location top_where = doc.locate(doc.root, "");

    if (p.run.fidelity != Fidelity::memo)
        throw ConfigError(raw.run.fidelity.where, "cluster runs time nodes with the memo node model; run.fidelity stepped "
                                                  "applies to run.mode training_step");

    // (2) Node types: a node's keys, plus name, arrays, precision and DRAM capacity.
    if (!raw.node_types || raw.node_types->empty())
        throw ConfigError(raw.node_types ? raw.node_types_where : top_where,
                          "run.mode cluster needs node_types: a list of {name, arrays, clock_mhz, array, sram, dram, precision}");
    ClusterParams& c = p.cluster;
    for (const RawNodeType& rt : *raw.node_types) {
        NodeTypeParams t;
        if (!rt.name.value) throw ConfigError(rt.where, "expected name: what cluster.groups[].node_type refers to");
        t.name = *rt.name.value;
        for (const auto& other : c.node_types)
            if (other.name == t.name) throw ConfigError(rt.name.where, "a second node type named '" + t.name + "'");
        t.source = rt.source.value_or("");
        t.arrays = in_range(rt.arrays, 1, kNodeArrays);
        resolve_node(rt.node, p.bfp, t.node);
        // Each array is modelled as a node of its own with an equal share of the DRAM bandwidth.
        t.node.resolved.dram.bandwidth_bits_per_s =
            std::max<std::uint64_t>(1, t.node.resolved.dram.bandwidth_bits_per_s / static_cast<std::uint64_t>(t.arrays));
        t.dram_capacity_gib = in_range(rt.node.dram_capacity_gib, 0.0, kDramCapacityGib);
        t.precision.weights = mantissa_width(rt.weights, 8, p.bfp);
        t.precision.activations = mantissa_width(rt.activations, 8, p.bfp);
        t.precision.gradients = mantissa_width(rt.gradients, 8, p.bfp);
        t.energy = load_energy_table(p.energy.table_path, t.node.dram_type, rt.node.dram_type.where);
        const std::vector<node::LayerPrecision> precision(p.workload.network.layers.size(),
                                                          node::LayerPrecision{t.precision, t.precision, t.precision});
        check_tiling(node::training_step_phases(p.workload.network, p.workload.batch, precision, {}), t.node.resolved,
                     rt.node, p);
        c.node_types.push_back(std::move(t));
    }

    // (3) Groups of nodes and the topology joining them.
    if (!raw.cluster || raw.cluster->groups.empty())
        throw ConfigError(raw.cluster ? raw.cluster->groups_where : top_where,
                          "run.mode cluster needs cluster.groups: a list of {node_type, count, topology, link}");
    const RawCluster& rc = *raw.cluster;
    std::vector<interconnect::Topology> group_topologies;
    std::uint64_t links = 0;
    for (const RawGroup& rg : rc.groups) {
        NodeGroupParams g;
        if (!rg.node_type.value) throw ConfigError(rg.where, "expected node_type: the name of one of node_types");
        g.node_type = *rg.node_type.value;
        g.type_index = c.node_types.size();
        for (std::size_t i = 0; i < c.node_types.size(); ++i)
            if (c.node_types[i].name == g.node_type) g.type_index = i;
        if (g.type_index == c.node_types.size()) {
            std::string names;
            for (const auto& t : c.node_types) names += (names.empty() ? "" : ", ") + t.name;
            throw ConfigError(rg.node_type.where, "no node type named '" + g.node_type + "' (node_types has " + names + ")");
        }
        g.count = static_cast<std::size_t>(in_range<std::uint64_t>(rg.count, 1, kGroupCount));
        g.topology = rg.topology.value_or(TopologyKind::ring);
        if (g.topology == TopologyKind::torus2d) {
            if (!rg.rows.value || !rg.cols.value)
                throw ConfigError(rg.where, "topology torus2d needs torus: {rows, cols}");
            g.torus_rows = static_cast<std::size_t>(in_range<std::uint64_t>(rg.rows, 1, kGroupCount));
            g.torus_cols = static_cast<std::size_t>(in_range<std::uint64_t>(rg.cols, 1, kGroupCount));
            if (g.torus_rows * g.torus_cols != g.count)
                throw ConfigError(rg.rows.where, "torus rows x cols = " + std::to_string(g.torus_rows * g.torus_cols) +
                                                     " but count is " + std::to_string(g.count));
        } else if (rg.rows.value || rg.cols.value) {
            throw ConfigError(rg.rows.where, "torus: applies to topology torus2d only");
        }
        g.tree_fanout = static_cast<std::size_t>(in_range<std::uint64_t>(rg.fanout, 2, kTreeFanout));
        if (rg.fanout.value && g.topology != TopologyKind::tree)
            throw ConfigError(rg.fanout.where, "tree_fanout applies to topology tree only");
        g.link = resolve_link(rg.link);
        if (c.node_type.size() + g.count > static_cast<std::size_t>(kGroupCount.max))
            throw ConfigError(rg.count.where, "the groups so far hold " + std::to_string(c.node_type.size() + g.count) +
                                                  " nodes; a cluster has at most " + exact_number(kGroupCount.max) +
                                                  " nodes in all (" + std::string(kGroupCount.reason) + ")");
        links = add_links(links, topology_links(g.topology, g.count), rg.topology.where, g.topology, g.count);
        group_topologies.push_back(build_group(g));
        for (std::size_t i = 0; i < g.count; ++i) c.node_type.push_back(g.type_index);
        c.group_first_node.push_back(c.node_type.size() - g.count);
        c.groups.push_back(std::move(g));
    }
    if (rc.upper_topology) {
        if (!rc.upper_topology->value)
            throw ConfigError(rc.upper_where, "expected cluster.upper.topology: ring, fully_connected or switch");
        c.upper_topology = *rc.upper_topology->value;
        if (*c.upper_topology != TopologyKind::ring && *c.upper_topology != TopologyKind::fully_connected &&
            *c.upper_topology != TopologyKind::switch_star)
            throw ConfigError(rc.upper_topology->where, "expected one of ring, fully_connected, switch");
        c.upper_link = resolve_link(rc.upper_link);
        links = add_links(links, topology_links(*c.upper_topology, c.groups.size()), rc.upper_topology->where,
                          *c.upper_topology, c.groups.size());
    }
    c.gradient_sync = rc.gradient_sync.value.value_or(GradientSyncAlgorithm::best);
    c.optimizer = rc.optimizer.value.value_or(OptimizerKind::momentum);
    if (group_topologies.size() == 1) {
        if (c.upper_topology) throw ConfigError(rc.upper_where, "cluster.upper joins groups, and there is only one group");
        c.topology = std::make_shared<interconnect::Topology>(std::move(group_topologies.front()));
    } else {
        if (!c.upper_topology) {
            const std::size_t second = c.group_first_node[1];
            throw ConfigError(rc.upper_where, "cluster.groups has " + std::to_string(c.groups.size()) +
                                                  " groups but no cluster.upper {topology, link} joins them: nodes " +
                                                  std::to_string(second) + ".." + std::to_string(c.node_type.size() - 1) +
                                                  " are unreachable from node 0");
        }
        const auto upper = *c.upper_topology == TopologyKind::ring             ? interconnect::UpperKind::ring
                           : *c.upper_topology == TopologyKind::fully_connected ? interconnect::UpperKind::fully_connected
                                                                                : interconnect::UpperKind::switch_star;
        c.topology = std::make_shared<interconnect::Topology>(
            interconnect::Topology::hierarchical(group_topologies, upper, c.upper_link));
    }
    if (const auto lost = c.topology->unreachable_nodes(); !lost.empty())
        throw ConfigError(rc.where, "the topology leaves node " + std::to_string(lost.front()) + " unconnected");

    // (4) The planner (a batch too small for it is the planner's PlanError, in every command).
    const RawPlanner rp = raw.planner.value_or(RawPlanner{});
    p.planner.kind = rp.name.value_or(p.planner.kind);
    p.planner.comm_only = rp.comm_only.value_or(false);
    p.planner.equal_split = rp.equal_split.value_or(false);
}

std::string format_double(double v) {
    char buf[32];
    for (int precision = 6; precision <= 17; ++precision) {
        std::snprintf(buf, sizeof buf, "%.*g", precision, v);
        if (std::strtod(buf, nullptr) == v) break;
    }
    return buf;
}

}  // namespace

std::string_view to_string(RunMode mode) { return name_of(kRunModes, mode); }
std::string_view to_string(Fidelity fidelity) { return name_of(kFidelities, fidelity); }
std::optional<Fidelity> parse_fidelity(std::string_view name) { return value_of(kFidelities, name); }
std::string_view to_string(Distribution d) { return name_of(kDistributions, d); }
std::optional<RunMode> parse_run_mode(std::string_view name) { return value_of(kRunModes, name); }
std::optional<Distribution> parse_distribution(std::string_view name) { return value_of(kDistributions, name); }
std::string_view to_string(TopologyKind kind) { return name_of(kTopologies, kind); }
std::string_view to_string(GradientSyncAlgorithm algorithm) { return name_of(kGradientSync, algorithm); }
std::string_view to_string(OptimizerKind kind) { return name_of(kOptimizers, kind); }
int optimizer_state_copies(OptimizerKind kind) {
    switch (kind) {
    case OptimizerKind::sgd: return 0;
    case OptimizerKind::momentum: return 1;
    case OptimizerKind::adam: return 2;
    }
    return 1;
}

std::vector<TensorSpec> default_report_tensors() {
    return {
        {"weights", Distribution::normal, 0.05, 3.0, 65536},
        {"activations", Distribution::relu_normal, 1.0, 3.0, 65536},
        {"gradients", Distribution::student_t, 1e-4, 3.0, 65536},
    };
}

BfpParams read_bfp_section(MapReader& top) { return resolve(read_raw_bfp(top)); }

NodeSections read_node_sections(MapReader& top, const BfpParams& bfp_params) {
    RawNode rn;
    if (auto n = top.map("node")) {
        rn = read_node(*n, false);
        n->finish();
    }
    NodeSections out;
    resolve_node(rn, bfp_params, out.node);
    out.energy = energy_paths(read_raw_energy(top), *top.document());
    out.energy.resolved = load_energy_table(out.energy.table_path, out.node.dram_type, rn.dram_type.where);
    return out;
}

Params load(const std::string& path, const std::vector<std::string>& overrides) {
    return load_text(read_input_file(path, "config file"), path, overrides);
}

Params load_text(const std::string& text, const std::string& path, const std::vector<std::string>& overrides) {
    Document doc = Document::parse(text, path);
    for (const auto& o : overrides) doc.apply_override(o);
    const RawConfig raw = read_raw(doc);
    Params p;
    p.source_file = path;
    p.run.mode = raw.run.mode.value_or(p.run.mode);
    p.run.seed = raw.run.seed.value_or(p.run.seed);
    p.run.fidelity = raw.run.fidelity.value_or(p.run.fidelity);
    p.bfp = resolve(raw.bfp);
    // Sections belong to one mode: a section the mode would ignore is an error, not a no-op.
    const auto only_for = [&](bool present, const std::string& key, RunMode mode) {
        if (present && p.run.mode != mode)
            throw ConfigError(doc.locate(doc.root[key], key), "applies only to run.mode " + std::string(to_string(mode)) +
                                                                  " (run.mode is " + std::string(to_string(p.run.mode)) + ")");
    };
    only_for(raw.has_report, "bfp_report", RunMode::bfp_report);
    const auto only_for_any = [&](bool present, const std::string& key) {
        if (present && p.run.mode == RunMode::bfp_report)
            throw ConfigError(doc.locate(doc.root[key], key), "applies only to run.mode training_step or cluster");
    };
    only_for_any(raw.workload.has_value(), "workload");
    only_for(raw.node.has_value(), "node", RunMode::training_step);
    only_for(raw.precision.has_value(), "precision", RunMode::training_step);
    only_for_any(raw.energy.has_value(), "energy");
    only_for(raw.node_types.has_value(), "node_types", RunMode::cluster);
    only_for(raw.cluster.has_value(), "cluster", RunMode::cluster);
    only_for(raw.planner.has_value(), "planner", RunMode::cluster);
    switch (p.run.mode) {
    case RunMode::bfp_report: p.bfp_report = resolve(raw.report, p.bfp, raw.bfp.exponent_bias.where); break;
    case RunMode::training_step: resolve_training(raw, doc, p); break;
    case RunMode::cluster: resolve_cluster(raw, doc, p); break;
    }
    return p;
}

namespace {

/// The keys of a node section, inside a map the caller opened.
void dump_node_keys(YAML::Emitter& out, const NodeConfig& n, std::optional<double> dram_capacity_gib) {
    const node::NodeParams& r = n.resolved;
    out << YAML::Key << "clock_mhz" << YAML::Value << format_double(n.clock_mhz);
    out << YAML::Key << "array" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "rows" << YAML::Value
        << r.array.rows << YAML::Key << "cols" << YAML::Value << r.array.cols << YAML::EndMap;
    out << YAML::Key << "converter" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "lanes"
        << YAML::Value << r.converter.lanes << YAML::Key << "pipeline_latency_cycles" << YAML::Value
        << r.converter.pipeline_latency_cycles << YAML::EndMap;
    out << YAML::Key << "sram" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "exponent_bank" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "capacity_kib"
        << YAML::Value << format_double(n.sram_exponent_kib) << YAML::Key << "bits_per_cycle" << YAML::Value
        << r.sram.exponent_bank.bits_per_cycle << YAML::EndMap;
    out << YAML::Key << "mantissa_bank" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "capacity_kib"
        << YAML::Value << format_double(n.sram_mantissa_kib) << YAML::Key << "bits_per_cycle" << YAML::Value
        << r.sram.mantissa_bank.bits_per_cycle << YAML::EndMap;
    out << YAML::EndMap;
    out << YAML::Key << "dram" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "type" << YAML::Value
        << n.dram_type << YAML::Key << "bandwidth_gb_per_s" << YAML::Value << format_double(n.dram_bandwidth_gb_per_s)
        << YAML::Key << "latency_ns" << YAML::Value << format_double(n.dram_latency_ns);
    if (dram_capacity_gib) out << YAML::Key << "capacity_gib" << YAML::Value << format_double(*dram_capacity_gib);
    out << YAML::EndMap;
    out << YAML::Key << "tiling" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "max_tile_rows"
        << YAML::Value << r.max_tile_rows << YAML::EndMap;
}

void dump_workload(YAML::Emitter& out, const Params& p) {
    namespace fs = std::filesystem;
    out << YAML::Key << "workload" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "trace" << YAML::Value << fs::absolute(p.workload.trace_path).lexically_normal().string();
    out << YAML::Key << "batch" << YAML::Value << p.workload.batch;
    out << YAML::EndMap;
}

void dump_link(YAML::Emitter& out, const interconnect::LinkParams& link) {
    out << YAML::Key << "link" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "bandwidth_gb_per_s"
        << YAML::Value << format_double(link.bandwidth_gb_per_s) << YAML::Key << "latency_ns" << YAML::Value
        << format_double(link.latency_ns) << YAML::Key << "energy_pj_per_bit" << YAML::Value
        << format_double(link.energy_pj_per_bit) << YAML::EndMap;
}

void dump_cluster(YAML::Emitter& out, const Params& p) {
    namespace fs = std::filesystem;
    dump_workload(out, p);
    out << YAML::Key << "node_types" << YAML::Value << YAML::BeginSeq;
    for (const NodeTypeParams& t : p.cluster.node_types) {
        out << YAML::BeginMap;
        out << YAML::Key << "name" << YAML::Value << t.name;
        if (!t.source.empty()) out << YAML::Key << "source" << YAML::Value << t.source;
        out << YAML::Key << "arrays" << YAML::Value << t.arrays;
        dump_node_keys(out, t.node, t.dram_capacity_gib);
        out << YAML::Key << "precision" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "weights"
            << YAML::Value << t.precision.weights << YAML::Key << "activations" << YAML::Value << t.precision.activations
            << YAML::Key << "gradients" << YAML::Value << t.precision.gradients << YAML::EndMap;
        out << YAML::EndMap;
    }
    out << YAML::EndSeq;
    out << YAML::Key << "cluster" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "groups" << YAML::Value << YAML::BeginSeq;
    for (const NodeGroupParams& g : p.cluster.groups) {
        out << YAML::BeginMap;
        out << YAML::Key << "node_type" << YAML::Value << g.node_type;
        out << YAML::Key << "count" << YAML::Value << g.count;
        out << YAML::Key << "topology" << YAML::Value << std::string(to_string(g.topology));
        if (g.topology == TopologyKind::torus2d)
            out << YAML::Key << "torus" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "rows"
                << YAML::Value << g.torus_rows << YAML::Key << "cols" << YAML::Value << g.torus_cols << YAML::EndMap;
        if (g.topology == TopologyKind::tree) out << YAML::Key << "tree_fanout" << YAML::Value << g.tree_fanout;
        dump_link(out, g.link);
        out << YAML::EndMap;
    }
    out << YAML::EndSeq;
    if (p.cluster.upper_topology) {
        out << YAML::Key << "upper" << YAML::Value << YAML::BeginMap;
        out << YAML::Key << "topology" << YAML::Value << std::string(to_string(*p.cluster.upper_topology));
        dump_link(out, p.cluster.upper_link);
        out << YAML::EndMap;
    }
    out << YAML::Key << "optimizer" << YAML::Value << std::string(to_string(p.cluster.optimizer));
    out << YAML::Key << "gradient_sync" << YAML::Value << YAML::BeginMap << YAML::Key << "algorithm" << YAML::Value
        << std::string(to_string(p.cluster.gradient_sync)) << YAML::EndMap;
    out << YAML::EndMap;
    out << YAML::Key << "planner" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "name" << YAML::Value << std::string(planner::to_string(p.planner.kind));
    out << YAML::Key << "comm_only" << YAML::Value << p.planner.comm_only;
    out << YAML::Key << "equal_split" << YAML::Value << p.planner.equal_split;
    out << YAML::EndMap;
    out << YAML::Key << "energy" << YAML::Value << YAML::BeginMap;
    if (!p.energy.table.empty())
        out << YAML::Key << "table" << YAML::Value << fs::absolute(p.energy.table_path).lexically_normal().string();
    out << YAML::EndMap;
}

void dump_training(YAML::Emitter& out, const Params& p) {
    namespace fs = std::filesystem;
    const auto absolute = [](const std::string& path) { return fs::absolute(path).lexically_normal().string(); };
    dump_workload(out, p);
    out << YAML::Key << "node" << YAML::Value << YAML::BeginMap;
    dump_node_keys(out, p.node, std::nullopt);
    out << YAML::EndMap;
    const PrecisionParams& pp = p.precision;
    out << YAML::Key << "precision" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "weights" << YAML::Value << pp.defaults.weights;
    out << YAML::Key << "activations" << YAML::Value << pp.defaults.activations;
    out << YAML::Key << "gradients" << YAML::Value << pp.defaults.gradients;
    out << YAML::Key << "rounding" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "activations"
        << YAML::Value << std::string(bfp::to_string(pp.rounding.activations)) << YAML::Key << "gradients"
        << YAML::Value << std::string(bfp::to_string(pp.rounding.gradients)) << YAML::EndMap;
    out << YAML::Key << "layers" << YAML::Value << YAML::BeginSeq;
    for (const auto& o : pp.overrides) {
        out << YAML::Flow << YAML::BeginMap << YAML::Key << "layer" << YAML::Value << o.layer;
        if (o.phase) out << YAML::Key << "phase" << YAML::Value << std::string(name_of(kPhases, *o.phase));
        if (o.weights) out << YAML::Key << "weights" << YAML::Value << *o.weights;
        if (o.activations) out << YAML::Key << "activations" << YAML::Value << *o.activations;
        if (o.gradients) out << YAML::Key << "gradients" << YAML::Value << *o.gradients;
        out << YAML::EndMap;
    }
    out << YAML::EndSeq;
    out << YAML::EndMap;
    out << YAML::Key << "energy" << YAML::Value << YAML::BeginMap;
    if (!p.energy.table.empty()) out << YAML::Key << "table" << YAML::Value << absolute(p.energy.table_path);
    out << YAML::EndMap;
}

}  // namespace

std::string dump(const Params& p) {
    YAML::Emitter out;
    out << YAML::BeginMap;
    out << YAML::Key << "run" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "mode" << YAML::Value << std::string(to_string(p.run.mode));
    out << YAML::Key << "seed" << YAML::Value << p.run.seed;
    out << YAML::Key << "fidelity" << YAML::Value << std::string(to_string(p.run.fidelity));
    out << YAML::EndMap;
    out << YAML::Key << "bfp" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "group_size" << YAML::Value << p.bfp.group_size;
    out << YAML::Key << "exponent_bits" << YAML::Value << p.bfp.exponent_bits;
    out << YAML::Key << "exponent_bias" << YAML::Value << p.bfp.exponent_bias;
    out << YAML::Key << "overflow" << YAML::Value << std::string(bfp::to_string(p.bfp.overflow));
    out << YAML::Key << "noise_bits" << YAML::Value << p.bfp.noise_bits;
    out << YAML::Key << "lfsr_bits" << YAML::Value << p.bfp.lfsr_bits;
    out << YAML::EndMap;
    if (p.run.mode == RunMode::bfp_report) {
        out << YAML::Key << "bfp_report" << YAML::Value << YAML::BeginMap;
        out << YAML::Key << "mantissa_bits" << YAML::Value << YAML::Flow << p.bfp_report.mantissa_bits;
        out << YAML::Key << "rounding" << YAML::Value << YAML::Flow << YAML::BeginSeq;
        for (auto r : p.bfp_report.roundings) out << std::string(bfp::to_string(r));
        out << YAML::EndSeq;
        out << YAML::Key << "tensors" << YAML::Value << YAML::BeginSeq;
        for (const auto& t : p.bfp_report.tensors) {
            out << YAML::Flow << YAML::BeginMap;
            out << YAML::Key << "name" << YAML::Value << t.name;
            out << YAML::Key << "distribution" << YAML::Value << std::string(to_string(t.distribution));
            out << YAML::Key << "scale" << YAML::Value << format_double(t.scale);
            if (t.distribution == Distribution::student_t) out << YAML::Key << "dof" << YAML::Value << format_double(t.dof);
            out << YAML::Key << "count" << YAML::Value << t.count;
            out << YAML::EndMap;
        }
        out << YAML::EndSeq;
        out << YAML::EndMap;
    } else if (p.run.mode == RunMode::training_step) {
        dump_training(out, p);
    } else {
        dump_cluster(out, p);
    }
    out << YAML::EndMap;
    return std::string(out.c_str()) + "\n";
}

}  // namespace fastsim::config
