// SPDX-License-Identifier: MIT
#include "sweep/sweep_spec.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>

#include "common/errors.h"
#include "common/input_file.h"
#include "config/yaml_reader.h"

namespace fastsim::sweep {
namespace {

namespace fs = std::filesystem;
using config::Document;
using config::MapReader;

/// A value as `-p` and the CSV take it: a scalar's text, or flow YAML for a list or map.
std::string value_text(const YAML::Node& node) {
    if (node.IsScalar()) return node.Scalar();
    if (node.IsNull()) return "null";
    YAML::Emitter out;
    out << YAML::Flow << node;
    return out.c_str();
}

std::string key_text(const Document& doc, const YAML::Node& key, const std::string& path) {
    if (!key.IsScalar() || key.Scalar().empty())
        throw ConfigError(doc.locate(key, path), "expected a config key path (for example node.array.rows)");
    return key.Scalar();
}

std::string resolve_file(const Document& doc, const YAML::Node& node, const std::string& path,
                         const std::string& text) {
    const fs::path p = fs::path(text).is_absolute() ? fs::path(text) : fs::path(doc.file).parent_path() / text;
    std::error_code ec;
    if (!fs::is_regular_file(p, ec))
        throw ConfigError(doc.locate(node, path), "no config file at " + p.string() +
                                                      " (a relative path is taken from the sweep file's folder)");
    return fs::absolute(p).lexically_normal().string();
}

/// The list under `node` (a sequence of at least one value) as texts.
std::vector<std::string> value_list(const Document& doc, const YAML::Node& node, const std::string& path) {
    if (!node || !node.IsSequence() || node.size() == 0)
        throw ConfigError(doc.locate(node ? node : YAML::Node(), path), "expected a non-empty list of values");
    std::vector<std::string> out;
    for (const auto& v : node) out.push_back(value_text(v));
    return out;
}

std::vector<std::pair<std::string, std::string>> assignments(const Document& doc, const YAML::Node& node,
                                                             const std::string& path) {
    std::vector<std::pair<std::string, std::string>> out;
    if (!node || node.IsNull()) return out;
    if (!node.IsMap()) throw ConfigError(doc.locate(node, path), "expected a map of key.path: value");
    for (const auto& entry : node) {
        const std::string key = key_text(doc, entry.first, path);
        if (key == kBaseKey)
            throw ConfigError(doc.locate(entry.first, path + "." + key),
                              "'base' can only be an axis, not set per point");
        out.emplace_back(key, value_text(entry.second));
    }
    return out;
}

Axis read_axis(const Document& doc, MapReader& reader) {
    Axis axis;
    const std::string path = reader.path();
    const bool has_key = reader.has("key"), has_zip = reader.has("zip");
    if (has_key == has_zip)
        throw ConfigError(reader.location(), "an axis has either key: and values:, or zip: (a map of key: [values])");
    if (has_key) {
        const std::string key = key_text(doc, reader.raw("key"), path + ".key");
        axis.keys.push_back(key);
        for (const std::string& v : value_list(doc, reader.raw("values"), path + ".values")) axis.values.push_back({v});
    } else {
        const YAML::Node zip = reader.raw("zip");
        if (!zip.IsMap() || zip.size() == 0)
            throw ConfigError(doc.locate(zip, path + ".zip"), "expected a map of key.path: [values]");
        for (const auto& entry : zip) {
            const std::string key = key_text(doc, entry.first, path + ".zip");
            const auto values = value_list(doc, entry.second, path + ".zip." + key);
            if (!axis.keys.empty() && values.size() != axis.values.size())
                throw ConfigError(doc.locate(entry.second, path + ".zip." + key),
                                  "zipped lists must have equal lengths: " + std::to_string(values.size()) +
                                      " values here, " + std::to_string(axis.values.size()) + " for " +
                                      axis.keys.front());
            if (axis.values.empty()) axis.values.resize(values.size());
            for (std::size_t v = 0; v < values.size(); ++v) axis.values[v].push_back(values[v]);
            axis.keys.push_back(key);
        }
    }
    axis.name = reader.scalar<std::string>("name").value_or(axis.keys.front());
    reader.finish();
    return axis;
}

}  // namespace

void fnv1a(std::uint64_t& h, const std::string& bytes) {
    for (const unsigned char c : bytes) {
        h ^= c;
        h *= 1099511628211ULL;
    }
    h ^= 0xff;  // separator: "ab"+"c" and "a"+"bc" differ
    h *= 1099511628211ULL;
}

std::string hex_digest(std::uint64_t h) {
    std::ostringstream hex;
    hex << std::hex;
    hex.width(16);
    hex.fill('0');
    hex << h;
    return hex.str();
}

SweepSpec load_sweep(const std::string& path, FileKind kind) {
    return load_sweep_text(read_input_file(path, kind == FileKind::sweep ? "sweep file" : "explore file"), path, kind);
}

SweepSpec load_sweep_text(const std::string& text, const std::string& path, FileKind kind) {
    const Document doc = Document::parse(text, path);
    SweepSpec spec;
    spec.file = fs::absolute(path).lexically_normal().string();
    MapReader top(doc, doc.root, "");
    spec.name = fs::path(path).stem().string();
    if (auto sweep = top.map("sweep")) {
        spec.name = sweep->scalar<std::string>("name").value_or(spec.name);
        const auto base = sweep->scalar<std::string>("base");
        if (base.value) spec.base_config = resolve_file(doc, doc.root["sweep"]["base"], "sweep.base", *base.value);
        spec.set = assignments(doc, sweep->raw("set"), "sweep.set");
        sweep->finish();
    }

    std::vector<MapReader> axes = top.maps("axes");
    if (axes.empty())
        throw ConfigError(top.location_of("axes"), "expected a non-empty list of axes (key: and values:, or zip:)");
    std::map<std::string, std::string> seen;  // key -> axis path
    for (std::size_t a = 0; a < axes.size(); ++a) {
        Axis axis = read_axis(doc, axes[a]);
        for (std::size_t k = 0; k < axis.keys.size(); ++k) {
            const std::string& key = axis.keys[k];
            if (!seen.emplace(key, axes[a].path()).second)
                throw ConfigError(axes[a].location(), "key '" + key + "' is swept twice (also in " + seen[key] + ")");
            if (key == kBaseKey) {
                const YAML::Node a_node = doc.root["axes"][a];
                const YAML::Node list = a_node["key"] ? a_node["values"] : a_node["zip"][kBaseKey];
                for (std::size_t v = 0; v < axis.values.size(); ++v)
                    resolve_file(doc, list[v], axes[a].path() + ".values[" + std::to_string(v) + "]",
                                 axis.values[v][k]);
            }
        }
        spec.axes.push_back(std::move(axis));
    }
    if (spec.base_config.empty() && !seen.count(kBaseKey))
        throw ConfigError(doc.locate(doc.root["sweep"] ? doc.root["sweep"] : doc.root, "sweep"),
                          "missing key 'base' (the config every point starts from), and no axis sweeps 'base'");

    std::vector<MapReader> overrides = top.maps("overrides");
    for (std::size_t o = 0; o < overrides.size(); ++o) {
        const std::string opath = overrides[o].path();
        ConditionalOverride c;
        const YAML::Node when = overrides[o].raw("when");
        c.when = assignments(doc, when, opath + ".when");
        c.set = assignments(doc, overrides[o].raw("set"), opath + ".set");
        if (c.set.empty()) throw ConfigError(overrides[o].location(), "expected set: (a map of key.path: value)");
        for (const auto& [key, value] : c.when) {
            if (!seen.count(key))
                throw ConfigError(doc.locate(when[key], opath + ".when." + key),
                                  "'" + key + "' is not a swept key: when: can only test axis values");
            // A value its axis never takes would make the override dead: no point would get it.
            std::vector<std::string> taken;
            for (const Axis& axis : spec.axes)
                for (std::size_t k = 0; k < axis.keys.size(); ++k)
                    if (axis.keys[k] == key)
                        for (const auto& values : axis.values) taken.push_back(values[k]);
            if (!taken.empty() && std::find(taken.begin(), taken.end(), value) == taken.end()) {
                std::string list;
                for (const std::string& t : taken) list += (list.empty() ? "" : ", ") + t;
                throw ConfigError(doc.locate(when[key], opath + ".when." + key),
                                  "'" + value + "' is never a value of " + key + " (its axis takes " + list +
                                      ", compared as written): no point would get this override");
            }
        }
        overrides[o].finish();
        spec.overrides.push_back(std::move(c));
    }
    if (kind == FileKind::explore) (void)top.raw("explore");  // read by the explorer
    if (auto plot = top.map("plot")) {
        spec.plot_x = plot->scalar<std::string>("x").value_or("");
        spec.plot_series = plot->scalar<std::string>("series").value_or("");
        for (const auto& [key, value] : {std::pair{"x", spec.plot_x}, std::pair{"series", spec.plot_series}})
            if (!value.empty() && !seen.count(value))
                throw ConfigError(plot->location_of(key), "'" + value + "' is not a swept key");
        plot->finish();
    }
    top.finish();

    std::size_t count = 1;
    for (const Axis& axis : spec.axes) {
        count *= axis.values.size();
        if (count > kMaxPoints)
            throw ConfigError(top.location_of("axes"),
                              "more than " + std::to_string(kMaxPoints) + " points; split the sweep");
    }
    return spec;
}

std::string locate_in_sweep_file(const SweepSpec& spec, const SweepPoint& point, const std::string& message) {
    if (message.rfind("-p ", 0) != 0) return message;
    const std::size_t colon = message.find(": ", 3);
    if (colon == std::string::npos) return message;
    const std::string named = message.substr(3, colon - 3);
    const std::string path = named.substr(0, named.find('='));
    // The override that set it: the key itself, or a map or list above it.
    const auto sets = [&path](const std::string& key) {
        return path == key || path.rfind(key + ".", 0) == 0 || path.rfind(key + "[", 0) == 0;
    };
    std::string key, value;
    for (const std::string& o : point.overrides) {
        const std::string k = o.substr(0, o.find('='));
        if (sets(k)) {
            key = k;
            value = o.substr(o.find('=') + 1);
        }
    }
    if (key.empty()) return message;
    std::string origin;
    for (std::size_t a = 0; a < spec.axes.size() && origin.empty(); ++a)
        for (const std::string& k : spec.axes[a].keys)
            if (k == key) origin = "axes[" + std::to_string(a) + "]";
    for (std::size_t c = 0; c < spec.overrides.size() && origin.empty(); ++c)
        for (const auto& [k, v] : spec.overrides[c].set)
            if (k == key) origin = "overrides[" + std::to_string(c) + "].set";
    for (const auto& [k, v] : spec.set)
        if (k == key && origin.empty()) origin = "sweep.set";
    if (origin.empty()) return message;
    return spec.file + ": " + origin + " sets " + key + " = " + value + " (design " + point.id +
           "): " + message.substr(colon + 2);
}

std::string point_id(std::size_t index, std::size_t count) {
    const std::size_t width = std::max<std::size_t>(4, std::to_string(count > 0 ? count - 1 : 0).size());
    const std::string digits = std::to_string(index);
    return "p" + std::string(width > digits.size() ? width - digits.size() : 0, '0') + digits;
}

std::size_t point_count(const SweepSpec& spec) {
    std::size_t count = 1;
    for (const Axis& axis : spec.axes) count *= axis.values.size();
    return count;
}

SweepPoint point_at(const SweepSpec& spec, std::size_t i) { return point_at(spec, i, axis_choices(spec, i)); }

std::vector<std::size_t> axis_choices(const SweepSpec& spec, std::size_t i) {
    // Mixed-radix digits of i, the last axis least significant.
    std::vector<std::size_t> choice(spec.axes.size());
    std::size_t rest = i;
    for (std::size_t a = spec.axes.size(); a-- > 0;) {
        choice[a] = rest % spec.axes[a].values.size();
        rest /= spec.axes[a].values.size();
    }
    return choice;
}

std::size_t point_index(const SweepSpec& spec, const std::vector<std::size_t>& choices) {
    std::size_t index = 0;
    for (std::size_t a = 0; a < spec.axes.size(); ++a) index = index * spec.axes[a].values.size() + choices[a];
    return index;
}

SweepPoint point_at(const SweepSpec& spec, std::size_t i, const std::vector<std::size_t>& choice) {
    SweepPoint p;
    p.index = i;
    p.id = point_id(i, point_count(spec));
    p.base_config = spec.base_config;
    for (const auto& [key, value] : spec.set) p.overrides.push_back(key + "=" + value);
    for (std::size_t a = 0; a < spec.axes.size(); ++a) {
        const Axis& axis = spec.axes[a];
        for (std::size_t k = 0; k < axis.keys.size(); ++k) {
            const std::string& value = axis.values[choice[a]][k];
            p.values.emplace_back(axis.keys[k], value);
            if (axis.keys[k] == kBaseKey) {
                const fs::path file(value);
                p.base_config =
                    (file.is_absolute() ? file : fs::path(spec.file).parent_path() / file).lexically_normal().string();
            } else {
                p.overrides.push_back(axis.keys[k] + "=" + value);
            }
        }
    }
    for (const ConditionalOverride& c : spec.overrides) {
        const bool applies = std::all_of(c.when.begin(), c.when.end(), [&](const auto& cond) {
            return std::find(p.values.begin(), p.values.end(), cond) != p.values.end();
        });
        if (applies)
            for (const auto& [key, value] : c.set) p.overrides.push_back(key + "=" + value);
    }
    return p;
}

std::vector<SweepPoint> enumerate_points(const SweepSpec& spec) {
    const std::size_t count = point_count(spec);
    std::vector<SweepPoint> points;
    points.reserve(count);
    for (std::size_t i = 0; i < count; ++i) points.push_back(point_at(spec, i));
    return points;
}

Shard parse_shard(const std::string& text) {
    const auto slash = text.find('/');
    const auto number = [](const std::string& s) -> std::size_t {
        if (s.empty() || s.find_first_not_of("0123456789") != std::string::npos || s.size() > 9) return 0;
        return std::stoul(s);
    };
    const std::size_t k = slash == std::string::npos ? 0 : number(text.substr(0, slash));
    const std::size_t n = slash == std::string::npos ? 0 : number(text.substr(slash + 1));
    if (k == 0 || n == 0 || k > n)
        throw UserError("--shard: expected k/N with 1 <= k <= N (for example 1/4 for the first of four shards), got '" +
                        text + "'");
    return {k, n};
}

std::string fingerprint(const std::vector<SweepPoint>& points) {
    std::uint64_t h = kFnvOffset;
    std::map<std::string, std::string> contents;  // base config path -> its text, read once
    for (const SweepPoint& p : points) {
        auto it = contents.find(p.base_config);
        if (it == contents.end())
            it = contents.emplace(p.base_config, read_input_file(p.base_config, "config file")).first;
        fnv1a(h, it->second);
        for (const std::string& o : p.overrides) fnv1a(h, o);
        fnv1a(h, "");
    }
    return hex_digest(h);
}

}  // namespace fastsim::sweep
