// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "run/timeline.h"

namespace fastsim::output {

/// `ticks` of a timeline as whole picoseconds: to_picoseconds_exact of ticks as cycles of a
/// clock at ticks_per_second (exact for a cluster run's ps; a node cycle at a clock that does
/// not divide 10^12 is off by at most 0.5 ps). Monotone, so spans that nest in ticks still nest.
std::uint64_t ticks_to_ps(std::uint64_t ticks, std::uint64_t ticks_per_second);

/// The timeline as Chrome trace-event JSON (Perfetto, chrome://tracing; docs/cli.md,
/// "Timeline traces"): {"traceEvents": [...], "displayTimeUnit": "ns", "otherData": {...}}.
/// Each process gets process_name and process_sort_index metadata ("ph": "M", pid = index + 1),
/// each track thread_name and thread_sort_index (tid = index + 1, unique over the file).
/// Spans become complete events ("ph": "X") or, for instants, thread-scoped instant events
/// ("ph": "i"), with ts and dur in microseconds written exactly to the picosecond; events are
/// ordered by start, longer first on ties. otherData holds `about` (string values) and the
/// timeline's clock, end and detail level.
std::string trace_json(const run::Timeline& timeline, const std::vector<std::pair<std::string, std::string>>& about);

}  // namespace fastsim::output
