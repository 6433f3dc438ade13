// SPDX-License-Identifier: MIT
#include "config/scalesim_config.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <sstream>

#include "common/errors.h"

namespace fastsim::config {
namespace {

std::string strip(const std::string& s) {
    const auto blank = [](unsigned char c) { return std::isspace(c) != 0; };
    const auto first = std::find_if_not(s.begin(), s.end(), blank);
    const auto last = std::find_if_not(s.rbegin(), s.rend(), blank).base();
    return first < last ? std::string(first, last) : std::string();
}

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

/// section (as written, as configparser keeps it) -> key (lower case) -> value, with its line.
struct Ini {
    struct Value {
        std::string text;
        int line;
    };
    std::map<std::string, std::map<std::string, Value>> sections;
};

Ini parse_ini(const std::string& text, const std::string& path) {
    Ini ini;
    std::istringstream in(text);
    std::string raw, section;
    int line = 0;
    std::size_t key_indent = std::string::npos;  // indentation of the last key, npos after a header
    while (std::getline(in, raw)) {
        ++line;
        if (!raw.empty() && raw.back() == '\r') raw.pop_back();
        const std::string s = strip(raw);
        if (s.empty() || s[0] == '#' || s[0] == ';') continue;
        const std::size_t indent = raw.find_first_not_of(" \t");
        const Location at{path, line, 1, section};
        if (key_indent != std::string::npos && indent > key_indent)
            throw ConfigError(at,
                              "a line indented under a key continues its value over lines, which SCALE-Sim cannot "
                              "read as a number: write each key on one line");
        if (s[0] == '[') {  // configparser's "[name]", whatever follows the "]"
            const std::size_t close = s.find(']');
            if (close == std::string::npos || close == 1)
                throw ConfigError(at, "expected a section header such as [architecture_presets], got '" + s + "'");
            section = s.substr(1, close - 1);
            if (ini.sections.count(section)) throw ConfigError(at, "section [" + section + "] appears twice");
            ini.sections[section];
            key_indent = std::string::npos;
            continue;
        }
        const std::size_t sep = s.find_first_of("=:");
        if (sep == std::string::npos) throw ConfigError(at, "expected 'key = value' or 'key: value', got '" + s + "'");
        if (section.empty()) throw ConfigError(at, "a key before the first [section]");
        const std::string key = lower(strip(s.substr(0, sep)));
        if (ini.sections[section].count(key))
            throw ConfigError({path, line, 1, section + "." + key}, "key appears twice in this section");
        ini.sections[section][key] = {strip(s.substr(sep + 1)), line};
        key_indent = indent;
    }
    return ini;
}

/// `key` (lower case) of `section`, or of [DEFAULT]: in configparser a key of [DEFAULT] is a key
/// of every section that does not set it. nullptr if neither has it.
const Ini::Value* find_key(const Ini& ini, const std::string& section, const std::string& key) {
    for (const std::string& where : {section, std::string("DEFAULT")})
        if (const auto it = ini.sections.find(where); it != ini.sections.end())
            if (const auto k = it->second.find(key); k != it->second.end()) return &k->second;
    return nullptr;
}

/// `value` (of `section`.`key`, at `line`) as configparser's BasicInterpolation gives it when
/// SCALE-Sim reads the key: %% is a %, and %(name)s the value of `name` in the same section or
/// [DEFAULT], itself interpolated, at most 10 deep.
std::string interpolated(const Ini& ini, const std::string& path, const std::string& section, const std::string& key,
                         const std::string& value, int line, int depth, std::size_t& references_left) {
    constexpr std::size_t kMaxInterpolated = 65536;  // far above any value of a SCALE-Sim .cfg
    const Location at{path, line, 1, section + "." + key};
    if (depth > 10) throw ConfigError(at, "%(...)s references nest more than 10 deep (configparser's limit): a loop?");
    std::string out;
    for (std::size_t i = 0; i < value.size(); ++i) {
        if (value[i] != '%') {
            out += value[i];
            continue;
        }
        if (i + 1 < value.size() && value[i + 1] == '%') {
            out += '%';
            ++i;
            continue;
        }
        const std::size_t close = value.find(")s", i);
        if (i + 1 >= value.size() || value[i + 1] != '(' || close == std::string::npos)
            throw ConfigError(at,
                              "'%' must be followed by '%' or '(name)s', as SCALE-Sim's configparser reads it, "
                              "in '" +
                                  value + "'");
        const std::string name = lower(value.substr(i + 2, close - i - 2));
        const Ini::Value* ref = find_key(ini, section, name);
        if (!ref)
            throw ConfigError(at, "%(" + name + ")s names no key of [" + section +
                                      "] or [DEFAULT]: SCALE-Sim's configparser stops here too");
        if (references_left-- == 0)
            throw ConfigError(at, "expands more than 10,000 %(...)s references: a .cfg of SCALE-Sim has a few");
        out += interpolated(ini, path, section, name, ref->text, ref->line, depth + 1, references_left);
        if (out.size() > kMaxInterpolated)
            throw ConfigError(at, "expands to more than " + std::to_string(kMaxInterpolated) +
                                      " characters through %(...)s references");
        i = close + 1;
    }
    return out;
}

constexpr std::int64_t kMaxInt = 999'999'999'999'999'999;  ///< 18 digits, what python_int reads

/// `text` as Python's int() reads it (stripped, single underscores between digits: "1_024"),
/// from `min` to `max`.
std::int64_t python_int(const std::string& text, const Location& at, std::int64_t min, std::int64_t max) {
    std::string s = strip(text);
    for (std::size_t i = 0; i < s.size(); ++i)
        if (s[i] == '_' && (i == 0 || i + 1 == s.size() || !std::isdigit(static_cast<unsigned char>(s[i - 1])) ||
                            !std::isdigit(static_cast<unsigned char>(s[i + 1]))))
            throw ConfigError(at, "expected a whole number, got '" + strip(text) + "'");
    s.erase(std::remove(s.begin(), s.end(), '_'), s.end());
    const std::size_t digits = !s.empty() && (s[0] == '+' || s[0] == '-') ? 1 : 0;
    if (s.size() <= digits || s.find_first_not_of("0123456789", digits) != std::string::npos || s.size() > 18)
        throw ConfigError(at, "expected a whole number, got '" + strip(text) + "'");
    const std::int64_t v = std::stoll(s);
    if (v < min || v > max)
        throw ConfigError(at, "expected a whole number from " + std::to_string(min) + " to " + std::to_string(max) +
                                  ", got " + std::to_string(v));
    return v;
}

class CfgReader {
public:
    CfgReader(Ini ini, std::string path) : m_ini(std::move(ini)), m_path(std::move(path)) {}

