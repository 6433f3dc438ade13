// SPDX-License-Identifier: MIT
// `fastsim run --trace FILE`: the timeline of a node step and of a cluster step as Chrome
// trace-event JSON, its nesting and end time against the report, and aggregation beyond
// --trace-detail-limit.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <set>

#include <yaml-cpp/yaml.h>

#include "output/trace_json.h"
#include "support/fastsim_process.h"
#include "support/temp_dir.h"
#include "support/trace_file.h"

using Catch::Matchers::Contains;
using fastsim::test::run_fastsim;
using fastsim::test::slurp;
using fastsim::test::TraceEvent;
using fastsim::test::TraceFile;

namespace {

const std::string kTinyNode = std::string(FASTSIM_SOURCE_DIR) + "/configs/tests/tiny_node.yaml";
const std::string kTinyCluster = std::string(FASTSIM_SOURCE_DIR) + "/configs/tests/tiny_cluster.yaml";
constexpr std::uint64_t kTinyNodeClockHz = 700'000'000;

/// Runs `fastsim run ARGS --trace DIR/trace.json --out DIR/out` and parses the trace.
struct TracedRun {
    fastsim::test::Result result;
    TraceFile trace;
    YAML::Node report;
};
TracedRun traced_run(const fastsim::test::TempDir& dir, const std::string& args) {
    TracedRun run;
    run.result = run_fastsim("run " + args + " --trace " + dir.path("trace.json") + " --out " + dir.path("out"));
    REQUIRE(run.result.exit_code == 0);
    REQUIRE_NOTHROW(run.trace = fastsim::test::parse_trace(slurp(dir.path("trace.json"))));
    run.report = YAML::LoadFile(dir.path("out/report.json"));
    return run;
}

/// Every span's process and thread are named, and on every track spans nest.
void check_names_and_nesting(const TraceFile& trace) {
    CHECK(trace.display_time_unit == "ns");
    REQUIRE_FALSE(trace.spans.empty());
    for (const auto* events : {&trace.spans, &trace.instants})
        for (const TraceEvent& e : *events) {
            INFO(e.name << " at " << e.start_ps << " ps on pid " << e.pid << " tid " << e.tid);
            CHECK(trace.process_names.count(e.pid) == 1);
            CHECK(trace.thread_names.count({e.pid, e.tid}) == 1);
        }
    CHECK(fastsim::test::nesting_violation(trace.spans) == "");
}

/// The node run's phases lie back to back from 0, and every span on the array, converter and
/// DMA tracks lies inside one of them. Returns the phases in time order.
std::vector<TraceEvent> check_units_inside_phases(const TraceFile& trace) {
    std::vector<TraceEvent> phases = trace.on("node", "phases");
    std::sort(phases.begin(), phases.end(), [](const auto& a, const auto& b) { return a.start_ps < b.start_ps; });
    REQUIRE_FALSE(phases.empty());
    CHECK(phases.front().start_ps == 0);
    for (std::size_t i = 1; i < phases.size(); ++i) CHECK(phases[i].start_ps == phases[i - 1].end_ps());
    for (const char* unit : {"array", "converter", "DMA"}) {
        const std::vector<TraceEvent> spans = trace.on("node", unit);
        CHECK_FALSE(spans.empty());
        for (const TraceEvent& s : spans) {
            const auto phase = std::find_if(phases.begin(), phases.end(), [&](const TraceEvent& p) {
                return p.start_ps <= s.start_ps && s.end_ps() <= p.end_ps();
            });
            INFO(unit << " span " << s.name << " [" << s.start_ps << ", " << s.end_ps() << ") ps");
            REQUIRE(phase != phases.end());
            if (s.category == "aggregate") CHECK(s.name == phase->name);  // one per layer and phase
        }
    }
    return phases;
}

std::uint64_t sum_arg(const std::vector<TraceEvent>& spans, const std::string& key) {
    std::uint64_t sum = 0;
    for (const TraceEvent& s : spans)
        if (const auto it = s.args.find(key); it != s.args.end()) sum += it->second;
    return sum;
}

}  // namespace

