// SPDX-License-Identifier: MIT
// What keeps bad input from crashing, hanging or giving a silently wrong number
// (docs/robustness.md): strict readers, the range table, checked sizes and work limits. The
// end-to-end classes are in tests/bad_inputs (CTest bad_inputs.*).
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

#include "common/checked.h"
#include "common/errors.h"
#include "common/input_file.h"
#include "config/load.h"
#include "config/ranges.h"
#include "config/train_config.h"
#include "config/yaml_reader.h"
#include "fmac/timing.h"
#include "node/node_model.h"
#include "node/training_step.h"
#include "node/vector_phase.h"
#include "common/csv_reader.h"
#include "common/json_reader.h"
#include "report/result_columns.h"
#include "run/work.h"
#include "support/temp_dir.h"

using namespace fastsim;
using Catch::Matchers::Contains;

namespace {

std::string yaml_error(const std::string& text) {
    try {
        (void)config::parse_strict_yaml(text, "f.yaml");
    } catch (const ConfigError& e) {
        return e.what();
    }
    return "";
}

std::string load_error(const std::string& text,
                       const std::string& path = std::string(FASTSIM_SOURCE_DIR) + "/configs/t.yaml") {
    try {
        (void)config::load_text(text, path);
    } catch (const UserError& e) {
        return e.what();
    }
    return "";
}

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

/// The array formula summed fold by fold, as docs/array.md states it for each dataflow.
fmac::GemmTiming folds_one_by_one(const fmac::GemmShape& s, const fmac::ArrayGeometry& a, int mx, int my,
                                  fmac::Dataflow dataflow) {
    fmac::GemmTiming t;
    const auto g = static_cast<std::uint64_t>(a.group_size), rows = static_cast<std::uint64_t>(a.rows),
               cols = static_cast<std::uint64_t>(a.cols);
    const std::uint64_t groups = (s.k + g - 1) / g;
    const auto p = static_cast<std::uint64_t>(fmac::passes_per_group(mx, my));
    // ws: k-groups down the rows, output columns across, X rows stream; is: k-groups down,
    // X rows across, Y columns stream; os: X rows down, output columns across, k-groups stream.
    std::uint64_t down = groups, across = s.n, stream = s.m;
    if (dataflow == fmac::Dataflow::input_stationary) across = s.m, stream = s.n;
    if (dataflow == fmac::Dataflow::output_stationary) down = s.m, stream = groups;
    for (std::uint64_t rf = 0; rf * rows < down; ++rf)
        for (std::uint64_t cf = 0; cf * cols < across; ++cf) {
            const std::uint64_t r = std::min(rows, down - rf * rows), c = std::min(cols, across - cf * cols);
            t.counts.stationary_cycles += r;
            t.stream_cycles += p * (stream + r + c - 2);
            ++t.counts.folds;
        }
    t.cycles = t.counts.stationary_cycles + t.stream_cycles;
    return t;
}

}  // namespace

TEST_CASE("docs/config.md's range table is the code's", "[config][docs]") {
    const std::string path = std::string(FASTSIM_SOURCE_DIR) + "/docs/config.md";
    const std::string doc = slurp(path);
    const std::string begin = "<!-- ranges:begin -->\n", end = "<!-- ranges:end -->";
    const auto from = doc.find(begin), to = doc.find(end);
    REQUIRE(from != std::string::npos);
    REQUIRE(to != std::string::npos);
    const std::string table = config::key_range_table_markdown();
    if (std::getenv("FASTSIM_UPDATE_DOCS")) {
        std::ofstream(path) << doc.substr(0, from + begin.size()) + table + doc.substr(to);
        SUCCEED("docs/config.md rewritten");
        return;
    }
    CHECK(doc.substr(from + begin.size(), to - from - begin.size()) == table);
}

