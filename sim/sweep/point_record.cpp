// SPDX-License-Identifier: MIT
#include "sweep/point_record.h"

#include <filesystem>
#include <sstream>


#include "common/errors.h"
#include "report/json_reader.h"
#include "report/output_files.h"

namespace fastsim::sweep {
namespace {

using report::json_string;
using report::JsonValue;

/// Member `key` of `object`, of `kind`; UserError naming the file and key otherwise.
const JsonValue& member(const JsonValue& object, const std::string& key, JsonValue::Kind kind, const std::string& path) {
    const JsonValue* v = object.is_object() ? object.find(key) : nullptr;
    if (!v || v->kind() != kind)
        throw UserError(path + ": " + key + ": missing or of the wrong type; delete the file to rerun the point");
    return *v;
}

}  // namespace

std::string point_record_json(const PointRecord& r) {
    std::ostringstream o;
    o << "{\n  \"point\": " << json_string(r.id) << ",\n  \"index\": " << r.index << ",\n  \"status\": "
      << json_string(r.ok ? "ok" : "failed") << ",\n  \"exit_status\": " << (r.exit_status ? std::to_string(*r.exit_status) : "null")
      << ",\n  \"signal\": " << (r.signal.empty() ? "null" : json_string(r.signal)) << ",\n  \"error\": " << json_string(r.error)
      << ",\n  \"wall_s\": " << report::format_number(r.wall_s) << ",\n  \"base_config\": " << json_string(r.base_config)
      << ",\n  \"values\": {";
    for (std::size_t i = 0; i < r.values.size(); ++i)
        o << (i ? ", " : "") << json_string(r.values[i].first) << ": " << json_string(r.values[i].second);
    o << "},\n  \"overrides\": [";
    for (std::size_t i = 0; i < r.overrides.size(); ++i) o << (i ? ", " : "") << json_string(r.overrides[i]);
    o << "],\n  \"results\": {";
    for (std::size_t i = 0; i < r.results.size(); ++i)
        o << (i ? ", " : "") << json_string(r.results[i].first) << ": " << report::format_number(r.results[i].second);
    o << "}\n}\n";
    return o.str();
}

std::optional<PointRecord> read_point_record(const std::string& path) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) return std::nullopt;
    using Kind = JsonValue::Kind;
    const JsonValue j = report::read_json_file(path);
    PointRecord r;
    r.id = member(j, "point", Kind::string, path).as_string();
    r.index = static_cast<std::size_t>(member(j, "index", Kind::number, path).as_number());
    r.ok = member(j, "status", Kind::string, path).as_string() == "ok";
    if (const JsonValue* v = j.find("exit_status"); v && v->is_number()) r.exit_status = static_cast<int>(v->as_number());
    if (const JsonValue* v = j.find("signal"); v && v->is_string()) r.signal = v->as_string();
    r.error = member(j, "error", Kind::string, path).as_string();
    r.wall_s = member(j, "wall_s", Kind::number, path).as_number();
    r.base_config = member(j, "base_config", Kind::string, path).as_string();
    for (const auto& v : member(j, "values", Kind::object, path).members())
        if (v.value.is_string()) r.values.emplace_back(v.key, v.value.as_string());
    for (const auto& o : member(j, "overrides", Kind::array, path).items())
        if (o.is_string()) r.overrides.push_back(o.as_string());
    for (const auto& v : member(j, "results", Kind::object, path).members())
        if (v.value.is_number()) r.results.emplace_back(v.key, v.value.as_number());
    return r;
}

report::Summary read_summary(const std::string& path) {
    const JsonValue j = report::read_json_file(path);
    if (!j.is_object()) throw UserError(path + ": expected a JSON object of results");
    report::Summary s;
    for (const auto& v : j.members()) {
        if (!v.value.is_number()) throw UserError(path + ": " + v.key + ": expected a number");
        s.emplace_back(v.key, v.value.as_number());
    }
    return s;
}

}  // namespace fastsim::sweep
