// SPDX-License-Identifier: MIT
#pragma once

// What a run did over time, as processes holding tracks of spans: the value `fastsim run
// --trace` hands to run::trace_json (docs/cli.md, "Timeline traces").

#include <array>
#include <cstdint>
#include <deque>
#include <string>
#include <unordered_map>
#include <vector>

namespace fastsim::run {

/// Detailed spans a timeline keeps before it aggregates them (--trace-detail-limit).
inline constexpr std::uint64_t kDefaultTimelineDetailLimit = 200'000;

/// Asks a run for its timeline.
struct TimelineRequest {
    std::uint64_t detail_limit = kDefaultTimelineDetailLimit;  ///< detailed spans kept at most
};

/// The unit of a timeline's ticks: node cycles (a node run) or picoseconds (a cluster run).
enum class TickUnit : std::uint8_t { cycles, ps };

/// A numeric argument of a span. `key` is a string literal with the unit in its name;
/// nullptr marks an unused slot.
struct TimelineArg {
    const char* key = nullptr;
    std::uint64_t value = 0;
};

struct TimelineSpan {
    std::uint32_t track = 0;
    std::uint32_t name = 0;     ///< index into Timeline::names
    const char* category = "";  ///< a string literal: load, compute, transfer, ...
    std::uint64_t start = 0;    ///< ticks
    std::uint64_t end = 0;      ///< ticks, >= start; == start for an instant
    bool instant = false;       ///< a point in time (a Send), not an interval
    std::array<TimelineArg, 4> args{};
};

struct TimelineTrack {
    std::uint32_t process = 0;  ///< index into Timeline::processes
    std::string name;
    std::uint64_t sort_index = 0;  ///< display order within the process
};

struct Timeline {
    std::uint64_t ticks_per_second = 0;  ///< cycles: the node's clock; ps: 10^12
    TickUnit unit = TickUnit::cycles;
    std::uint64_t end = 0;  ///< ticks: the run's reported end (total cycles, step time)
    std::vector<std::string> processes;
    std::vector<TimelineTrack> tracks;
    std::vector<std::string> names;
    /// Outline spans and the details or their aggregates, any order. A deque: a large run's
    /// spans grow without being copied.
    std::deque<TimelineSpan> spans;
    std::uint64_t detailed_spans = 0;  ///< detailed spans the run produced, kept or not
    std::uint64_t detail_limit = 0;
    bool aggregated = false;     ///< detailed_spans > detail_limit: details replaced by aggregates
    std::string aggregate_rule;  ///< what one aggregate span stands for
};

/// Builds a Timeline. Detailed spans are kept while their number stays within the limit;
/// beyond it they are all replaced by aggregates, at most max(limit, tracks used) of them:
///   1. each run of consecutive detailed spans of one group on one track becomes one span
///      [first start, last end], named after the group, with args `spans` (count),
///      `busy_cycles` or `busy_ps` (sum of durations) and the sum of args[0] when every span
///      has the same args[0] key;
///   2. while those are more than the limit, neighbouring aggregates on each track merge
///      pairwise (every aggregate then covers up to 2, 4, 8, ... runs); a merged one is named
///      "FIRST to LAST" after its first and last group and has an arg `groups` (runs covered).
/// Memory stays within the limit's worth of spans whatever the run's size.
///
/// Contract: on each track, detailed spans arrive in time order and do not overlap, so the
/// aggregates do not overlap either. Outline spans are always kept.
class TimelineBuilder {
public:
    TimelineBuilder(TickUnit unit, std::uint64_t ticks_per_second, const TimelineRequest& request,
                    std::string aggregate_rule);

    std::uint32_t add_process(std::string name);
    std::uint32_t add_track(std::uint32_t process, std::string name, std::uint64_t sort_index);
    /// The id of `name` in Timeline::names, added on first use.
    std::uint32_t name_id(const std::string& name);

    /// A span kept at every level of detail (a node run's phases).
    void add_outline(const TimelineSpan& span);
    /// A detailed span of `group` (a name id: the layer and phase, or schedule label, it
    /// belongs to).
    void add_detail(std::uint32_t group, const TimelineSpan& span);

    /// The timeline of a run that ended at `end` ticks. The builder is spent afterwards.
    Timeline finish(std::uint64_t end);

private:
    struct Aggregate {
        std::uint32_t first_group = 0, last_group = 0;
        std::uint64_t runs = 0;  ///< runs of one group it covers
        std::uint64_t start = 0, end = 0, spans = 0, busy = 0;
        const char* sum_key = nullptr;  ///< args[0]'s key, nullptr once two spans disagree
        std::uint64_t sum = 0;
        /// One more span of its last run.
        void absorb(const TimelineSpan& span);
        /// `later` (of the same track, after it) joins it.
        void merge(const Aggregate& later);
    };
    struct TrackAggregates {
        std::vector<Aggregate> closed;  ///< in time order
        Aggregate open;
        bool has_open = false;
    };
    void close(TrackAggregates& track);
    /// Doubles the runs an aggregate may cover, merging every track's closed ones pairwise,
    /// until they fit the limit (or each track has one).
    void coarsen();

    Timeline m_timeline;
    std::unordered_map<std::string, std::uint32_t> m_name_ids;
    std::deque<TimelineSpan> m_details;         ///< emptied once the limit is passed
    std::vector<TrackAggregates> m_aggregates;  ///< by track
    std::uint64_t m_closed = 0;                 ///< closed aggregates over all tracks
    std::uint64_t m_runs_per_aggregate = 1;
};

}  // namespace fastsim::run
