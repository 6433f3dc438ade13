// SPDX-License-Identifier: MIT
#include "config/load.h"

#include <array>
#include <cmath>
#include <cstdio>
#include <utility>

#include "config/energy_table.h"
#include "config/trace_reader.h"
#include "config/yaml_reader.h"

#include <filesystem>

namespace fastsim::config {
namespace {

constexpr std::array<std::pair<std::string_view, RunMode>, 2> kRunModes{{
    {"bfp_report", RunMode::bfp_report},
    {"training_step", RunMode::training_step},
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

/// Range check for an integer field; `what` completes "expected ...".
template <typename T>
T in_range(const Field<T>& field, T fallback, T low, T high) {
    const T v = field.value_or(fallback);
    if (v < low || v > high)
        throw ConfigError(field.where, "expected a value between " + std::to_string(low) + " and " +
                                           std::to_string(high) + ", got " + std::to_string(v));
    return v;
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
};

RawBank read_bank(MapReader& sram, const std::string& key) {
    RawBank bank;
    auto reader = sram.map(key).value_or(MapReader(*sram.document(), YAML::Node(), sram.path() + "." + key));
    bank.capacity_kib = reader.scalar<double>("capacity_kib");
    bank.bits_per_cycle = reader.scalar<std::uint64_t>("bits_per_cycle");
    reader.finish();
    return bank;
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
        RawNode rn;
        rn.clock_mhz = n->scalar<double>("clock_mhz");
        if (auto a = n->map("array")) {
            rn.rows = a->scalar<int>("rows");
            rn.cols = a->scalar<int>("cols");
            a->finish();
        }
        if (auto c = n->map("converter")) {
            rn.lanes = c->scalar<int>("lanes");
            rn.latency_cycles = c->scalar<int>("pipeline_latency_cycles");
            c->finish();
        }
        MapReader sram = n->map("sram").value_or(MapReader(*n->document(), YAML::Node(), "node.sram"));
        rn.exponent_bank = read_bank(sram, "exponent_bank");
        rn.mantissa_bank = read_bank(sram, "mantissa_bank");
        sram.finish();
        MapReader dram = n->map("dram").value_or(MapReader(*n->document(), YAML::Node(), "node.dram"));
        rn.dram_type = dram.scalar<std::string>("type");
        rn.dram_bandwidth_gb_per_s = dram.scalar<double>("bandwidth_gb_per_s");
        rn.dram_latency_ns = dram.scalar<double>("latency_ns");
        dram.finish();
        if (auto t = n->map("tiling")) {
            rn.max_tile_rows = t->scalar<std::uint64_t>("max_tile_rows");
            t->finish();
        }
        n->finish();
        raw.node = rn;
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
    if (auto e = top.map("energy")) {
        RawEnergy re;
        re.table = e->scalar<std::string>("table");
        e->finish();
        raw.energy = re;
    }
}

RawConfig read_raw(const Document& doc) {
    RawConfig raw;
    MapReader top(doc, doc.root, "");
    if (auto run = top.map("run")) {
        raw.run.mode = run->choice<RunMode>(
            "mode", [](const std::string& s) { return parse_run_mode(s); }, "bfp_report");
        raw.run.seed = run->scalar<std::uint64_t>("seed");
        raw.run.fidelity = run->choice<Fidelity>(
            "fidelity", [](const std::string& s) { return parse_fidelity(s); }, "memo, stepped");
        run->finish();
    }
    MapReader bfp = top.map("bfp").value_or(MapReader(doc, YAML::Node(), "bfp"));
    raw.bfp.group_size = bfp.scalar<int>("group_size");
    raw.bfp.exponent_bits = bfp.scalar<int>("exponent_bits");
    raw.bfp.exponent_bias = bfp.scalar<int>("exponent_bias");
    raw.bfp.overflow = bfp.choice<bfp::Overflow>(
        "overflow", [](const std::string& s) { return bfp::parse_overflow(s); }, "nan, saturate");
    raw.bfp.noise_bits = bfp.scalar<int>("noise_bits");
    raw.bfp.lfsr_bits = bfp.scalar<int>("lfsr_bits");
    bfp.finish();
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
    top.finish();
    return raw;
}

// (2) Resolved layer: defaults, ranges, cross-field rules.
BfpParams resolve(const RawBfp& raw) {
    BfpParams p;
    p.group_size = in_range(raw.group_size, p.group_size, 1, bfp::kMaxGroupSize);
    p.exponent_bits = in_range(raw.exponent_bits, p.exponent_bits, 2, bfp::kMaxExponentBits);
    p.exponent_bias = in_range(raw.exponent_bias, p.exponent_bias, -200, 200);
    p.overflow = raw.overflow.value_or(p.overflow);
    p.lfsr_bits = in_range(raw.lfsr_bits, p.lfsr_bits, 2, 32);
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
    t.scale = raw.scale.value_or(1.0);
    if (!(t.scale > 0) || !std::isfinite(t.scale))
        throw ConfigError(raw.scale.where, "expected a positive finite scale, got " + std::to_string(t.scale));
    if (raw.dof.value && t.distribution != Distribution::student_t)
        throw ConfigError(raw.dof.where, "dof applies only to distribution student_t");
    t.dof = raw.dof.value_or(3.0);
    if (!(t.dof > 2) || !std::isfinite(t.dof))
        throw ConfigError(raw.dof.where, "expected dof > 2 (finite variance), got " + std::to_string(t.dof));
    const std::uint64_t count = raw.count.value_or(65536);
    if (count < 1 || count > (std::uint64_t{1} << 28))
        throw ConfigError(raw.count.where, "expected a count between 1 and 2^28, got " + std::to_string(count));
    t.count = static_cast<std::size_t>(count);
    return t;
}

BfpReportParams resolve(const RawReport& raw, const BfpParams& bfp_params, const Location& bfp_where) {
    BfpReportParams p;
    if (raw.mantissa_bits.value) {
        p.mantissa_bits.clear();
        for (const auto& m : *raw.mantissa_bits.value) {
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

/// A positive finite number from a field.
double positive(const Field<double>& field, double fallback, const char* what) {
    const double v = field.value_or(fallback);
    if (!(v > 0) || !std::isfinite(v))
        throw ConfigError(field.where, std::string("expected a positive ") + what + ", got " + std::to_string(v));
    return v;
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

std::uint64_t kib_to_bits(const Field<double>& field, double kib) {
    const double bits = std::round(kib * 1024 * 8);
    if (bits < 1 || bits > 0x1p60) throw ConfigError(field.where, "expected a capacity between 1 bit and 2^60 bits");
    return static_cast<std::uint64_t>(bits);
}

void resolve_training(const RawConfig& raw, const Document& doc, Params& p) {
    // (1) Workload: a trace file and a batch.
    const Location top_where = doc.locate(doc.root, "");
    if (!raw.workload || !raw.workload->trace.value)
        throw ConfigError(raw.workload ? raw.workload->trace.where : top_where,
                          "run.mode training_step needs workload.trace: a network trace (traces/*.yaml or a SCALE-Sim .csv)");
    p.workload.trace = *raw.workload->trace.value;
    p.workload.trace_path = resolve_path(doc.file, p.workload.trace);
    p.workload.batch = static_cast<std::size_t>(in_range<std::uint64_t>(raw.workload->batch, 32, 1, 1u << 20));
    if (std::error_code ec; !std::filesystem::is_regular_file(p.workload.trace_path, ec))
        throw ConfigError(raw.workload->trace.where, "no trace file at " + p.workload.trace_path +
                                                         " (a relative path is taken from the config file's folder)");
    p.workload.network = read_trace(p.workload.trace_path);

    // (2) Node: units of the config (MHz, KiB, GB/s, ns) into cycles and bits.
    const RawNode rn = raw.node.value_or(RawNode{});
    NodeConfig& nc = p.node;
    node::NodeParams& np = nc.resolved;
    nc.clock_mhz = positive(rn.clock_mhz, nc.clock_mhz, "clock in MHz");
    np.clock_hz = static_cast<std::uint64_t>(std::llround(nc.clock_mhz * 1e6));
    np.array.rows = in_range(rn.rows, 32, 1, 4096);
    np.array.cols = in_range(rn.cols, 32, 1, 4096);
    np.array.group_size = p.bfp.group_size;
    np.converter = converter::ConverterParams::derived_from(p.bfp.group_size);
    np.converter.lanes = in_range(rn.lanes, np.converter.lanes, 1, 1 << 16);
    np.converter.pipeline_latency_cycles = in_range(rn.latency_cycles, np.converter.pipeline_latency_cycles, 0, 1 << 16);
    nc.sram_exponent_kib = positive(rn.exponent_bank.capacity_kib, nc.sram_exponent_kib, "capacity in KiB");
    nc.sram_mantissa_kib = positive(rn.mantissa_bank.capacity_kib, nc.sram_mantissa_kib, "capacity in KiB");
    np.sram.exponent_bank.capacity_bits = kib_to_bits(rn.exponent_bank.capacity_kib, nc.sram_exponent_kib);
    np.sram.mantissa_bank.capacity_bits = kib_to_bits(rn.mantissa_bank.capacity_kib, nc.sram_mantissa_kib);
    np.sram.exponent_bank.bits_per_cycle =
        in_range<std::uint64_t>(rn.exponent_bank.bits_per_cycle, np.sram.exponent_bank.bits_per_cycle, 1, 1u << 24);
    np.sram.mantissa_bank.bits_per_cycle =
        in_range<std::uint64_t>(rn.mantissa_bank.bits_per_cycle, np.sram.mantissa_bank.bits_per_cycle, 1, 1u << 24);
    nc.dram_type = rn.dram_type.value_or(nc.dram_type);
    nc.dram_bandwidth_gb_per_s = positive(rn.dram_bandwidth_gb_per_s, nc.dram_bandwidth_gb_per_s, "bandwidth in GB/s");
    np.dram.bandwidth_bits_per_s = static_cast<std::uint64_t>(std::llround(nc.dram_bandwidth_gb_per_s * 8e9));
    nc.dram_latency_ns = rn.dram_latency_ns.value_or(nc.dram_latency_ns);
    if (!(nc.dram_latency_ns >= 0) || !std::isfinite(nc.dram_latency_ns))
        throw ConfigError(rn.dram_latency_ns.where, "expected a latency >= 0 ns");
    np.dram.latency_cycles = static_cast<std::uint64_t>(std::ceil(nc.dram_latency_ns * nc.clock_mhz / 1000.0 - 1e-9));
    np.exponent_bits = p.bfp.exponent_bits;
    np.noise_bits = p.bfp.noise_bits;
    np.max_tile_rows = in_range<std::uint64_t>(rn.max_tile_rows, np.max_tile_rows, 1, 1u << 30);

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
    const RawEnergy re = raw.energy.value_or(RawEnergy{});
    p.energy.table = re.table.value_or("");
    p.energy.table_path = p.energy.table.empty() ? "" : resolve_path(doc.file, p.energy.table);
    p.energy.resolved = load_energy_table(p.energy.table_path, nc.dram_type, rn.dram_type.where);

    // (5) Every phase must tile onto this node: checked here, where the SRAM keys are known.
    for (const auto& phase : node::training_step_phases(p.workload.network, p.workload.batch, pp.per_layer, pp.rounding)) {
        try {
            (void)node::plan_tiles(phase.job, np);
        } catch (const node::TilingError& e) {
            const bool exponent = std::string(e.what()).find("exponent bank") != std::string::npos;
            const RawBank& bank = exponent ? rn.exponent_bank : rn.mantissa_bank;
            throw ConfigError(bank.capacity_kib.where, "layer '" + layers[phase.layer].name + "' (" +
                                                           fmac::to_string(phase.phase) + ") cannot be tiled: " +
                                                           e.what() + "; enlarge the bank");
        }
    }
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

std::vector<TensorSpec> default_report_tensors() {
    return {
        {"weights", Distribution::normal, 0.05, 3.0, 65536},
        {"activations", Distribution::relu_normal, 1.0, 3.0, 65536},
        {"gradients", Distribution::student_t, 1e-4, 3.0, 65536},
    };
}

Params load(const std::string& path, const std::vector<std::string>& overrides) {
    Document doc = Document::load(path);
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
    only_for(raw.workload.has_value(), "workload", RunMode::training_step);
    only_for(raw.node.has_value(), "node", RunMode::training_step);
    only_for(raw.precision.has_value(), "precision", RunMode::training_step);
    only_for(raw.energy.has_value(), "energy", RunMode::training_step);
    if (p.run.mode == RunMode::bfp_report)
        p.bfp_report = resolve(raw.report, p.bfp, raw.bfp.exponent_bias.where);
    else
        resolve_training(raw, doc, p);
    return p;
}

namespace {

void dump_training(YAML::Emitter& out, const Params& p) {
    namespace fs = std::filesystem;
    const auto absolute = [](const std::string& path) { return fs::absolute(path).lexically_normal().string(); };
    out << YAML::Key << "workload" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "trace" << YAML::Value << absolute(p.workload.trace_path);
    out << YAML::Key << "batch" << YAML::Value << p.workload.batch;
    out << YAML::EndMap;
    const NodeConfig& n = p.node;
    const node::NodeParams& r = n.resolved;
    out << YAML::Key << "node" << YAML::Value << YAML::BeginMap;
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
        << YAML::Key << "latency_ns" << YAML::Value << format_double(n.dram_latency_ns) << YAML::EndMap;
    out << YAML::Key << "tiling" << YAML::Value << YAML::Flow << YAML::BeginMap << YAML::Key << "max_tile_rows"
        << YAML::Value << r.max_tile_rows << YAML::EndMap;
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
    } else {
        dump_training(out, p);
    }
    out << YAML::EndMap;
    return std::string(out.c_str()) + "\n";
}

}  // namespace fastsim::config