    /// The key's value, interpolated as SCALE-Sim's configparser reads it, and its line.
    Ini::Value get(const std::string& section, const std::string& key) const {
        const auto s = m_ini.sections.find(section);
        if (s == m_ini.sections.end())
            throw ConfigError({m_path, 0, 0, section}, "missing section [" + section +
                                                           "] (SCALE-Sim's .cfg has [general], "
                                                           "[architecture_presets] and [run_presets])");
        const Ini::Value* value = find_key(m_ini, section, lower(key));
        if (!value) throw ConfigError({m_path, 0, 0, section + "." + key}, "missing key " + key);
        std::size_t references_left = 10000;  // bounds the work of references that expand to little
        return {interpolated(m_ini, m_path, section, lower(key), value->text, value->line, 0, references_left),
                value->line};
    }
    Location where(const std::string& section, const std::string& key) const {
        return {m_path, get(section, key).line, 1, section + "." + key};
    }
    /// A whole number as Python's int() reads it, from `min` to `max`.
    std::int64_t integer(const std::string& section, const std::string& key, std::int64_t min, std::int64_t max) const {
        return python_int(get(section, key).text, where(section, key), min, max);
    }

private:
    Ini m_ini;
    std::string m_path;
};

}  // namespace

scalesim::Architecture read_scalesim_cfg(const std::string& text, const std::string& path) {
    const CfgReader cfg(parse_ini(text, path), path);
    scalesim::Architecture a;
    a.run_name = cfg.get("general", "run_name").text;
    if (a.run_name.empty() || a.run_name.find_first_of("/\\") != std::string::npos || a.run_name == "." ||
        a.run_name == "..")
        throw ConfigError(cfg.where("general", "run_name"),
                          "expected a directory name (no slashes), got '" + a.run_name + "'");
    const std::string mode = cfg.get("run_presets", "InterfaceBandwidth").text;
    if (mode != "USER" && mode != "CALC")
        throw ConfigError(cfg.where("run_presets", "InterfaceBandwidth"), "expected USER or CALC, got '" + mode + "'");
    const std::string arch = "architecture_presets";
    if (mode == "USER") {
        // scale_config.py: a comma-separated list of int()s, of which the simulation uses the first.
        a.interface = scalesim::Interface::user;
        const std::string list = cfg.get(arch, "Bandwidth").text;
        for (std::size_t from = 0, item = 0;; ++item) {
            const std::size_t comma = list.find(',', from);
            // Only the first is used, so only it must be a bandwidth; SCALE-Sim int()s the rest.
            const std::int64_t words =
                python_int(list.substr(from, comma == std::string::npos ? comma : comma - from),
                           cfg.where(arch, "Bandwidth"), item == 0 ? 1 : -kMaxInt, item == 0 ? 1 << 20 : kMaxInt);
            if (item == 0) a.bandwidth_words_per_cycle = words;
            if (comma == std::string::npos) break;
            from = comma + 1;
        }
    }
    // Bounds: an array and SRAMs a simulation can hold (SCALE-Sim itself takes any int()).
    a.array_rows = cfg.integer(arch, "ArrayHeight", 1, 1 << 16);
    a.array_cols = cfg.integer(arch, "ArrayWidth", 1, 1 << 16);
    a.ifmap_sram_kb = cfg.integer(arch, "IfmapSramSzkB", 1, 1 << 20);
    a.filter_sram_kb = cfg.integer(arch, "FilterSramSzkB", 1, 1 << 20);
    a.ofmap_sram_kb = cfg.integer(arch, "OfmapSramSzkB", 1, 1 << 20);
    for (const char* key : {"IfmapOffset", "FilterOffset", "OfmapOffset"})
        (void)cfg.integer(arch, key, 0, std::int64_t{1} << 40);
    const std::string df = cfg.get(arch, "Dataflow").text;
    if (df == "ws")
        a.dataflow = scalesim::Dataflow::ws;
    else if (df == "os")
        a.dataflow = scalesim::Dataflow::os;
    else if (df == "is")
        a.dataflow = scalesim::Dataflow::is;
    else
        throw ConfigError(cfg.where(arch, "Dataflow"), "expected ws, os or is, got '" + df + "'");
    return a;
}

scalesim::Layer scalesim_layer(const workload::Layer& l) {
    scalesim::Layer s;
    s.name = l.name;
    if (l.kind == workload::LayerKind::gemm) {
        s.ifmap_height = l.m, s.ifmap_width = l.k, s.filter_height = 1, s.filter_width = l.k;
        s.channels = 1, s.filters = l.n;
        return s;
    }
    s.ifmap_height = l.in_height, s.ifmap_width = l.in_width;
    s.filter_height = l.kernel_height, s.filter_width = l.kernel_width;
    s.stride_height = l.stride, s.stride_width = l.stride_width;
    s.channels = l.in_channels / l.groups, s.filters = l.filters / l.groups;
    return s;
}

std::vector<scalesim::Layer> scalesim_layers(const workload::Workload& topology) {
    std::vector<scalesim::Layer> layers;
    for (const workload::Layer& l : topology.layers) {
        const scalesim::Layer s = scalesim_layer(l);
        if (l.kind == workload::LayerKind::gemm || l.groups == 1) {
            layers.push_back(s);
            continue;
        }
        for (int g = 0; g < l.groups; ++g) {
            layers.push_back(s);
            layers.back().name = l.name + "Channel_" + std::to_string(g);
        }
    }
    return layers;
}

}  // namespace fastsim::config
