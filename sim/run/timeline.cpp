// SPDX-License-Identifier: MIT
#include "run/timeline.h"

#include <algorithm>
#include <cstring>
#include <string>
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
    m_aggregates.emplace_back();
    return static_cast<std::uint32_t>(m_timeline.tracks.size() - 1);
}

std::uint32_t TimelineBuilder::name_id(const std::string& name) {
    const auto [it, inserted] = m_name_ids.emplace(name, static_cast<std::uint32_t>(m_timeline.names.size()));
    if (inserted) m_timeline.names.push_back(name);
    return it->second;
}

void TimelineBuilder::add_outline(const TimelineSpan& span) { m_timeline.spans.push_back(span); }

void TimelineBuilder::Aggregate::absorb(const TimelineSpan& span) {
    end = std::max(end, span.end);
    ++spans;
    busy += span.end - span.start;
    if (sum_key && span.args[0].key && std::strcmp(sum_key, span.args[0].key) == 0)
        sum += span.args[0].value;
    else
        sum_key = nullptr;
}

void TimelineBuilder::Aggregate::merge(const Aggregate& later) {
    last_group = later.last_group;
    runs += later.runs;
    end = std::max(end, later.end);
    spans += later.spans;
    busy += later.busy;
    if (sum_key && later.sum_key && std::strcmp(sum_key, later.sum_key) == 0)
        sum += later.sum;
    else
        sum_key = nullptr;
}

void TimelineBuilder::add_detail(std::uint32_t group, const TimelineSpan& span) {
    // 1. Keep the span itself while the details stay within the limit.
    if (++m_timeline.detailed_spans <= m_timeline.detail_limit) {
        m_details.push_back(span);
    } else if (!m_details.empty()) {
        std::deque<TimelineSpan>().swap(m_details);
    }
    // 2. Add it to its track's open aggregate: a new group starts a run, and a new aggregate
    // once the open one covers as many runs as allowed.
    TrackAggregates& track = m_aggregates[span.track];
    if (track.has_open && track.open.last_group != group) {
        if (track.open.runs >= m_runs_per_aggregate) {
            close(track);
        } else {
            track.open.last_group = group;
            ++track.open.runs;
        }
    }
    if (!track.has_open) {
        track.open = Aggregate{group, group, 1, span.start, span.start, 0, 0, span.args[0].key, 0};
        track.has_open = true;
    }
    track.open.absorb(span);
}

void TimelineBuilder::close(TrackAggregates& track) {
    if (!track.has_open) return;
    track.closed.push_back(track.open);
    track.has_open = false;
    if (++m_closed > m_timeline.detail_limit) coarsen();
}

void TimelineBuilder::coarsen() {
    bool merged = true;
    while (m_closed > m_timeline.detail_limit && merged) {
        merged = false;
        m_runs_per_aggregate *= 2;
        m_closed = 0;
        for (TrackAggregates& track : m_aggregates) {
            std::vector<Aggregate>& c = track.closed;
            std::size_t kept = 0;
            for (std::size_t i = 0; i < c.size(); i += 2, ++kept) {
                c[kept] = c[i];
                if (i + 1 < c.size()) {
                    c[kept].merge(c[i + 1]);
                    merged = true;
                }
            }
            c.resize(kept);
            m_closed += kept;
        }
    }
}

Timeline TimelineBuilder::finish(std::uint64_t end) {
    m_timeline.end = end;
    m_timeline.aggregated = m_timeline.detailed_spans > m_timeline.detail_limit;
    if (!m_timeline.aggregated) {
        m_details.insert(m_details.end(), m_timeline.spans.begin(), m_timeline.spans.end());  // the outline
        m_timeline.spans = std::move(m_details);
        return std::move(m_timeline);
    }
    for (TrackAggregates& track : m_aggregates) close(track);
    if (m_runs_per_aggregate > 1)
        m_timeline.aggregate_rule += "; those exceeded the limit too, so neighbours on a track were merged: up to " +
                                     std::to_string(m_runs_per_aggregate) +
                                     " groups per span, named 'FIRST to LAST', with arg groups";
    for (std::uint32_t t = 0; t < m_aggregates.size(); ++t)
        for (const Aggregate& a : m_aggregates[t].closed) {
            TimelineSpan s;
            s.track = t;
            s.name = a.first_group == a.last_group && a.runs == 1
                         ? a.first_group
                         : name_id(m_timeline.names[a.first_group] + " to " + m_timeline.names[a.last_group]);
            s.category = "aggregate";
            s.start = a.start;
            s.end = a.end;
            s.args[0] = {"spans", a.spans};
            s.args[1] = {m_timeline.unit == TickUnit::cycles ? "busy_cycles" : "busy_ps", a.busy};
            if (a.sum_key) s.args[2] = {a.sum_key, a.sum};
            if (a.runs > 1) s.args[3] = {"groups", a.runs};
            m_timeline.spans.push_back(s);
        }
    return std::move(m_timeline);
}

}  // namespace fastsim::run
