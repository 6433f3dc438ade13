// SPDX-License-Identifier: MIT
#include "sweep/sweep_dir.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <set>
#include <sstream>

#include "common/errors.h"
#include "sweep/run_dir.h"
#include "sweep/sweep_spec.h"
#include "common/json_reader.h"
#include "common/output_files.h"

namespace fastsim::sweep {
namespace {

namespace fs = std::filesystem;
using fastsim::json_string;

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
      << ",\n  \"sweep_file\": " << json_string(id.sweep_file)
      << ",\n  \"base_config\": " << json_string(id.base_config)
      << ",\n  \"fingerprint\": " << json_string(id.fingerprint) << ",\n  \"points\": " << id.points
      << ",\n  \"axes\": [";
    for (std::size_t a = 0; a < id.axes.size(); ++a) {
        o << (a ? ", " : "") << "{\"name\": " << json_string(id.axes[a].name) << ", \"keys\": [";
        for (std::size_t k = 0; k < id.axes[a].keys.size(); ++k)
            o << (k ? ", " : "") << json_string(id.axes[a].keys[k]);
        o << "]}";
    }
    o << "]";
    if (!id.plot_x.empty() || !id.plot_series.empty())
        o << ",\n  \"plot\": {\"x\": " << json_string(id.plot_x) << ", \"series\": " << json_string(id.plot_series)
          << "}";
    o << "\n}\n";
    return o.str();
}

namespace {

using fastsim::JsonValue;

[[noreturn]] void key_error(const std::string& file, const std::string& key, const std::string& message) {
    throw UserError(file + ": " + key + ": " + message);
}

/// Member `key` of `object` as a string ("" if absent or null); errors name `path` (default: key).
std::string optional_string(const JsonValue& object, const std::string& file, const std::string& key,
                            const std::string& path = "") {
    const JsonValue* v = object.find(key);
    if (!v || v->kind() == JsonValue::Kind::null) return "";
    if (!v->is_string()) key_error(file, path.empty() ? key : path, "expected a string");
    return v->as_string();
}

}  // namespace

SweepIdentity read_sweep_json(const std::string& dir) {
    const std::string file = dir + "/sweep.json";
    std::error_code ec;
    if (!fs::is_regular_file(file, ec)) throw UserError(dir + ": not a sweep output directory (no sweep.json)");
    const JsonValue root = fastsim::read_json_file(file);
    if (!root.is_object()) throw UserError(file + ": expected a JSON object");
    SweepIdentity id;
    // Every sweep.json fastsim has written names its format.
    const std::string format = optional_string(root, file, "format");
    if (format.empty())
        key_error(file, "format",
                  "expected '" + std::string(kFormat) + "', as fastsim sweep writes it (it is missing)");
    if (format != kFormat)
        key_error(file, "format", "this fastsim reads " + std::string(kFormat) + ", got '" + format + "'");
    id.name = optional_string(root, file, "name");
    id.sweep_file = optional_string(root, file, "sweep_file");
    id.base_config = optional_string(root, file, "base_config");
    id.fingerprint = optional_string(root, file, "fingerprint");
    const JsonValue* axes = root.find("axes");
    if (!axes || !axes->is_array() || axes->items().empty())
        key_error(file, "axes", "expected a non-empty array of axes");
    for (std::size_t a = 0; a < axes->items().size(); ++a) {
        const JsonValue& axis = axes->items()[a];
        const std::string where = "axes[" + std::to_string(a) + "]";
        if (!axis.is_object()) key_error(file, where, "expected an object with name and keys");
        SweepIdentity::AxisColumns out{optional_string(axis, file, "name", where + ".name"), {}};
        const JsonValue* keys = axis.find("keys");
        if (!keys || !keys->is_array() || keys->items().empty())
            key_error(file, where + ".keys", "expected a non-empty array of key paths");
        for (const JsonValue& k : keys->items()) {
            if (!k.is_string() || k.as_string().empty())
                key_error(file, where + ".keys", "expected key paths as strings");
            out.keys.push_back(k.as_string());
        }
        if (out.name.empty()) out.name = out.keys.front();
        id.axes.push_back(std::move(out));
    }
    // The count bounds every index read back (read_point_records), so it is required.
    const JsonValue* p = root.find("points");
    if (!p || !p->is_number() || p->as_number() < 1 || p->as_number() > static_cast<double>(kMaxPoints) ||
        p->as_number() != std::floor(p->as_number()))
        key_error(
            file, "points",
            "expected a whole number of points from 1 to " + std::to_string(kMaxPoints) + " (the most a sweep has)");
    id.points = static_cast<std::size_t>(p->as_number());
    if (const JsonValue* plot = root.find("plot"); plot && plot->kind() != JsonValue::Kind::null) {
        if (!plot->is_object()) key_error(file, "plot", "expected an object with x and series");
        id.plot_x = optional_string(*plot, file, "x", "plot.x");
        id.plot_series = optional_string(*plot, file, "series", "plot.series");
    }
    return id;
}

void claim_sweep_dir(const std::string& dir, const SweepIdentity& identity) {
    std::error_code ec;
    if (fs::exists(fs::path(dir) / "sweep.json", ec)) {
        const SweepIdentity existing = read_sweep_json(dir);
        if (!existing.same_sweep(identity))
            throw UserError(dir + " holds another sweep ('" + existing.name + "', fingerprint " + existing.fingerprint +
                            ", " + std::to_string(existing.points) + " points; this one is '" + identity.name + "', " +
                            identity.fingerprint + ", " + std::to_string(identity.points) +
                            " points): use another --out, or delete it to start over");
        return;
    }
    if (fs::exists(dir, ec) && !fs::is_empty(dir, ec))
        throw UserError(dir + " exists and is not a sweep output directory (no sweep.json): use another --out");
    fastsim::write_file_atomically((fs::path(dir) / "sweep.json").string(), sweep_json(identity));
}

namespace {

/// What the holder of the lock file `fd` wrote into it ("fastsim run, pid 4242"), or "".
std::string lock_holder(int fd) {
    char holder[128] = {};
    const ssize_t n = ::pread(fd, holder, sizeof holder - 1, 0);
    std::string who(holder, n > 0 ? static_cast<std::size_t>(n) : 0);
    while (!who.empty() && (who.back() == '\n' || who.back() == '\0')) who.pop_back();
    return who;
}

}  // namespace

SweepDirLock::SweepDirLock(const std::string& dir, const Shard& shard, const std::string& command)
    : m_path((fs::path(dir) / (".lock-" + std::to_string(shard.k) + "-of-" + std::to_string(shard.count))).string()) {
    const std::string& path = m_path;
    m_fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (m_fd < 0) throw UserError(path + ": cannot open the " + command + " lock: " + std::strerror(errno));
    if (::flock(m_fd, LOCK_EX | LOCK_NB) != 0) {
        const std::string who = lock_holder(m_fd);
        ::close(m_fd);
        throw UserError("another fastsim command" + (who.empty() ? std::string() : " (" + who + ")") +
                        " is writing into " + dir + " (" + path +
                        " is locked); wait for it to finish, or use "
                        "another folder");
    }
    const std::string me = "fastsim " + command + ", pid " + std::to_string(::getpid()) + "\n";
    // The holder's name is a courtesy to whoever is refused; the lock holds without it.
    if (::ftruncate(m_fd, 0) == 0) static_cast<void>(::pwrite(m_fd, me.data(), me.size(), 0));
}

SweepDirLock::~SweepDirLock() { ::close(m_fd); }

void refuse_while_written(const std::string& dir) {
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
        const std::string name = entry.path().filename().string();
        if (name.rfind(".lock-", 0) != 0) continue;
        const int fd = ::open(entry.path().c_str(), O_RDONLY | O_CLOEXEC);
        if (fd < 0) continue;
        if (::flock(fd, LOCK_SH | LOCK_NB) != 0) {
            const std::string who = lock_holder(fd);
            ::close(fd);
            throw UserError(dir + " is still being written" + (who.empty() ? std::string() : " by " + who) + " (" +
                            entry.path().string() + " is locked): wait for it to finish");
        }
        ::close(fd);
    }
}