namespace {

/// Each (name, table) is the text between `<!-- keys:NAME:begin -->` and its end marker in the
/// doc at `relative_path`; FASTSIM_UPDATE_DOCS=1 rewrites them instead.
void check_key_tables(const std::string& relative_path,
                      const std::vector<std::pair<std::string, std::string>>& tables) {
    const std::string path = std::string(FASTSIM_SOURCE_DIR) + "/" + relative_path;
    std::string doc = slurp(path);
    const bool update = std::getenv("FASTSIM_UPDATE_DOCS") != nullptr;
    for (const auto& [name, table] : tables) {
        INFO("<!-- keys:" + name + " --> in " + relative_path);
        const std::string begin = "<!-- keys:" + name + ":begin -->\n", end = "<!-- keys:" + name + ":end -->";
        const auto from = doc.find(begin), to = doc.find(end);
        REQUIRE(from != std::string::npos);
        REQUIRE(to != std::string::npos);
        if (update)
            doc = doc.substr(0, from + begin.size()) + table + doc.substr(to);
        else
            CHECK(doc.substr(from + begin.size(), to - from - begin.size()) == table);
    }
    if (update) std::ofstream(path) << doc;
}

}  // namespace

TEST_CASE("docs/config.md's key tables are the sections' key lists", "[config][docs]") {
    check_key_tables("docs/config.md", config::key_tables());
}

TEST_CASE("docs/fast-training.md's key tables are the train config's key lists", "[config][docs]") {
    check_key_tables("docs/fast-training.md", config::train_key_tables());
}

TEST_CASE("every range admits its documented bounds and nothing beyond", "[config]") {
    for (const config::KeyRange* r : config::all_key_ranges()) {
        INFO(r->keys);
        CHECK(r->min <= r->max);
        CHECK(r->admits(r->min));
        CHECK(r->admits(r->max));
        CHECK_FALSE(r->admits(std::nextafter(r->max, 1e300)));
        CHECK(r->admits(0) == (r->zero_allowed || r->min <= 0));
    }
    // The bounds the issue fixes: 10,000 GB/s, 1 ns and 1,000 ms are valid.
    CHECK(config::kBandwidthGbPerS.admits(10000));
    CHECK(config::kLatencyNs.admits(1));
    CHECK(config::kLatencyNs.admits(1e9));
    CHECK_FALSE(config::kLatencyNs.admits(1e-4));
    CHECK(config::kClockMhz.admits(1));
    CHECK_FALSE(config::kClockMhz.admits(0.999));
}

TEST_CASE("an error message is one printable line, whatever bytes it quotes", "[errors]") {
    // Control bytes and malformed UTF-8 as \xNN, a newline as \n; tab and well-formed UTF-8 kept.
    CHECK(fastsim::printable(std::string("a\0b", 3)) == "a\\x00b");
    CHECK(fastsim::printable("x\ny\tz\x1b[2J\x7f") == "x\\ny\tz\\x1b[2J\\x7f");
    CHECK(fastsim::printable("\xff\xfe ok") == "\\xff\\xfe ok");
    CHECK(fastsim::printable("µm² → café") == "µm² → café");
    CHECK(fastsim::printable("\xc3(") == "\\xc3(");                  // a lead byte without its continuation
    CHECK(fastsim::printable("\xed\xa0\x80") == "\\xed\\xa0\\x80");  // a UTF-16 surrogate
    CHECK(fastsim::printable("\xc2\x9b"
                             "2J\xc2\xa0") == "\\xc2\\x9b2J\xc2\xa0");  // C1's CSI escaped, NBSP kept
    CHECK(std::string(fastsim::UserError(std::string("v\0w", 3)).what()) == "v\\x00w");
}

