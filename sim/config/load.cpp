// SPDX-License-Identifier: MIT
#include "config/load.h"

#include <array>
#include <cmath>
#include <cstdio>
#include <utility>

#include "config/yaml_reader.h"

namespace fastsim::config {
namespace {

constexpr std::array<std::pair<std::string_view, RunMode>, 1> kRunModes{{{"bfp_report", RunMode::bfp_report}}};
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
};

RawConfig read_raw(const Document& doc) {
    RawConfig raw;
    MapReader top(doc, doc.root, "");
    if (auto run = top.map("run")) {
        raw.run.mode = run->choice<RunMode>(
            "mode", [](const std::string& s) { return parse_run_mode(s); }, "bfp_report");
        raw.run.seed = run->scalar<std::uint64_t>("seed");
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
    p.bfp = resolve(raw.bfp);
    p.bfp_report = resolve(raw.report, p.bfp, raw.bfp.exponent_bias.where);
    return p;
}

std::string dump(const Params& p) {
    YAML::Emitter out;
    out << YAML::BeginMap;
    out << YAML::Key << "run" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "mode" << YAML::Value << std::string(to_string(p.run.mode));
    out << YAML::Key << "seed" << YAML::Value << p.run.seed;
    out << YAML::EndMap;
    out << YAML::Key << "bfp" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "group_size" << YAML::Value << p.bfp.group_size;
    out << YAML::Key << "exponent_bits" << YAML::Value << p.bfp.exponent_bits;
    out << YAML::Key << "exponent_bias" << YAML::Value << p.bfp.exponent_bias;
    out << YAML::Key << "overflow" << YAML::Value << std::string(bfp::to_string(p.bfp.overflow));
    out << YAML::Key << "noise_bits" << YAML::Value << p.bfp.noise_bits;
    out << YAML::Key << "lfsr_bits" << YAML::Value << p.bfp.lfsr_bits;
    out << YAML::EndMap;
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
    out << YAML::EndMap;
    return std::string(out.c_str()) + "\n";
}

}  // namespace fastsim::config