std::string point_dir(const std::string& dir, const std::string& id) {
    return (fs::path(dir) / "points" / id).string();
}

namespace {

/// A record's values name the sweep's axis keys, in order (read_point_record checks each is
/// among its overrides). UserError naming `file` otherwise: a record edited by hand, or a
/// sweep.json whose axes were. Paths are not compared: a sweep folder may move with its project.
void check_record_against_sweep(const PointRecord& r, const SweepIdentity& identity, const std::string& file) {
    std::vector<std::string> axis_keys;
    for (const auto& a : identity.axes) axis_keys.insert(axis_keys.end(), a.keys.begin(), a.keys.end());
    std::vector<std::string> value_keys;
    for (const auto& [key, value] : r.values) value_keys.push_back(key);
    if (!axis_keys.empty() && value_keys != axis_keys) {
        const auto joined = [](const std::vector<std::string>& keys) {
            std::string out;
            for (const std::string& k : keys) out += (out.empty() ? "" : ", ") + k;
            return out;
        };
        throw UserError(file + ": values: the record's keys (" + joined(value_keys) +
                        ") are not the sweep's axis keys in sweep.json (" + joined(axis_keys) + ")");
    }
}

}  // namespace

void check_results_against_summary(const PointRecord& r, const std::string& summary, const std::string& file) {
    std::error_code ec;
    if (!fs::is_regular_file(summary, ec)) {
        // A folder cleared to point.json alone is a record; one whose run is still there but lost
        // the summary the record came from is not one complete run.
        if (fs::exists(fs::path(summary).parent_path() / kRunManifest, ec))
            throw UserError(file + ": results: they came from " + summary +
                            ", which is gone though the point's run is still there (manifest.json): the folder was "
                            "edited; delete the point's folder to rerun it");
        return;
    }
    const fastsim::Summary run = read_summary(summary);
    const auto same = [](double a, double b) { return a == b || std::abs(a - b) <= 1e-9 * std::abs(b); };
    bool agree = run.size() == r.results.size();
    std::string first;
    for (std::size_t i = 0; agree && i < run.size(); ++i) {
        agree = run[i].first == r.results[i].first && same(r.results[i].second, run[i].second);
        if (!agree)
            first = run[i].first == r.results[i].first
                        ? run[i].first + " " + fastsim::format_number(r.results[i].second) + " against " +
                              fastsim::format_number(run[i].second)
                        : "field '" + r.results[i].first + "' where it has '" + run[i].first + "'";
    }
    if (!agree)
        throw UserError(file + ": results: not those of the point's run in " + summary + " (" +
                        (first.empty()
                             ? std::to_string(r.results.size()) + " fields against " + std::to_string(run.size())
                             : first) +
                        "): one of them was edited; delete the point's folder to rerun it");
}

