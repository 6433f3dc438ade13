// SPDX-License-Identifier: MIT
#include "sweep/point_record.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <sstream>

#include "common/errors.h"
#include "common/json_reader.h"
#include "common/output_files.h"

namespace fastsim::sweep {
namespace {

using fastsim::json_string;
using fastsim::JsonValue;

/// Member `key` of `object`, of `kind`; UserError naming the file and key otherwise.
const JsonValue& member(const JsonValue& object, const std::string& key, JsonValue::Kind kind,
                        const std::string& path) {
    const JsonValue* v = object.is_object() ? object.find(key) : nullptr;
    if (!v || v->kind() != kind)
        throw UserError(path + ": " + key + ": missing or of the wrong type; delete the file to rerun the point");
    return *v;
}

/// A count or size read back: a whole number from 0 to 2^53.
std::size_t whole_number(const JsonValue& v, const std::string& key, const std::string& path) {
    const double x = v.as_number();
    if (!(x >= 0 && x <= 0x1p53) || x != std::floor(x))
        throw UserError(path + ": " + key + ": expected a whole number from 0 to 2^53, got " +
                        fastsim::format_number(x) + "; delete the file to rerun the point");
    return static_cast<std::size_t>(x);
}

}  // namespace

bool result_may_be_negative(std::string_view name) {
    const auto ends_with = [&](std::string_view suffix) {
        return name.size() >= suffix.size() && name.substr(name.size() - suffix.size()) == suffix;
    };
    return ends_with("_error") || ends_with("error_percent");
}

std::string point_record_json(const PointRecord& r) {
    std::ostringstream o;
    o << "{\n  \"point\": " << json_string(r.id) << ",\n  \"index\": " << r.index
      << ",\n  \"status\": " << json_string(r.ok ? "ok" : "failed")
      << ",\n  \"exit_status\": " << (r.exit_status ? std::to_string(*r.exit_status) : "null")
      << ",\n  \"signal\": " << (r.signal.empty() ? "null" : json_string(r.signal))
      << ",\n  \"error\": " << json_string(r.error) << ",\n  \"wall_s\": " << fastsim::format_number(r.wall_s)
      << ",\n  \"base_config\": " << json_string(r.base_config) << ",\n  \"values\": {";
    for (std::size_t i = 0; i < r.values.size(); ++i)
        o << (i ? ", " : "") << json_string(r.values[i].first) << ": " << json_string(r.values[i].second);
    o << "},\n  \"overrides\": [";
    for (std::size_t i = 0; i < r.overrides.size(); ++i) o << (i ? ", " : "") << json_string(r.overrides[i]);
    o << "],\n  \"results\": {";
    for (std::size_t i = 0; i < r.results.size(); ++i)
        o << (i ? ", " : "") << json_string(r.results[i].first) << ": " << fastsim::format_number(r.results[i].second);
    o << "}\n}\n";
    return o.str();
}

std::optional<PointRecord> read_point_record(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
    using Kind = JsonValue::Kind;
    JsonValue j;
    try {
        j = fastsim::read_json_file(path);
    } catch (const UserError& e) {
        throw UnreadablePointRecord(e.what());
    }
    PointRecord r;
    r.id = member(j, "point", Kind::string, path).as_string();
    r.index = whole_number(member(j, "index", Kind::number, path), "index", path);
    const std::string status = member(j, "status", Kind::string, path).as_string();
    if (status != "ok" && status != "failed")
        throw UserError(path + ": status: expected \"ok\" or \"failed\", got \"" + status + "\"");
    r.ok = status == "ok";
    if (const JsonValue* v = j.find("exit_status"); v && v->kind() != JsonValue::Kind::null) {
        if (!v->is_number() || v->as_number() != std::floor(v->as_number()) || v->as_number() < 0 ||
            v->as_number() > 255)
            throw UserError(path + ": exit_status: expected an exit status from 0 to 255, or null");
        r.exit_status = static_cast<int>(v->as_number());
    }
    if (const JsonValue* v = j.find("signal"); v && v->kind() != JsonValue::Kind::null) {
        if (!v->is_string() || v->as_string().empty())
            throw UserError(path + ": signal: expected the signal's name, or null");
        r.signal = v->as_string();
    }
    r.error = member(j, "error", Kind::string, path).as_string();
    // What the runner writes together: ok is exit status 0 with no signal and no error; a failure
    // has a reason.
    if (r.ok && ((r.exit_status && *r.exit_status != 0) || !r.signal.empty() || !r.error.empty()))
        throw UserError(path + ": status: \"ok\", but the point " +
                        (!r.signal.empty()  ? "was killed by " + r.signal
                         : !r.error.empty() ? "has an error"
                                            : "exited with status " + std::to_string(*r.exit_status)) +
                        "; the record was edited: delete the file to rerun the point");
    if (!r.ok && r.error.empty() && r.signal.empty() && (!r.exit_status || *r.exit_status == 0))
        throw UserError(path +
                        ": status: \"failed\", but the record gives no reason (exit status, signal or "
                        "error); the record was edited: delete the file to rerun the point");
    r.wall_s = member(j, "wall_s", Kind::number, path).as_number();
    if (!(r.wall_s >= 0))
        throw UserError(path + ": wall_s: expected seconds >= 0, got " + fastsim::format_number(r.wall_s));
    r.base_config = member(j, "base_config", Kind::string, path).as_string();
    for (const auto& v : member(j, "values", Kind::object, path).members()) {
        if (!v.value.is_string()) throw UserError(path + ": values." + v.key + ": expected the value as a string");
        r.values.emplace_back(v.key, v.value.as_string());
    }
    for (const auto& o : member(j, "overrides", Kind::array, path).items()) {
        if (!o.is_string()) throw UserError(path + ": overrides: expected key=value strings");
        r.overrides.push_back(o.as_string());
    }
    // Each axis value was given to the point as an override (the base config aside).
    for (const auto& [key, value] : r.values)
        if (key != kBaseKey &&
            std::find(r.overrides.begin(), r.overrides.end(), key + "=" + value) == r.overrides.end())
            throw UserError(path + ": values." + key + ": '" + value +
                            "' is not among the point's overrides; the record " +
                            "was edited: delete the file to rerun the point");
    for (const auto& v : member(j, "results", Kind::object, path).members()) {
        if (!v.value.is_number()) throw UserError(path + ": results." + v.key + ": expected a number");
        if (v.value.as_number() < 0 && !result_may_be_negative(v.key))
            throw UserError(path + ": results." + v.key + ": a result that cannot be negative is " +
                            fastsim::format_number(v.value.as_number()) + "; delete the file to rerun the point");
        r.results.emplace_back(v.key, v.value.as_number());
    }
    return r;
}

bool same_outcome(const PointRecord& a, const PointRecord& b) {
    return a.ok == b.ok && a.results == b.results && a.error == b.error;
}

fastsim::Summary read_summary(const std::string& path) {
    const JsonValue j = fastsim::read_json_file(path);
    if (!j.is_object()) throw UserError(path + ": expected a JSON object of results");
    fastsim::Summary s;
    for (const auto& v : j.members()) {
        if (!v.value.is_number()) throw UserError(path + ": " + v.key + ": expected a number");
        if (v.value.as_number() < 0 && !result_may_be_negative(v.key))
            throw UserError(path + ": " + v.key + ": a result that cannot be negative is " +
                            fastsim::format_number(v.value.as_number()));
        s.emplace_back(v.key, v.value.as_number());
    }
    return s;
}

}  // namespace fastsim::sweep
