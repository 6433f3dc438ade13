// SPDX-License-Identifier: MIT
#include "sweep/sweep_dir.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <set>
#include <sstream>


#include "config/errors.h"
#include "report/json_reader.h"
#include "report/output_files.h"

namespace fastsim::sweep {
namespace {

namespace fs = std::filesystem;
using report::json_string;

constexpr const char* kFormat = "fastsim-sweep/1";

}  // namespace

SweepIdentity identity_of(const SweepSpec& spec, const std::vector<SweepPoint>& points) {
    SweepIdentity id;
    id.name = spec.name;
    id.sweep_file = spec.file;
    id.base_config = spec.base_config;
    id.fingerprint = fingerprint(points);
    id.points = points.size();
    for (const Axis& a : spec.axes) id.axes.push_back({a.name, a.keys});
    id.plot_x = spec.plot_x;
    id.plot_series = spec.plot_series;
    return id;
}

std::string sweep_json(const SweepIdentity& id) {
    std::ostringstream o;
    o << "{\n  \"format\": " << json_string(kFormat) << ",\n  \"name\": " << json_string(id.name)
      << ",\n  \"sweep_file\": " << json_string(id.sweep_file) << ",\n  \"base_config\": " << json_string(id.base_config)
      << ",\n  \"fingerprint\": " << json_string(id.fingerprint) << ",\n  \"points\": " << id.points << ",\n  \"axes\": [";
    for (std::size_t a = 0; a < id.axes.size(); ++a) {
        o << (a ? ", " : "") << "{\"name\": " << json_string(id.axes[a].name) << ", \"keys\": [";
        for (std::size_t k = 0; k < id.axes[a].keys.size(); ++k) o << (k ? ", " : "") << json_string(id.axes[a].keys[k]);
        o << "]}";
    }
    o << "]";
    if (!id.plot_x.empty() || !id.plot_series.empty())
        o << ",\n  \"plot\": {\"x\": " << json_string(id.plot_x) << ", \"series\": " << json_string(id.plot_series) << "}";
    o << "\n}\n";
    return o.str();
}

SweepIdentity read_sweep_json(const std::string& dir) {
    const std::string path = (fs::path(dir) / "sweep.json").string();
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) throw config::UserError(dir + ": not a sweep output directory (no sweep.json)");
    using report::JsonValue;
    const JsonValue j = report::read_json_file(path);
    const auto text = [&](const JsonValue& object, const std::string& key) {
        const JsonValue* v = object.is_object() ? object.find(key) : nullptr;
        if (!v || !v->is_string()) throw config::UserError(path + ": " + key + ": expected a string");
        return v->as_string();
    };
    if (text(j, "format") != kFormat) throw config::UserError(path + ": format: expected \"" + std::string(kFormat) + "\"");
    SweepIdentity id;
    id.name = text(j, "name");
    id.sweep_file = text(j, "sweep_file");
    id.base_config = text(j, "base_config");
    id.fingerprint = text(j, "fingerprint");
    const JsonValue* points = j.find("points");
    const JsonValue* axes = j.find("axes");
    if (!points || !points->is_number()) throw config::UserError(path + ": points: expected a number");
    if (!axes || !axes->is_array()) throw config::UserError(path + ": axes: expected a list");
    id.points = static_cast<std::size_t>(points->as_number());
    for (const JsonValue& a : axes->items()) {
        SweepIdentity::AxisColumns axis{text(a, "name"), {}};
        if (const JsonValue* keys = a.find("keys"); keys && keys->is_array())
            for (const JsonValue& k : keys->items())
                if (k.is_string()) axis.keys.push_back(k.as_string());
        id.axes.push_back(std::move(axis));
    }
    if (const JsonValue* plot = j.find("plot"); plot && plot->is_object()) {
        id.plot_x = text(*plot, "x");
        id.plot_series = text(*plot, "series");
    }
    return id;
}

