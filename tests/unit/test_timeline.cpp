// SPDX-License-Identifier: MIT
// Timelines: the builder's detail limit and aggregates, and the Chrome trace-event JSON they
// become (exact picosecond times, metadata, nesting).
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

#include "output/trace_json.h"
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

TEST_CASE("a timeline keeps its detailed spans up to the limit, then one aggregate per group and track", "[timeline]") {
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

TEST_CASE("aggregates beyond the limit merge pairwise on each track until they fit", "[timeline]") {
    // One track, groups g0 .. g7 of one span each ([10 i, 10 i + 4)), limit 3: the eight runs
    // become two aggregates of four runs each.
    run::TimelineBuilder b(run::TickUnit::ps, 1'000'000'000'000ull, {3}, "rule");
    const std::uint32_t links = b.add_process("links");
    const std::uint32_t channel = b.add_track(links, "channel 0", 0);
    b.add_track(links, "unused", 1);
    const std::uint32_t transfer = b.name_id("transfer");
    for (std::uint64_t i = 0; i < 8; ++i) {
        run::TimelineSpan s = span(channel, transfer, 10 * i, 10 * i + 4, 100 + i);
        s.args[0].key = "bytes";
        b.add_detail(b.name_id("g" + std::to_string(i)), s);
    }
    const run::Timeline t = b.finish(74);
    CHECK(t.aggregated);
    CHECK(t.aggregate_rule ==
          "rule; those exceeded the limit too, so neighbours on a track were merged: up to 4 groups "
          "per span, named 'FIRST to LAST', with arg groups");
    REQUIRE(t.spans.size() == 2);
    for (std::size_t k = 0; k < 2; ++k) {
        const run::TimelineSpan& a = t.spans[k];
        INFO("aggregate " << k);
        CHECK(t.names[a.name] == "g" + std::to_string(4 * k) + " to g" + std::to_string(4 * k + 3));
        CHECK((a.start == 40 * k && a.end == 40 * k + 34));
        CHECK((std::string(a.args[0].key) == "spans" && a.args[0].value == 4));
        CHECK((std::string(a.args[1].key) == "busy_ps" && a.args[1].value == 16));
        CHECK((std::string(a.args[2].key) == "bytes" && a.args[2].value == 4 * 100 + (4 * k) * 4 + 6));
        CHECK((std::string(a.args[3].key) == "groups" && a.args[3].value == 4));
    }
    // A limit of 0 leaves one aggregate per track used.
    run::TimelineBuilder none(run::TickUnit::ps, 1'000'000'000'000ull, {0}, "rule");
    const std::uint32_t p = none.add_process("links");
    const std::uint32_t c0 = none.add_track(p, "channel 0", 0), c1 = none.add_track(p, "channel 1", 1);
    for (std::uint64_t i = 0; i < 5; ++i)
        for (const std::uint32_t c : {c0, c1})
            none.add_detail(none.name_id("g" + std::to_string(i)), span(c, transfer, i, i + 1, 1));
    const run::Timeline one = none.finish(5);
    REQUIRE(one.spans.size() == 2);
    CHECK((one.spans[0].start == 0 && one.spans[0].end == 5 && one.spans[0].args[0].value == 5));
}

TEST_CASE("aggregates never exceed the limit (or one per track used) and stay disjoint on each track", "[timeline]") {
    std::mt19937_64 rng(11);
    for (const std::uint64_t limit : {0u, 7u, 40u, 500u}) {
        run::TimelineBuilder b(run::TickUnit::ps, 1'000'000'000'000ull, {limit}, "rule");
        const std::uint32_t p = b.add_process("p");
        std::vector<std::uint32_t> tracks;
        std::vector<std::uint64_t> clock(30, 0);
        for (int t = 0; t < 30; ++t)
            tracks.push_back(b.add_track(p, "t" + std::to_string(t), static_cast<std::uint64_t>(t)));
        std::vector<std::uint32_t> groups;
        for (int g = 0; g < 25; ++g) groups.push_back(b.name_id("g" + std::to_string(g)));
        std::size_t group = 0;
        for (int i = 0; i < 20'000; ++i) {
            if (rng() % 8 == 0) group = (group + 1) % groups.size();
            const std::size_t t = rng() % tracks.size();
            const std::uint64_t start = clock[t] + rng() % 5, end = start + rng() % 9;
            clock[t] = end;
            b.add_detail(groups[group], span(tracks[t], groups[group], start, end, 1));
        }
        const run::Timeline timeline = b.finish(0);
        INFO("limit " << limit);
        CHECK(timeline.aggregated);
        CHECK(timeline.spans.size() <= std::max<std::uint64_t>(limit, tracks.size()));
        std::uint64_t spans = 0;
        std::vector<std::uint64_t> last_end(tracks.size(), 0);
        for (const run::TimelineSpan& s : timeline.spans) {  // per track in time order
            CHECK(s.start >= last_end[s.track]);
            last_end[s.track] = s.end;
            spans += s.args[0].value;
        }
        CHECK(spans == 20'000);
    }
}

TEST_CASE("ticks become picoseconds rounded to nearest, monotone", "[timeline]") {
    CHECK(output::ticks_to_ps(7, 700'000'000) == 10'000);  // 7 cycles at 700 MHz = 10 ns
    CHECK(output::ticks_to_ps(1, 700'000'000) == 1'429);   // 1428.57 ps
    CHECK(output::ticks_to_ps(3, 700'000'000) == 4'286);   // 4285.71 ps
    CHECK(output::ticks_to_ps(123'456'789'012ull, 1'000'000'000'000ull) == 123'456'789'012ull);
    // 10^10 cycles at 1 GHz (10 s): the product with 10^12 needs more than 64 bits.
    CHECK(output::ticks_to_ps(10'000'000'000ull, 1'000'000'000) == 10'000'000'000'000ull);
    for (std::uint64_t t = 0; t < 2000; ++t)
        CHECK(output::ticks_to_ps(t + 1, 700'000'000) > output::ticks_to_ps(t, 700'000'000));
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
    const std::string json = output::trace_json(b.finish(7), {{"config", "tiny.yaml"}});
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
