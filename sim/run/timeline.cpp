// SPDX-License-Identifier: MIT
#include "run/timeline.h"

#include <algorithm>
#include <cstring>
#include <utility>

namespace fastsim::run {

TimelineBuilder::TimelineBuilder(TickUnit unit, std::uint64_t ticks_per_second, const TimelineRequest& request,
                                 std::string aggregate_rule) {
    m_timeline.unit = unit;
    m_timeline.ticks_per_second = ticks_per_second;
    m_timeline.detail_limit = request.detail_limit;
    m_timeline.aggregate_rule = std::move(aggregate_rule);
}

std::uint32_t TimelineBuilder::add_process(std::string name) {
    m_timeline.processes.push_back(std::move(name));
    return static_cast<std::uint32_t>(m_timeline.processes.size() - 1);
}

std::uint32_t TimelineBuilder::add_track(std::uint32_t process, std::string name, std::uint64_t sort_index) {
    m_timeline.tracks.push_back({process, std::move(name), sort_index});
    m_open.emplace_back();
    return static_cast<std::uint32_t>(m_timeline.tracks.size() - 1);
}

std::uint32_t TimelineBuilder::name_id(const std::string& name) {
    const auto [it, inserted] = m_name_ids.emplace(name, static_cast<std::uint32_t>(m_timeline.names.size()));
    if (inserted) m_timeline.names.push_back(name);
    return it->second;
}

void TimelineBuilder::add_outline(const TimelineSpan& span) { m_timeline.spans.push_back(span); }

void TimelineBuilder::add_detail(std::uint32_t group, const TimelineSpan& span) {
    // 1. Keep the span itself while the details stay within the limit.
    if (++m_timeline.detailed_spans <= m_timeline.detail_limit) {
        m_details.push_back(span);
    } else if (!m_details.empty()) {
        std::vector<TimelineSpan>().swap(m_details);
    }
    // 2. Extend the track's open aggregate, or close it and open one for this group.
    Aggregate& a = m_open[span.track];
    if (a.open && a.group != group) close(span.track);
    if (!a.open) {
        a = Aggregate{true, group, span.start, span.end, 0, 0, span.args[0].key, 0};
    }
    a.end = std::max(a.end, span.end);
    ++a.spans;
    a.busy += span.end - span.start;
    if (a.sum_key && span.args[0].key && std::strcmp(a.sum_key, span.args[0].key) == 0)
        a.sum += span.args[0].value;
    else
        a.sum_key = nullptr;
}

void TimelineBuilder::close(std::uint32_t track) {
    Aggregate& a = m_open[track];
    if (!a.open) return;
    TimelineSpan s;
    s.track = track;
    s.name = a.group;
    s.category = "aggregate";
    s.start = a.start;
    s.end = a.end;
    s.args[0] = {"spans", a.spans};
    s.args[1] = {m_timeline.unit == TickUnit::cycles ? "busy_cycles" : "busy_ps", a.busy};
    if (a.sum_key) s.args[2] = {a.sum_key, a.sum};
    m_aggregates.push_back(s);
    a.open = false;
}

Timeline TimelineBuilder::finish(std::uint64_t end) {
    for (std::uint32_t t = 0; t < m_open.size(); ++t) close(t);
    m_timeline.end = end;
    m_timeline.aggregated = m_timeline.detailed_spans > m_timeline.detail_limit;
    const std::vector<TimelineSpan>& kept = m_timeline.aggregated ? m_aggregates : m_details;
    m_timeline.spans.insert(m_timeline.spans.end(), kept.begin(), kept.end());
    return std::move(m_timeline);
}

}  // namespace fastsim::run
