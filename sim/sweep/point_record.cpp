// SPDX-License-Identifier: MIT
#include "sweep/point_record.h"

#include <filesystem>
#include <sstream>

#include <yaml-cpp/yaml.h>

#include "config/errors.h"
#include "report/output_files.h"

namespace fastsim::sweep {
namespace {

using report::json_string;

YAML::Node load_json(const std::string& path) {
    try {
        return YAML::LoadFile(path);
    } catch (const YAML::Exception& e) {
        throw config::UserError(path + ": not valid JSON: " + e.msg);
    }
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
    const YAML::Node j = load_json(path);
    try {
        PointRecord r;
        r.id = j["point"].as<std::string>();
        r.index = j["index"].as<std::size_t>();
        r.ok = j["status"].as<std::string>() == "ok";
        if (!j["exit_status"].IsNull()) r.exit_status = j["exit_status"].as<int>();
        if (!j["signal"].IsNull()) r.signal = j["signal"].as<std::string>();
        r.error = j["error"].as<std::string>();
        r.wall_s = j["wall_s"].as<double>();
        r.base_config = j["base_config"].as<std::string>();
        for (const auto& v : j["values"]) r.values.emplace_back(v.first.as<std::string>(), v.second.as<std::string>());
        for (const auto& o : j["overrides"]) r.overrides.push_back(o.as<std::string>());
        for (const auto& v : j["results"]) r.results.emplace_back(v.first.as<std::string>(), v.second.as<double>());
        return r;
    } catch (const YAML::Exception& e) {
        throw config::UserError(path + ": not a fastsim point record (" + e.msg + "); delete it to rerun the point");
    }
}

report::Summary read_summary(const std::string& path) {
    const YAML::Node j = load_json(path);
    if (!j.IsMap()) throw config::UserError(path + ": expected a JSON object of results");
    report::Summary s;
    try {
        for (const auto& v : j) s.emplace_back(v.first.as<std::string>(), v.second.as<double>());
    } catch (const YAML::Exception& e) {
        throw config::UserError(path + ": expected numbers only (" + e.msg + ")");
    }
    return s;
}

}  // namespace fastsim::sweep