TEST_CASE("run --trace of a node step: tiles inside their phases, ending at the total cycles",
          "[cli][node][timeline]") {
    fastsim::test::TempDir dir;
    const TracedRun run = traced_run(dir, kTinyNode);
    CHECK(run.result.err.empty());
    CHECK_THAT(run.result.out, Contains("wrote " + dir.path("trace.json") + " ("));
    const TraceFile& trace = run.trace;
    check_names_and_nesting(trace);
    CHECK(trace.process_names.at(1) == "node");
    const std::vector<TraceEvent> phases = check_units_inside_phases(trace);

    // One phase span per report row, in run order, as long as its cycles, with its tiles.
    const YAML::Node rows = run.report["phases"];
    REQUIRE(phases.size() == rows.size());
    std::uint64_t start_cycle = 0, tiles = 0, dram_bits = 0;
    for (std::size_t i = 0; i < phases.size(); ++i) {
        const auto cycles = rows[i]["cycles"].as<std::uint64_t>();
        CHECK(phases[i].name == rows[i]["layer"].as<std::string>() + " " + rows[i]["phase"].as<std::string>());
        CHECK(phases[i].start_ps == fastsim::output::ticks_to_ps(start_cycle, kTinyNodeClockHz));
        CHECK(phases[i].end_ps() == fastsim::output::ticks_to_ps(start_cycle + cycles, kTinyNodeClockHz));
        CHECK(phases[i].args.at("tiles") == rows[i]["tiles"].as<std::uint64_t>());
        start_cycle += cycles;
        tiles += rows[i]["tiles"].as<std::uint64_t>();
        dram_bits += rows[i]["dram_read_bits"].as<std::uint64_t>() + rows[i]["dram_write_bits"].as<std::uint64_t>();
    }
    // One tile span per tile; the spans carry every MAC and every DRAM bit of the report.
    const std::vector<TraceEvent> array = trace.on("node", "array");
    CHECK(array.size() == tiles);
    CHECK(sum_arg(array, "macs") == run.report["total_macs"].as<std::uint64_t>());
    CHECK(sum_arg(trace.on("node", "DMA"), "dram_bits") == dram_bits);

    // The last span ends at the reported total cycles.
    const auto total_cycles = run.report["total_cycles"].as<std::uint64_t>();
    CHECK(trace.end_ps() == fastsim::output::ticks_to_ps(total_cycles, kTinyNodeClockHz));
    CHECK(trace.other_data["end_ticks"].as<std::uint64_t>() == total_cycles);
    CHECK(trace.other_data["ticks_per_second"].as<std::uint64_t>() == kTinyNodeClockHz);
    CHECK(trace.other_data["detail"].as<std::string>() == "full");
    CHECK(trace.other_data["detailed_spans"].as<std::uint64_t>() == trace.spans.size() - phases.size());
}