TEST_CASE("YAML that yaml-cpp would read silently is refused at its line", "[config]") {
    CHECK(yaml_error("a: 1\nb:\n  c: 2\n  c: 3\n") ==
          "f.yaml:4:3: b.c: the key 'c' is given twice in one map (first at line 3); yaml-cpp would silently keep the "
          "first");
    CHECK_THAT(yaml_error("l:\n  - {x: 1}\n  - {x: 1, x: 2}\n"),
               Contains("f.yaml:3:12: l[1].x: the key 'x' is given twice"));
    CHECK_THAT(yaml_error("a: 1\n---\na: 2\n"), Contains("f.yaml:2:1: a second YAML document starts here"));
    CHECK_THAT(yaml_error("---\n---\na: 2\n"), Contains("f.yaml:2:1: a second YAML document"));  // an empty first one
    CHECK_THAT(yaml_error("a: 1\n...\nb: 2\n"), Contains("f.yaml:3:1: a second YAML document"));
    CHECK(yaml_error("%YAML 1.2\n---\na: 1\n...\n").empty());
    CHECK(yaml_error("a: |\n  --- not a marker\n").empty());
    CHECK(yaml_error(", ").empty());  // yaml-cpp's LoadAll looped forever on it (a fuzzing find)
    // A small alias is harmless; aliases of aliases that expand past the text are refused.
    CHECK(yaml_error("a: &x 1\nb: *x\n").empty());
    const std::string bomb =
        "a: &a [x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, "
        "*b]\n"
        "d: [*c, *c, *c, *c, *c, *c, *c, *c]\n";
    CHECK_THAT(yaml_error(bomb), Contains("the document expands to more nodes than it has characters"));
    CHECK_THAT(yaml_error("? [1, 2]\n: 3\n"), Contains("expected a plain key"));
    CHECK(yaml_error("---\na: 1\n...\n").empty());
    CHECK(yaml_error("a: [1, 1]\nb: {c: 1, d: 1}\n").empty());  // repeated values are fine
}

