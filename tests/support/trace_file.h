// SPDX-License-Identifier: MIT
#pragma once

// Reads a Chrome trace-event JSON file as fastsim writes it (report/trace_json.h) back into
// plain structs, with times as exact picoseconds, and checks how its spans nest.

#include <algorithm>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <yaml-cpp/yaml.h>

namespace fastsim::test {

/// "12.3456" microseconds as picoseconds, exactly; throws on anything but digits with at
/// most six decimals.
inline std::uint64_t microseconds_to_ps(const std::string& text) {
    const std::size_t dot = text.find('.');
    const std::string whole = text.substr(0, dot);
    std::string fraction = dot == std::string::npos ? "" : text.substr(dot + 1);
    const auto digits = [](const std::string& s) {
        return std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
    };
    if (whole.empty() || !digits(whole) || !digits(fraction) || fraction.size() > 6)
        throw std::runtime_error("not a time in microseconds with at most 6 decimals: '" + text + "'");
    fraction.resize(6, '0');
    return std::stoull(whole) * 1'000'000 + std::stoull(fraction);
}

struct TraceEvent {
    std::string name, category, phase;  ///< phase: "X" or "i"
    std::uint64_t pid = 0, tid = 0;
    std::uint64_t start_ps = 0, duration_ps = 0;
    std::map<std::string, std::uint64_t> args;  ///< fastsim's span args are all whole numbers
    [[nodiscard]] std::uint64_t end_ps() const { return start_ps + duration_ps; }
};

struct TraceFile {
    std::vector<TraceEvent> spans;     ///< "ph": "X"
    std::vector<TraceEvent> instants;  ///< "ph": "i"
    std::map<std::uint64_t, std::string> process_names;
    std::map<std::pair<std::uint64_t, std::uint64_t>, std::string> thread_names;  ///< by (pid, tid)
    std::string display_time_unit;
    YAML::Node other_data;
    [[nodiscard]] std::uint64_t end_ps() const {
        std::uint64_t end = 0;
        for (const auto& s : spans) end = std::max(end, s.end_ps());
        return end;
    }
    /// The spans on the thread named `thread` of the process named `process`.
    [[nodiscard]] std::vector<TraceEvent> on(const std::string& process, const std::string& thread) const {
        std::vector<TraceEvent> out;
        for (const auto& s : spans)
            if (process_names.at(s.pid) == process && thread_names.at({s.pid, s.tid}) == thread) out.push_back(s);
        return out;
    }
};

/// Parses `json` (yaml-cpp reads JSON). Throws std::runtime_error naming the first event that
/// lacks one of name, ph, ts, pid, tid (and dur for "X"), or an unexpected "ph".
inline TraceFile parse_trace(const std::string& json) {
    const YAML::Node root = YAML::Load(json);
    TraceFile file;
    file.display_time_unit = root["displayTimeUnit"].as<std::string>("");
    file.other_data = root["otherData"];
    const YAML::Node events = root["traceEvents"];
    if (!events || !events.IsSequence()) throw std::runtime_error("no traceEvents list");
    for (std::size_t i = 0; i < events.size(); ++i) {
        const YAML::Node e = events[i];
        const auto need = [&](const char* key) {
            if (!e[key]) throw std::runtime_error("event " + std::to_string(i) + " has no '" + key + "'");
            return e[key];
        };
        const std::string phase = need("ph").as<std::string>();
        const std::string name = need("name").as<std::string>();
        const auto pid = need("pid").as<std::uint64_t>();
        const auto tid = need("tid").as<std::uint64_t>();
        if (phase == "M") {
            if (name == "process_name") file.process_names[pid] = e["args"]["name"].as<std::string>();
            if (name == "thread_name") file.thread_names[{pid, tid}] = e["args"]["name"].as<std::string>();
            continue;
        }
        if (phase != "X" && phase != "i")
            throw std::runtime_error("event " + std::to_string(i) + " has ph '" + phase + "'");
        TraceEvent event{
            name, e["cat"].as<std::string>(""), phase, pid, tid, microseconds_to_ps(need("ts").as<std::string>()), 0,
            {}};
        for (const auto& arg : e["args"]) event.args[arg.first.as<std::string>()] = arg.second.as<std::uint64_t>();
        if (phase == "X") {
            event.duration_ps = microseconds_to_ps(need("dur").as<std::string>());
            file.spans.push_back(event);
        } else {
            file.instants.push_back(event);
        }
    }
    return file;
}

/// Empty if on every (pid, tid) any two spans are disjoint or one contains the other;
/// otherwise the first two spans that overlap partially.
inline std::string nesting_violation(std::vector<TraceEvent> spans) {
    std::sort(spans.begin(), spans.end(), [](const TraceEvent& a, const TraceEvent& b) {
        return std::make_tuple(a.pid, a.tid, a.start_ps, ~a.end_ps()) <
               std::make_tuple(b.pid, b.tid, b.start_ps, ~b.end_ps());
    });
    std::vector<const TraceEvent*> open;  // enclosing spans of the current track, outermost first
    for (std::size_t i = 0; i < spans.size(); ++i) {
        const TraceEvent& s = spans[i];
        if (i > 0 && (spans[i - 1].pid != s.pid || spans[i - 1].tid != s.tid)) open.clear();
        while (!open.empty() && open.back()->end_ps() <= s.start_ps) open.pop_back();
        if (!open.empty() && s.end_ps() > open.back()->end_ps())
            return "'" + open.back()->name + "' [" + std::to_string(open.back()->start_ps) + ", " +
                   std::to_string(open.back()->end_ps()) + ") and '" + s.name + "' [" + std::to_string(s.start_ps) +
                   ", " + std::to_string(s.end_ps()) + ") on pid " + std::to_string(s.pid) + " tid " +
                   std::to_string(s.tid);
        open.push_back(&s);
    }
    return "";
}

}  // namespace fastsim::test
