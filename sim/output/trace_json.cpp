// SPDX-License-Identifier: MIT
#include "output/trace_json.h"

#include <algorithm>
#include <charconv>
#include <numeric>

#include "common/output_files.h"
#include "common/units.h"

namespace fastsim::output {
namespace {

constexpr std::uint64_t kPsPerMicrosecond = 1'000'000;

void append_uint(std::string& out, std::uint64_t value) {
    char buf[24];
    const auto result = std::to_chars(buf, buf + sizeof buf, value);
    out.append(buf, result.ptr);
}

/// `ps` as microseconds with up to six decimals, trailing zeros dropped: exact.
void append_microseconds(std::string& out, std::uint64_t ps) {
    append_uint(out, ps / kPsPerMicrosecond);
    std::uint64_t fraction = ps % kPsPerMicrosecond;
    if (fraction == 0) return;
    char digits[6];
    for (int i = 5; i >= 0; --i, fraction /= 10) digits[i] = static_cast<char>('0' + fraction % 10);
    std::size_t length = 6;
    while (digits[length - 1] == '0') --length;
    out += '.';
    out.append(digits, length);
}

void append_metadata(std::string& out, const char* what, std::uint64_t pid, std::uint64_t tid, const char* arg,
                     const std::string& value_json) {
    out += "{\"name\":\"";
    out += what;
    out += "\",\"ph\":\"M\",\"pid\":";
    append_uint(out, pid);
    out += ",\"tid\":";
    append_uint(out, tid);
    out += ",\"args\":{\"";
    out += arg;
    out += "\":";
    out += value_json;
    out += "}},\n";
}

std::string uint_string(std::uint64_t value) {
    std::string s;
    append_uint(s, value);
    return s;
}

}  // namespace

std::uint64_t ticks_to_ps(std::uint64_t ticks, std::uint64_t ticks_per_second) {
    return to_picoseconds_exact(Cycles(ticks), ticks_per_second).count();
}

std::string trace_json(const run::Timeline& timeline, const std::vector<std::pair<std::string, std::string>>& about) {
    const std::uint64_t tps = timeline.ticks_per_second;
    std::string out;
    out.reserve(256 + timeline.spans.size() * 128);
    out += "{\"traceEvents\":[\n";

    // 1. Metadata: names and display order of processes and tracks.
    for (std::size_t p = 0; p < timeline.processes.size(); ++p) {
        append_metadata(out, "process_name", p + 1, 0, "name", json_string(timeline.processes[p]));
        append_metadata(out, "process_sort_index", p + 1, 0, "sort_index", uint_string(p));
    }
    for (std::size_t t = 0; t < timeline.tracks.size(); ++t) {
        const run::TimelineTrack& track = timeline.tracks[t];
        append_metadata(out, "thread_name", track.process + 1, t + 1, "name", json_string(track.name));
        append_metadata(out, "thread_sort_index", track.process + 1, t + 1, "sort_index",
                        uint_string(track.sort_index));
    }

    // 2. Spans by start, the longer first on ties, so a parent precedes the spans it contains.
    std::vector<std::uint32_t> order(timeline.spans.size());
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
        const run::TimelineSpan& x = timeline.spans[a];
        const run::TimelineSpan& y = timeline.spans[b];
        return x.start != y.start ? x.start < y.start : x.end > y.end;
    });
    std::vector<std::string> names;
    names.reserve(timeline.names.size());
    for (const std::string& n : timeline.names) names.push_back(json_string(n));
    for (const std::uint32_t index : order) {
        const run::TimelineSpan& s = timeline.spans[index];
        const std::uint64_t start_ps = ticks_to_ps(s.start, tps);
        out += "{\"name\":";
        out += names[s.name];
        out += ",\"cat\":\"";
        out += s.category;
        out += s.instant ? "\",\"ph\":\"i\",\"s\":\"t\",\"ts\":" : "\",\"ph\":\"X\",\"ts\":";
        append_microseconds(out, start_ps);
        if (!s.instant) {
            out += ",\"dur\":";
            append_microseconds(out, ticks_to_ps(s.end, tps) - start_ps);
        }
        out += ",\"pid\":";
        append_uint(out, timeline.tracks[s.track].process + 1);
        out += ",\"tid\":";
        append_uint(out, s.track + 1);
        out += ",\"args\":{";
        bool first = true;
        for (const run::TimelineArg& arg : s.args) {
            if (!arg.key) continue;
            out += first ? "\"" : ",\"";
            out += arg.key;
            out += "\":";
            append_uint(out, arg.value);
            first = false;
        }
        out += "}},\n";
    }
    if (out.back() == '\n' && out[out.size() - 2] == ',') out.erase(out.size() - 2, 1);

    // 3. What the file is: the caller's facts, then the clock, the end and the detail level.
    out += "],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{";
    for (const auto& [key, value] : about) {
        out += json_string(key);
        out += ':';
        out += json_string(value);
        out += ',';
    }
    out += "\"tick_unit\":";
    out += timeline.unit == run::TickUnit::cycles ? "\"cycles\"" : "\"ps\"";
    out += ",\"ticks_per_second\":";
    append_uint(out, tps);
    out += ",\"end_ticks\":";
    append_uint(out, timeline.end);
    out += ",\"end_us\":";
    append_microseconds(out, ticks_to_ps(timeline.end, tps));
    out += ",\"detail\":";
    out += timeline.aggregated ? "\"aggregated\"" : "\"full\"";
    out += ",\"detailed_spans\":";
    append_uint(out, timeline.detailed_spans);
    out += ",\"detail_limit\":";
    append_uint(out, timeline.detail_limit);
    if (timeline.aggregated) {
        out += ",\"aggregation\":";
        out += json_string(timeline.aggregate_rule);
    }
    out += "}}\n";
    return out;
}

}  // namespace fastsim::output