TEST_CASE("numbers are plain decimals: no octal, hex, infinities or YAML 1.1 booleans", "[config]") {
    const std::string q = std::string(FASTSIM_SOURCE_DIR) + "/configs/quickstart.yaml";
    const std::string base = slurp(q);
    const auto error_with = [&](const std::string& key, const std::string& value) {
        try {
            (void)config::load(q, {key + "=" + value});
        } catch (const UserError& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    CHECK_THAT(error_with("workload.batch", "010"), Contains("got '010' (a leading zero"));
    CHECK_THAT(error_with("workload.batch", "0x10"), Contains("expected a non-negative integer, got '0x10'"));
    CHECK_THAT(error_with("workload.batch", "+8"), Contains("got '+8'"));
    CHECK_THAT(error_with("node.clock_mhz", ".inf"), Contains("expected a number, got '.inf'"));
    CHECK_THAT(error_with("node.clock_mhz", "007.5"), Contains("a leading zero"));
    CHECK_THAT(error_with("node.clock_mhz", "1e400"), Contains("expected a finite number, got '1e400'"));
    CHECK(error_with("node.clock_mhz", "0.5e3").empty());
    CHECK(error_with("node.clock_mhz", "1500").empty());
    const std::string cluster = std::string(FASTSIM_SOURCE_DIR) + "/configs/cluster/fast_4node.yaml";
    try {
        (void)config::load(cluster, {"planner.comm_only=yes"});
        FAIL("yes was taken for a boolean");
    } catch (const ConfigError& e) {
        CHECK_THAT(e.what(), Contains("planner.comm_only: expected true or false, got 'yes'"));
    }
    CHECK_NOTHROW(config::load(cluster, {"planner.comm_only=True"}));
}

TEST_CASE("values at the edge of a range: in is accepted, out names the key and the range", "[config]") {
    const std::string q = std::string(FASTSIM_SOURCE_DIR) + "/configs/quickstart.yaml";
    CHECK_NOTHROW(
        config::load(q, {"node.dram.bandwidth_gb_per_s=10000", "node.dram.latency_ns=1", "node.clock_mhz=100000"}));
    CHECK_NOTHROW(config::load(q, {"node.dram.latency_ns=0"}));
    CHECK_THROWS_WITH(
        config::load(q, {"node.dram.bandwidth_gb_per_s=1.0e-12"}),
        Contains("node.dram.bandwidth_gb_per_s: expected a value from 0.000125 to 12500 GB/s, got 1e-12"));
    CHECK_THROWS_WITH(config::load(q, {"node.dram.latency_ns=1e300"}),
                      Contains("node.dram.latency_ns: expected 0, or a value from 0.001 to 1000000000 ns, got 1e+300"));
    CHECK_THROWS_WITH(config::load(q, {"node.clock_mhz=1e-9"}),
                      Contains("node.clock_mhz: expected a value from 1 to 100000 MHz"));
    const std::string cluster = std::string(FASTSIM_SOURCE_DIR) + "/configs/cluster/fast_4node.yaml";
    CHECK_THROWS_WITH(config::load(cluster, {"node_types.0.clock_mhz=1e-9"}),
                      Contains("node_types[0].clock_mhz: expected"));
    CHECK_THROWS_WITH(config::load(cluster, {"cluster.groups.0.link.latency_ns=2e9"}),
                      Contains("cluster.groups[0].link.latency_ns: expected 0, or"));
    CHECK_THROWS_WITH(config::load(cluster, {"cluster.groups.0.count=16385"}), Contains("cluster.groups[0].count"));
}

TEST_CASE("a layer whose GEMM overflows 64 bits is an error at the layer naming workload.batch", "[config][workload]") {
    test::TempDir dir;
    const std::string trace =
        dir.write("big.yaml",
                  "layers:\n  - {name: ok, type: fc, in_features: 4, out_features: 4}\n"
                  "  - {name: huge, type: conv, input: [16777216, 16777216, 3], kernel: [1, 1], filters: 8, "
                  "inputs: [input]}\n");
    const std::string config = "run: {mode: training_step}\nworkload: {trace: " + trace + ", batch: 1048576}\n";
    const std::string error = load_error(config, dir.path("c.yaml"));
    CHECK_THAT(error, Contains(trace +
                               ":3:5: layers[1]: layer 'huge': its GEMM rows (batch x output positions) "
                               "overflow 64 bits at workload.batch 1048576 (" +
                               dir.path("c.yaml") + ":2:"));
    CHECK_THAT(error, Contains("workload.batch); lower the batch or the layer's sizes"));
    // Each product fits, the step's MACs do not: named at workload.batch.
    const std::string steps =
        dir.write("steps.yaml", "layers:\n  - {name: wide, type: matmul, m: 16777216, k: 16777216, n: 2048}\n");
    CHECK_THAT(
        load_error("run: {mode: training_step}\nworkload: {trace: " + steps + ", batch: 16}\n", dir.path("c.yaml")),
        Contains("workload.batch: the training step's MACs overflow 64 bits at batch 16 (at layer 'wide'"));
}

TEST_CASE("checked arithmetic throws SizeOverflow naming the quantity, saturating arithmetic caps", "[common]") {
    constexpr std::uint64_t kMax = ~std::uint64_t{0};
    CHECK(checked_mul(1ull << 32, (1ull << 32) - 1, "x") == (1ull << 32) * ((1ull << 32) - 1));
    CHECK_THROWS_WITH(checked_mul(1ull << 32, 1ull << 32, "tiles of a phase"), "tiles of a phase overflows 64 bits");
    CHECK_THROWS_AS(checked_add(kMax, 1, "x"), SizeOverflow);
    CHECK(checked_add(kMax - 1, 1, "x") == kMax);
    CHECK(saturating_mul(1ull << 40, 1ull << 40) == kMax);
    CHECK(saturating_add(kMax, 5) == kMax);
    CHECK(checked_round(1e19, "x") == 10'000'000'000'000'000'000ull);
    CHECK_THROWS_AS(checked_round(2e19, "x"), SizeOverflow);
    CHECK_THROWS_AS(checked_ceil(1e300, "x"), SizeOverflow);
    CHECK(checked_ceil(2.0000001, "x") == 3);
}

TEST_CASE("the closed-form array formula equals the fold-by-fold sum", "[fmac]") {
    std::mt19937_64 rng(7);
    for (int trial = 0; trial < 2000; ++trial) {
        std::uniform_int_distribution<std::uint64_t> dim(1, 300);
        const fmac::GemmShape s{dim(rng), dim(rng) * (trial % 4 + 1), dim(rng)};
        const fmac::ArrayGeometry a{static_cast<int>(dim(rng) % 17 + 1), static_cast<int>(dim(rng) % 13 + 1),
                                    static_cast<int>(dim(rng) % 20 + 1)};
        const int mx = static_cast<int>(dim(rng) % 8 + 1), my = static_cast<int>(dim(rng) % 8 + 1);
        const auto dataflow = static_cast<fmac::Dataflow>(trial % 3);
        const fmac::GemmTiming closed = fmac::analytic_gemm_timing(s, a, mx, my, dataflow);
        const fmac::GemmTiming loop = folds_one_by_one(s, a, mx, my, dataflow);
        INFO(s.m << " x " << s.k << " x " << s.n << " on " << a.rows << " x " << a.cols << ", g " << a.group_size
                 << ", " << name_of(dataflow));
        CHECK(closed.cycles == loop.cycles);
        CHECK(closed.counts.stationary_cycles == loop.counts.stationary_cycles);
        CHECK(closed.counts.folds == loop.counts.folds);
    }
    // A tile of 2^40 k-groups is counted at once, not fold by fold.
    const fmac::GemmTiming huge = fmac::analytic_gemm_timing({1, 1ull << 44, 1}, {32, 32, 16}, 8, 8);
    CHECK(huge.counts.folds == (1ull << 40) / 32);
}

TEST_CASE("work is estimated before a run, and runs over the limit are refused with the way out", "[run]") {
    const config::Params quickstart = config::load(std::string(FASTSIM_SOURCE_DIR) + "/configs/quickstart.yaml");
    const run::WorkEstimate e = run::estimate_training_step(quickstart, false);
    double tiles = 0, chunks = 0;
    for (const auto& s : node::training_step_phases(quickstart.workload.network, quickstart.workload.batch,
                                                    quickstart.precision.per_layer, quickstart.precision.rounding,
                                                    quickstart.node.resolved, quickstart.run.phase_selection(),
                                                    quickstart.run.optimizer)) {
        for (const node::PhaseGemm& g : s.gemms)
            tiles += static_cast<double>(node::plan_tiles(g.job, quickstart.node.resolved).count());
        if (s.on_vector_unit)
            chunks += static_cast<double>(node::plan_vector_chunks(s.vector, quickstart.node.resolved).chunks);
    }
    REQUIRE(e.parts.size() == 2);
    CHECK(e.parts[0].what == "memo tiles");
    CHECK(e.parts[0].count == tiles);
    CHECK(e.parts[1].what == "vector-unit chunks");  // the optimiser's updates, at least
    CHECK(e.parts[1].count == chunks);
    CHECK(chunks > 0);
    CHECK(e.seconds() < 1);
    CHECK_NOTHROW(run::check_work(e, run::kDefaultMaxWorkSeconds, "q.yaml"));

    test::TempDir dir;
    const std::string trace = dir.write("pad.yaml",
                                        "layers:\n  - {name: c, type: conv, input: [6, 6, 3], kernel: [3, 3], "
                                        "filters: 8, padding: 65535}\n");
    const config::Params padded = config::load(std::string(FASTSIM_SOURCE_DIR) + "/configs/quickstart.yaml",
                                               {"workload.trace=" + trace, "precision.layers=[]"});
    const run::WorkEstimate big = run::estimate_training_step(padded, false);
    CHECK(big.seconds() > run::kDefaultMaxWorkSeconds);
    CHECK_THAT(big.describe(), Contains("most of it memo tiles in layer 'c' (") && Contains(trace + ":2:5"));
    CHECK_THROWS_WITH(run::check_work(big, run::kDefaultMaxWorkSeconds, "q.yaml"),
                      Contains("q.yaml: the run's work is estimated at ") && Contains("above the work limit of 20 s") &&
                          Contains("pass --max-work "));
    CHECK_NOTHROW(run::check_work(big, big.seconds() * 2, "q.yaml"));
    // Vector-unit work alone: a ReLU over 4096 x 4096 x 1024 values a sample, 16,384 samples
    // (1.1e9 chunks of 64 KiB banks; run alone, 56 s).
    const std::string relu = dir.write("relu.yaml", "layers:\n  - {name: r, type: relu, input: [4096, 4096, 1024]}\n");
    const config::Params huge_relu =
        config::load(std::string(FASTSIM_SOURCE_DIR) + "/configs/tests/tiny_node.yaml",
                     {"workload.trace=" + relu, "precision.layers=[]", "workload.batch=16384"});
    const run::WorkEstimate vector_only = run::estimate_training_step(huge_relu, false);
    CHECK(vector_only.seconds() > run::kDefaultMaxWorkSeconds);
    CHECK_THAT(vector_only.describe(), Contains("vector-unit chunks") && Contains("layer 'r' ("));
    CHECK(run::parse_max_work("600") == 600);
    CHECK_THROWS_AS(run::parse_max_work("0"), UserError);
    CHECK_THROWS_AS(run::parse_max_work("inf"), UserError);
    CHECK_THROWS_AS(run::parse_max_work("1e400"), UserError);
}

TEST_CASE("input files must be regular files of bounded size", "[common]") {
    test::TempDir dir;
    CHECK_THROWS_WITH(read_input_file(dir.path(""), "config file"),
                      Contains("expected a config file (a regular file), got a directory"));
    CHECK_THROWS_WITH(read_input_file("/dev/zero", "trace"),
                      Contains("/dev/zero: expected a trace (a regular file), got a character device"));
    CHECK_THROWS_WITH(read_input_file(dir.path("missing.yaml"), "config file"), Contains("cannot open config file"));
    const std::string file = dir.write("f.txt", std::string(100, 'x'));
    CHECK(read_input_file(file, "x", 100).size() == 100);
    CHECK_THROWS_WITH(read_input_file(file, "energy table", 99), Contains("the energy table is larger than 99 bytes"));
}

TEST_CASE("read-back JSON refuses a member given twice, and CSV numbers are plain decimals", "[report]") {
    CHECK_THROWS_WITH(fastsim::parse_json("{\"points\": 2,\n \"points\": 3}", "s.json"),
                      "s.json:2:2: member 'points' is given twice in one object");
    CHECK(fastsim::parse_number(" 12.5e3 ") == 12500.0);
    CHECK(fastsim::parse_number("-0.25") == -0.25);
    for (const char* bad : {"0x10", "nan", "inf", "-inf", "1e999", "+5", "1.2.3", "", "e5"}) {
        INFO(bad);
        CHECK_FALSE(fastsim::parse_number(bad));
    }
    CHECK(fastsim::is_malformed_number("nan"));
    CHECK(fastsim::is_malformed_number("0x1A"));
    CHECK_FALSE(fastsim::is_malformed_number("data_parallel"));
    const fastsim::CsvTable csv = fastsim::parse_csv("point,cycles,prediction_error\np0,-5,-0.5\n", "r.csv");
    CHECK_THROWS_WITH(report::result_cell(csv, 0, 1),
                      "r.csv:2: column 'cycles': a result that cannot be negative is -5");
    CHECK(report::result_cell(csv, 0, 2) == -0.5);
}

TEST_CASE("a cluster plan's estimate counts the replayed message hops, which grow with the routes", "[run]") {
    // fast_4node.yaml is one ring: its routes average a quarter of the nodes, so from 256 to
    // 1,024 nodes the hops a walk and a replay book grow 4x with the nodes, 4x with the mean
    // route and log2 1024 / log2 256 with halving-doubling's steps; 4,096 nodes (planned in
    // over 15 min, docs/performance.md) is refused by default.
    const auto estimate = [](std::size_t nodes) {
        const std::string n = std::to_string(nodes);
        const config::Params p = config::load(std::string(FASTSIM_SOURCE_DIR) + "/configs/cluster/fast_4node.yaml",
                                              {"cluster.groups.0.count=" + n, "workload.batch=" + n});
        return run::estimate_cluster(p, false, {planner::PlannerKind::accpar});
    };
    const auto hops = [](const run::WorkEstimate& e) {
        for (const auto& part : e.parts)
            if (part.what == "replayed message hops") return part.count;
        return 0.0;
    };
    const run::WorkEstimate small = estimate(256), large = estimate(1024), huge = estimate(4096);
    CHECK(hops(large) > 16 * hops(small));
    CHECK(hops(large) < 32 * hops(small));
    CHECK(small.seconds() < run::kDefaultMaxWorkSeconds);
    CHECK(huge.seconds() > 10 * 60);
    CHECK_THROWS_WITH(run::check_work(huge, run::kDefaultMaxWorkSeconds, "ring.yaml"),
                      Contains("above the work limit of 20 s"));
}

TEST_CASE("a cluster run's estimate lowers all-reduces over more nodes than any grid as flat rings", "[run]") {
    // GPT-3 175B over 64 4x4 tori planned by AccPar: a set of all 1,024 nodes is no grid of the
    // topology, so its ring is one flat ring of merged rounds (90 ops a rank), not rings per
    // dimension (2p, 2,046 a rank). The simulation's ops, per node and each of the 769 GEMM
    // layers: three computes and the exchanges at each of 10 depths (24), and the all-reduce's 90.
    const config::Params p = config::load(std::string(FASTSIM_SOURCE_DIR) + "/configs/pipeline/gpt3_175b_1024node.yaml",
                                          {"planner.name=accpar"});
    const auto ops = [&](planner::PlannerKind kind) {
        for (const auto& part : run::estimate_cluster(p, true, {kind}).parts)
            if (part.what == "cluster ops") return part.count;
        return 0.0;
    };
    CHECK(ops(planner::PlannerKind::accpar) == Approx(1024.0 * 769 * (24 + 90)));
    // alpa, which cannot fit the model on one stage, plans pipelines only: taken to be of a
    // stage per torus, each node with 769 / 64 layers, its all-reduces over a torus's 16 nodes
    // (direct: 30 sends and 30 receives a rank) and 1.5 micro-batches of its layers (the stage
    // level).
    CHECK(ops(planner::PlannerKind::alpa) == Approx(1024.0 * 769 / 64 * (60 + 1.5 * 24)));
}

TEST_CASE("a pipeline's estimate counts the micro-batches the stage level runs, or all with a delayed update",
          "[run]") {
    // GPT-3 6.7B's four tori at 8x8, the pipeline planner with 8 stages of 32 micro-batches:
    // the step has more than 2,000,000 ops, so its replays and simulation run about one and a
    // half micro-batches' ops; a delayed update (staleness 1) runs every micro-batch's.
    std::vector<std::string> overrides{"workload.batch=256", "planner.name=pipeline", "planner.pipeline.stages=8",
                                       "planner.pipeline.microbatches=32"};
    for (int g = 0; g < 4; ++g)
        for (const char* key : {"count=64", "torus.rows=8", "torus.cols=8"})
            overrides.push_back("cluster.groups." + std::to_string(g) + "." + std::string(key));
    const auto ops = [&](const std::vector<std::string>& more) {
        std::vector<std::string> all = overrides;
        all.insert(all.end(), more.begin(), more.end());
        const config::Params p =
            config::load(std::string(FASTSIM_SOURCE_DIR) + "/configs/pipeline/gpt3_6.7b_64node.yaml", all);
        for (const auto& part : run::estimate_cluster(p, true, {planner::PlannerKind::pipeline}).parts)
            if (part.what == "cluster ops") return part.count;
        return 0.0;
    };
    const double stage_level = ops({}), message_level = ops({"cluster.pipeline_simulation=message_level"});
    const double delayed = ops({"cluster.gradient_sync.staleness=1"});
    CHECK(ops({"cluster.pipeline_simulation=stage_level"}) == stage_level);
    CHECK(message_level > 4 * stage_level);
    CHECK(delayed == message_level);
}