void claim_sweep_dir(const std::string& dir, const SweepIdentity& identity) {
    std::error_code ec;
    if (fs::exists(fs::path(dir) / "sweep.json", ec)) {
        const SweepIdentity existing = read_sweep_json(dir);
        if (!existing.same_sweep(identity))
            throw config::UserError(dir + " holds another sweep ('" + existing.name + "', fingerprint " + existing.fingerprint +
                                    ", " + std::to_string(existing.points) + " points; this one is '" + identity.name + "', " +
                                    identity.fingerprint + ", " + std::to_string(identity.points) +
                                    " points): use another --out, or delete it to start over");
        return;
    }
    if (fs::exists(dir, ec) && !fs::is_empty(dir, ec))
        throw config::UserError(dir + " exists and is not a sweep output directory (no sweep.json): use another --out");
    report::write_file_atomically((fs::path(dir) / "sweep.json").string(), sweep_json(identity));
}

SweepDirLock::SweepDirLock(const std::string& dir, const Shard& shard) {
    const std::string path = (fs::path(dir) / (".lock-" + std::to_string(shard.k) + "-of-" + std::to_string(shard.count))).string();
    m_fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (m_fd < 0) throw config::UserError(path + ": cannot open the sweep lock: " + std::strerror(errno));
    if (::flock(m_fd, LOCK_EX | LOCK_NB) != 0) {
        ::close(m_fd);
        throw config::UserError("another fastsim sweep is running the same points into " + dir + " (" + path +
                                " is locked); wait for it to finish");
    }
}

SweepDirLock::~SweepDirLock() { ::close(m_fd); }

std::string point_dir(const std::string& dir, const std::string& id) { return (fs::path(dir) / "points" / id).string(); }

std::map<std::size_t, PointRecord> read_point_records(const std::string& dir) {
    std::map<std::size_t, PointRecord> records;
    std::error_code ec;
    const fs::path points = fs::path(dir) / "points";
    if (!fs::is_directory(points, ec)) return records;
    for (const auto& entry : fs::directory_iterator(points)) {
        if (!entry.is_directory()) continue;
        try {
            if (auto r = read_point_record((entry.path() / "point.json").string())) records[r->index] = std::move(*r);
        } catch (const config::UserError& e) {  // cut short by a machine crash before the disk flush
            std::cerr << "sweep: ignoring an unreadable point record, the point counts as not run: " << e.what() << "\n";
        }
    }
    return records;
}

std::string csv_cell(const std::string& text) {
    if (text.find_first_of(",\"\n\r") == std::string::npos) return text;
    std::string out = "\"";
    for (const char c : text) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

std::string results_csv(const SweepIdentity& identity, const std::map<std::size_t, PointRecord>& records) {
    std::vector<std::string> axis_keys;
    for (const auto& a : identity.axes) axis_keys.insert(axis_keys.end(), a.keys.begin(), a.keys.end());
    std::vector<std::string> result_columns;
    std::set<std::string> seen;
    for (const auto& [index, r] : records)
        for (const auto& [name, value] : r.results)
            if (seen.insert(name).second) result_columns.push_back(name);
    std::ostringstream o;
    o << "point";
    for (const auto& k : axis_keys) o << ',' << csv_cell(k);
    o << ",status";
    for (const auto& c : result_columns) o << ',' << csv_cell(c);
    o << ",error\n";
    for (const auto& [index, r] : records) {
        o << r.id;
        for (const auto& k : axis_keys) {
            std::string value;
            for (const auto& [key, v] : r.values)
                if (key == k) value = v;
            o << ',' << csv_cell(value);
        }
        o << ',' << (r.ok ? "ok" : "failed");
        for (const auto& c : result_columns) {
            o << ',';
            for (const auto& [name, value] : r.results)
                if (name == c) o << report::format_number(value);
        }
        o << ',' << csv_cell(r.error) << '\n';
    }
    return o.str();
}

}  // namespace fastsim::sweep