TEST_CASE("run --trace gives the same timeline at both fidelities", "[cli][node][timeline][fidelity]") {
    fastsim::test::TempDir dir;
    REQUIRE(run_fastsim("run " + kTinyNode + " --trace " + dir.path("memo.json")).exit_code == 0);
    REQUIRE(run_fastsim("run " + kTinyNode + " --fidelity stepped --trace " + dir.path("stepped.json")).exit_code == 0);
    const std::string memo = slurp(dir.path("memo.json"));
    CHECK(memo.size() > 10'000);
    CHECK(memo == slurp(dir.path("stepped.json")));
}

TEST_CASE("run --trace draws the GEMMs of a repeated matmul one after another inside its phase",
          "[cli][node][timeline]") {
    // scores: 2 heads x batch 3 = 6 independent GEMMs per phase.
    fastsim::test::TempDir dir;
    dir.write("net.yaml",
              "network: attention\nlayers:\n"
              "  - {name: proj, type: fc, in_features: 20, out_features: 16, tokens: 5}\n"
              "  - {name: scores, type: matmul, m: 5, k: 8, n: 5, repeat: 2, inputs: [proj]}\n");
    std::string config = slurp(kTinyNode);
    config.replace(config.find("../../traces/tiny_cnn.yaml"), 26, "net.yaml");
    config = config.substr(0, config.find("  layers:"));
    const TracedRun run = traced_run(dir, dir.write("run.yaml", config));
    check_names_and_nesting(run.trace);
    const std::vector<TraceEvent> phases = check_units_inside_phases(run.trace);
    const auto forward =
        std::find_if(phases.begin(), phases.end(), [](const auto& p) { return p.name == "scores forward"; });
    REQUIRE(forward != phases.end());
    CHECK(forward->args.at("gemms") == 6);
    std::set<std::uint64_t> gemms;
    for (const TraceEvent& tile : run.trace.on("node", "array"))
        if (forward->start_ps <= tile.start_ps && tile.end_ps() <= forward->end_ps())
            gemms.insert(tile.args.at("gemm"));
    CHECK(gemms == std::set<std::uint64_t>{0, 1, 2, 3, 4, 5});
    CHECK(run.trace.end_ps() ==
          fastsim::output::ticks_to_ps(run.report["total_cycles"].as<std::uint64_t>(), kTinyNodeClockHz));
}

TEST_CASE("run --trace of a cluster step: ops per node, transfers per channel, ending at the step time",
          "[cli][cluster][timeline]") {
    fastsim::test::TempDir dir;
    const TracedRun run = traced_run(dir, kTinyCluster);
    CHECK(run.result.err.empty());
    const TraceFile& trace = run.trace;
    check_names_and_nesting(trace);
    CHECK(trace.process_names.at(1) == "node 0 (small)");
    CHECK(trace.process_names.at(2) == "node 1 (big)");
    CHECK(trace.process_names.at(3) == "links");

    // Computes carry their schedule label; both nodes compute every layer forward and backward,
    // and update its weights.
    const std::set<std::string> labels = {"conv1 forward",       "conv2 forward",       "fc forward",
                                          "conv1 backward",      "conv2 backward",      "fc backward",
                                          "conv1 weight update", "conv2 weight update", "fc weight update"};
    for (const char* node : {"node 0 (small)", "node 1 (big)"}) {
        std::set<std::string> seen;
        for (const TraceEvent& c : trace.on(node, "compute")) seen.insert(c.name);
        CHECK(seen == labels);
    }
    // Each Send is an instant; its bytes cross every channel of its route.
    std::uint64_t sent = 0;
    for (const TraceEvent& s : trace.instants) {
        CHECK(s.category == "send");
        sent += s.args.at("bytes");
    }
    std::uint64_t carried = 0, report_bytes = 0;
    for (const auto& [key, name] : trace.thread_names)
        if (trace.process_names.at(key.first) == "links") carried += sum_arg(trace.on("links", name), "bytes");
    for (const auto& link : run.report["links"]) report_bytes += link["bytes"].as<std::uint64_t>();
    CHECK(sent > 0);
    CHECK(carried == sent);  // tiny_cluster: node 0 and node 1 share one link, one hop
    CHECK(carried == report_bytes);

    // The last span ends at the simulated step time.
    CHECK(trace.end_ps() == trace.other_data["end_ticks"].as<std::uint64_t>());
    CHECK(trace.other_data["tick_unit"].as<std::string>() == "ps");
    CHECK(static_cast<double>(trace.end_ps()) ==
          Approx(run.report["simulated_step_s"].as<double>() * 1e12).epsilon(1e-8));
}

TEST_CASE("above --trace-detail-limit the timeline aggregates per phase and label, and still nests and ends on time",
          "[cli][node][cluster][timeline]") {
    fastsim::test::TempDir full_dir, small_dir;
    const TracedRun full = traced_run(full_dir, kTinyNode);
    // 442 detailed spans against a limit of 100: 21 aggregates, one per phase and unit.
    const TracedRun aggregated = traced_run(small_dir, kTinyNode + " --trace-detail-limit 100");
    CHECK_THAT(aggregated.result.err, Contains("exceed --trace-detail-limit 100"));
    CHECK_THAT(aggregated.result.out, Contains("spans, aggregated)"));
    const TraceFile& trace = aggregated.trace;
    check_names_and_nesting(trace);
    const std::vector<TraceEvent> phases = check_units_inside_phases(trace);
    CHECK(trace.other_data["detail"].as<std::string>() == "aggregated");
    CHECK(trace.other_data["detail_limit"].as<int>() == 100);
    CHECK(trace.other_data["detailed_spans"].as<std::uint64_t>() ==
          full.trace.other_data["detailed_spans"].as<std::uint64_t>());
    CHECK_THAT(trace.other_data["aggregation"].as<std::string>(), Contains("one span per layer and phase"));
    // One array span and one DMA span per phase; together they count every tile and MAC.
    const std::vector<TraceEvent> array = trace.on("node", "array");
    CHECK(array.size() == phases.size());
    CHECK(trace.on("node", "DMA").size() == phases.size());
    CHECK(sum_arg(array, "spans") == full.trace.on("node", "array").size());
    CHECK(sum_arg(array, "macs") == sum_arg(full.trace.on("node", "array"), "macs"));
    CHECK(sum_arg(array, "busy_cycles") == aggregated.report["cycles"]["array"].as<std::uint64_t>() +
                                               aggregated.report["cycles"]["sram_stall"].as<std::uint64_t>());
    CHECK(trace.end_ps() == full.trace.end_ps());

    // A cluster with limit 0: every channel's bytes survive aggregation, the end does too.
    fastsim::test::TempDir cluster_full_dir, cluster_dir;
    const TracedRun cluster_full = traced_run(cluster_full_dir, kTinyCluster);
    const TracedRun cluster = traced_run(cluster_dir, kTinyCluster + " --trace-detail-limit 0");
    check_names_and_nesting(cluster.trace);
    CHECK(cluster.trace.instants.empty());
    CHECK(cluster.trace.spans.size() < cluster_full.trace.spans.size() + cluster_full.trace.instants.size());
    std::map<std::pair<std::uint64_t, std::uint64_t>, int> per_track;
    for (const TraceEvent& s : cluster.trace.spans) {
        CHECK(s.category == "aggregate");
        ++per_track[{s.pid, s.tid}];
    }
    for (const auto& [track, spans] : per_track) CHECK(spans == 1);  // limit 0: one per track used
    std::uint64_t full_bytes = 0, bytes = 0;
    for (const TraceEvent& s : cluster_full.trace.spans)
        if (s.category == "transfer") full_bytes += s.args.at("bytes");
    for (const TraceEvent& s : cluster.trace.spans)
        if (cluster.trace.process_names.at(s.pid) == "links") bytes += s.args.at("bytes");
    CHECK(bytes == full_bytes);
    CHECK(cluster.trace.end_ps() == cluster_full.trace.end_ps());
}

TEST_CASE("compare --trace still takes network traces, not a timeline file", "[cli][cluster][timeline]") {
    const auto r = run_fastsim("compare " + kTinyCluster + " --trace " + std::string(FASTSIM_SOURCE_DIR) +
                               "/traces/tiny_cnn.yaml");
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Contains("tiny_cnn") && Contains("geomean"));
    CHECK(run_fastsim("compare " + kTinyCluster + " --trace-detail-limit 5").exit_code ==
          2);  // not an option of compare
}

TEST_CASE("run --trace errors: bfp_report configs, bad limits and a limit without a file exit 2", "[cli][timeline]") {
    fastsim::test::TempDir dir;
    const std::string bfp_report = std::string(FASTSIM_SOURCE_DIR) + "/configs/bfp_error_report.yaml";
    auto r = run_fastsim("run " + bfp_report + " --trace " + dir.path("t.json"));
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("fastsim: error: --trace applies to run.mode training_step or cluster") &&
                          Contains("bfp_report"));
    CHECK(r.out.empty());
    r = run_fastsim("run " + kTinyNode + " --trace " + dir.path("t.json") + " --trace-detail-limit -1");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("--trace-detail-limit: expected an integer from 0 to 2^64-1, got '-1'"));
    r = run_fastsim("run " + kTinyNode + " --trace-detail-limit 5");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("--trace-detail-limit needs --trace FILE"));
    r = run_fastsim("run " + kTinyNode + " --trace /proc/no/such/dir/t.json");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("fastsim: error: cannot"));
}