std::map<std::size_t, PointRecord> read_point_records(const std::string& dir, const SweepIdentity& identity) {
    std::map<std::size_t, PointRecord> records;
    std::error_code ec;
    const fs::path points = fs::path(dir) / "points";
    if (!fs::is_directory(points, ec)) return records;
    for (const auto& entry : fs::directory_iterator(points)) {
        if (!entry.is_directory()) continue;
        const std::string file = (entry.path() / "point.json").string();
        std::optional<PointRecord> r;
        try {
            r = read_point_record(file);
        } catch (const UnreadablePointRecord& e) {  // cut short by a machine crash before the disk flush
            std::cerr << "sweep: ignoring an unreadable point record, the point counts as not run: " << e.what()
                      << "\n";
            continue;
        }
        if (!r) continue;
        // A whole record that contradicts its folder or the sweep was edited or copied by hand:
        // trusting it would put results under the wrong point.
        const std::string folder = entry.path().filename().string();
        if (identity.points > 0 && r->index >= identity.points)
            throw UserError(file + ": index: " + std::to_string(r->index) + " is outside the sweep's " +
                            std::to_string(identity.points) + " points (sweep.json)");
        const std::string expected = point_id(r->index, identity.points > 0 ? identity.points : r->index + 1);
        if (r->id != folder || (identity.points > 0 && r->id != expected))
            throw UserError(file + ": point: the record says point '" + r->id + "' (index " + std::to_string(r->index) +
                            ", which is '" + expected + "') but lies in folder '" + folder + "'");
        if (records.count(r->index))
            throw UserError(file + ": index: point " + std::to_string(r->index) + " is recorded twice (also in " +
                            records[r->index].id + ")");
        check_record_against_sweep(*r, identity, file);
        if (r->ok) check_results_against_summary(*r, (entry.path() / "summary.json").string(), file);
        records[r->index] = std::move(*r);
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
                if (name == c) o << fastsim::format_number(value);
        }
        o << ',' << csv_cell(r.error) << '\n';
    }
    return o.str();
}

}  // namespace fastsim::sweep
