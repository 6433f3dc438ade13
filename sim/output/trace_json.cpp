// SPDX-License-Identifier: MIT
#include "output/trace_json.h"

#include <algorithm>
#include <numeric>

#include "common/json_writer.h"
#include "common/units.h"

namespace fastsim::output {
namespace {

/// Trace timestamps are microseconds: picoseconds / 10^6, exact with six decimals.
constexpr unsigned kMicrosecondDecimals = 6;

/// One metadata event ("ph": "M") naming or ordering process `pid` or its track `tid`; `value`
/// writes the value of its one argument `arg`.
template <typename WriteValue>
void write_metadata(JsonWriter& json, const char* what, std::uint64_t pid, std::uint64_t tid, const char* arg,
                    const WriteValue& value) {
    json.begin_object().key("name").string(what).key("ph").string("M").key("pid").integer(pid);
    json.key("tid").integer(tid).key("args").begin_object().key(arg);
    value(json);
    json.end_object().end_object();
}

}  // namespace

std::uint64_t ticks_to_ps(std::uint64_t ticks, std::uint64_t ticks_per_second) {
    return to_picoseconds_exact(Cycles(ticks), ticks_per_second).count();
}

std::string trace_json(const run::Timeline& timeline, const std::vector<std::pair<std::string, std::string>>& about) {
    const std::uint64_t tps = timeline.ticks_per_second;
    JsonWriter json(JsonStyle::compact);
    json.reserve(256 + timeline.spans.size() * 128);
    json.begin_object(JsonLayout::continued_lines).key("traceEvents").begin_array(JsonLayout::one_per_line);

    // 1. Metadata: names and display order of processes and tracks.
    for (std::size_t p = 0; p < timeline.processes.size(); ++p) {
        write_metadata(json, "process_name", p + 1, 0, "name", [&](JsonWriter& j) { j.string(timeline.processes[p]); });
        write_metadata(json, "process_sort_index", p + 1, 0, "sort_index", [&](JsonWriter& j) { j.integer(p); });
    }
    for (std::size_t t = 0; t < timeline.tracks.size(); ++t) {
        const run::TimelineTrack& track = timeline.tracks[t];
        write_metadata(json, "thread_name", track.process + 1, t + 1, "name",
                       [&](JsonWriter& j) { j.string(track.name); });
        write_metadata(json, "thread_sort_index", track.process + 1, t + 1, "sort_index",
                       [&](JsonWriter& j) { j.integer(track.sort_index); });
    }

    // 2. Spans by start, the longer first on ties, so a parent precedes the spans it contains.
    std::vector<std::uint32_t> order(timeline.spans.size());
    std::iota(order.begin(), order.end(), 0u);
    std::stable_sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
        const run::TimelineSpan& x = timeline.spans[a];
        const run::TimelineSpan& y = timeline.spans[b];
        return x.start != y.start ? x.start < y.start : x.end > y.end;
    });
    for (const std::uint32_t index : order) {
        const run::TimelineSpan& s = timeline.spans[index];
        const std::uint64_t start_ps = ticks_to_ps(s.start, tps);
        json.begin_object().key("name").string(timeline.names[s.name]).key("cat").string(s.category);
        json.key("ph").string(s.instant ? "i" : "X");
        if (s.instant) json.key("s").string("t");
        json.key("ts").exact_decimal(start_ps, kMicrosecondDecimals);
        if (!s.instant) json.key("dur").exact_decimal(ticks_to_ps(s.end, tps) - start_ps, kMicrosecondDecimals);
        json.key("pid").integer(timeline.tracks[s.track].process + 1).key("tid").integer(s.track + 1);
        json.key("args").begin_object();
        for (const run::TimelineArg& arg : s.args)
            if (arg.key) json.key(arg.key).integer(arg.value);
        json.end_object().end_object();
    }
    json.end_array();

    // 3. What the file is: the caller's facts, then the clock, the end and the detail level.
    json.key("displayTimeUnit").string("ns").key("otherData").begin_object();
    for (const auto& [key, value] : about) json.key(key).string(value);
    json.key("tick_unit").string(timeline.unit == run::TickUnit::cycles ? "cycles" : "ps");
    json.key("ticks_per_second").integer(tps).key("end_ticks").integer(timeline.end);
    json.key("end_us").exact_decimal(ticks_to_ps(timeline.end, tps), kMicrosecondDecimals);
    json.key("detail").string(timeline.aggregated ? "aggregated" : "full");
    json.key("detailed_spans").integer(timeline.detailed_spans).key("detail_limit").integer(timeline.detail_limit);
    if (timeline.aggregated) json.key("aggregation").string(timeline.aggregate_rule);
    json.end_object().end_object();
    return json.take();
}

}  // namespace fastsim::output
