// SPDX-License-Identifier: MIT
// Timelines: the builder's detail limit and aggregates, and the Chrome trace-event JSON they
// become (exact picosecond times, metadata, nesting).
#include <catch2/catch.hpp>

#include "report/trace_json.h"
#include "run/timeline.h"
#include "support/trace_file.h"

using namespace fastsim;

namespace {

run::TimelineSpan span(std::uint32_t track, std::uint32_t name, std::uint64_t start, std::uint64_t end,
                       std::uint64_t bits) {
    run::TimelineSpan s;
    s.track = track;
    s.name = name;
    s.category = "load";
    s.start = start;
    s.end = end;
    s.args[0] = {"dram_bits", bits};
    return s;
}

/// Two tracks of one process: an outline span per group on "phases", details on "dma":
/// group A has spans [0,10) and [10,25), group B [30,40) and [45,50).
run::Timeline two_groups(std::uint64_t limit) {
    run::TimelineBuilder b(run::TickUnit::cycles, 1'000'000'000, {limit}, "one span per group");
    const std::uint32_t node = b.add_process("node");
    const std::uint32_t phases = b.add_track(node, "phases", 0);
    const std::uint32_t dma = b.add_track(node, "DMA", 1);
    const std::uint32_t a = b.name_id("A"), group_b = b.name_id("B"), load = b.name_id("load");
    CHECK(b.name_id("A") == a);
    run::TimelineSpan outline = span(phases, a, 0, 25, 0);
    outline.args = {};
    b.add_outline(outline);
    b.add_detail(a, span(dma, load, 0, 10, 100));
    b.add_detail(a, span(dma, load, 10, 25, 50));
    b.add_detail(group_b, span(dma, load, 30, 40, 7));
    b.add_detail(group_b, span(dma, load, 45, 50, 3));
    return b.finish(50);
}

}  // namespace

TEST_CASE("a timeline keeps its detailed spans up to the limit, then one aggregate per group and track",
          "[timeline]") {
    const run::Timeline full = two_groups(4);
    CHECK_FALSE(full.aggregated);
    CHECK(full.detailed_spans == 4);
    CHECK(full.spans.size() == 1 + 4);
    CHECK(full.end == 50);

    const run::Timeline aggregated = two_groups(3);
    CHECK(aggregated.aggregated);
    CHECK(aggregated.detailed_spans == 4);
    REQUIRE(aggregated.spans.size() == 1 + 2);
    const run::TimelineSpan& a = aggregated.spans[1];
    CHECK(aggregated.names[a.name] == "A");
    CHECK(std::string(a.category) == "aggregate");
    CHECK((a.start == 0 && a.end == 25));
    CHECK((std::string(a.args[0].key) == "spans" && a.args[0].value == 2));
    CHECK((std::string(a.args[1].key) == "busy_cycles" && a.args[1].value == 25));
    CHECK((std::string(a.args[2].key) == "dram_bits" && a.args[2].value == 150));
    const run::TimelineSpan& b = aggregated.spans[2];
    CHECK(aggregated.names[b.name] == "B");
    CHECK((b.start == 30 && b.end == 50));
    CHECK(b.args[1].value == 10 + 5);  // busy time, not the span's length
    CHECK(b.args[2].value == 10);
}

TEST_CASE("ticks become picoseconds rounded to nearest, monotone", "[timeline]") {
    CHECK(report::ticks_to_ps(7, 700'000'000) == 10'000);  // 7 cycles at 700 MHz = 10 ns
    CHECK(report::ticks_to_ps(1, 700'000'000) == 1'429);   // 1428.57 ps
    CHECK(report::ticks_to_ps(3, 700'000'000) == 4'286);   // 4285.71 ps
    CHECK(report::ticks_to_ps(123'456'789'012ull, 1'000'000'000'000ull) == 123'456'789'012ull);
    // 10^10 cycles at 1 GHz (10 s): the product with 10^12 needs more than 64 bits.
    CHECK(report::ticks_to_ps(10'000'000'000ull, 1'000'000'000) == 10'000'000'000'000ull);
    for (std::uint64_t t = 0; t < 2000; ++t)
        CHECK(report::ticks_to_ps(t + 1, 700'000'000) > report::ticks_to_ps(t, 700'000'000));
}

TEST_CASE("trace_json writes Chrome trace events with exact times, names for every track, and otherData",
          "[timeline]") {
    run::TimelineBuilder b(run::TickUnit::cycles, 700'000'000, {}, "rule");
    const std::uint32_t node = b.add_process("node \"0\"");
    const std::uint32_t phases = b.add_track(node, "phases", 0);
    const std::uint32_t sends = b.add_track(node, "sends", 1);
    const std::uint32_t phase = b.name_id("conv1 forward");
    run::TimelineSpan outline;
    outline.track = phases;
    outline.name = phase;
    outline.category = "phase";
    outline.start = 0;
    outline.end = 7;
    outline.args[0] = {"tiles", 2};
    b.add_outline(outline);
    run::TimelineSpan child = span(phases, b.name_id("tile"), 0, 3, 64);
    b.add_detail(phase, child);
    run::TimelineSpan send = span(sends, b.name_id("send to node 1"), 5, 5, 8);
    send.instant = true;
    b.add_detail(phase, send);
    const std::string json = report::trace_json(b.finish(7), {{"config", "tiny.yaml"}});
    // Cycle 5 at 700 MHz is 7142.857 ps: written as 7143 ps, in microseconds.
    CHECK_THAT(json, Catch::Matchers::Contains("\"ph\":\"i\",\"s\":\"t\",\"ts\":0.007143,"));
    const test::TraceFile trace = test::parse_trace(json);
    CHECK(trace.display_time_unit == "ns");
    CHECK(trace.process_names.at(1) == "node \"0\"");
    CHECK(trace.thread_names.at({1, 1}) == "phases");
    CHECK(trace.thread_names.at({1, 2}) == "sends");
    REQUIRE(trace.spans.size() == 2);
    // The parent first (same start, longer), 7 cycles = 10 ns exactly.
    CHECK(trace.spans[0].name == "conv1 forward");
    CHECK(trace.spans[0].start_ps == 0);
    CHECK(trace.spans[0].duration_ps == 10'000);
    CHECK(trace.spans[0].args.at("tiles") == 2);
    CHECK(trace.spans[1].name == "tile");
    CHECK(trace.spans[1].duration_ps == 4'286);  // 3 cycles
    CHECK(trace.spans[1].args.at("dram_bits") == 64);
    REQUIRE(trace.instants.size() == 1);
    CHECK(trace.instants[0].start_ps == 7'143);
    CHECK(trace.instants[0].tid == 2);
    CHECK(test::nesting_violation(trace.spans).empty());
    CHECK(trace.other_data["config"].as<std::string>() == "tiny.yaml");
    CHECK(trace.other_data["tick_unit"].as<std::string>() == "cycles");
    CHECK(trace.other_data["ticks_per_second"].as<std::uint64_t>() == 700'000'000);
    CHECK(trace.other_data["end_ticks"].as<std::uint64_t>() == 7);
    CHECK(trace.other_data["detail"].as<std::string>() == "full");
    CHECK_FALSE(trace.other_data["aggregation"]);
}

TEST_CASE("the nesting check finds partly overlapping spans and accepts nested and touching ones", "[timeline]") {
    const auto at = [](std::uint64_t tid, std::uint64_t start, std::uint64_t end) {
        test::TraceEvent e;
        e.name = "s";
        e.pid = 1;
        e.tid = tid;
        e.start_ps = start;
        e.duration_ps = end - start;
        return e;
    };
    CHECK(test::nesting_violation({at(1, 0, 10), at(1, 2, 5), at(1, 5, 10), at(1, 10, 12), at(2, 3, 11)}).empty());
    CHECK_FALSE(test::nesting_violation({at(1, 0, 10), at(1, 2, 5), at(1, 4, 6)}).empty());
    CHECK_FALSE(test::nesting_violation({at(1, 0, 10), at(1, 9, 11)}).empty());
    CHECK(test::microseconds_to_ps("12.000345") == 12'000'345);
    CHECK(test::microseconds_to_ps("3") == 3'000'000);
    CHECK_THROWS(test::microseconds_to_ps("1e-3"));
}
