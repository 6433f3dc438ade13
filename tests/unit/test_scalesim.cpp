// SPDX-License-Identifier: MIT
// `fastsim scalesim` (docs/scalesim.md): SCALE-Sim v2's reports reproduced byte for byte on
// the runs of SCALE-Sim itself kept in tests/data/scalesim/<case>/ (scripts/scalesim_reference.sh),
// and one weight-stationary GEMM worked by hand.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>

#include "common/errors.h"
#include "common/input_file.h"
#include "config/scalesim_config.h"
#include "config/scalesim_topology.h"
#include "report/scalesim_reports.h"
#include "scalesim/scalesim_buffers.h"
#include "support/fastsim_process.h"

using namespace fastsim;

namespace {

const std::string kCfg = R"([general]
run_name = hand

[architecture_presets]
ArrayHeight:    4
ArrayWidth:     4
IfmapSramSzkB:   1
FilterSramSzkB:  1
OfmapSramSzkB:   1
IfmapOffset:    0
FilterOffset:   10000000
OfmapOffset:    20000000
Bandwidth : 10
Dataflow : ws

[run_presets]
InterfaceBandwidth: CALC
)";

void write_text(const std::filesystem::path& path, const std::string& text) { std::ofstream(path) << text; }

std::string dataset(const std::string& name) {
    return std::string(FASTSIM_SOURCE_DIR) + "/tests/data/scalesim/" + name;
}

}  // namespace

TEST_CASE("scalesim: a weight-stationary GEMM by hand, folds, partial folds and buffers", "[scalesim]") {
    // M = 10 rows (T), K = 6 (Sr, 2 row folds of a 4-row array), N = 5 (Sc, 2 column folds).
    const scalesim::Architecture arch = config::read_scalesim_cfg(kCfg, "hand.cfg");
    const auto layers = config::scalesim_layers(config::read_scalesim_csv("Layer, M, N, K,\ng, 10, 5, 6,\n", "g.csv"));
    REQUIRE(layers.size() == 1);
    const scalesim::LayerReport r = scalesim::simulate_layer(arch, layers[0]);
    // 4 folds of 2R + C + T - 2 = 20 demand lines each; the last timestamp is lines - 1.
    CHECK(r.total_cycles == 4 * 20 - 1);
    CHECK(r.stall_cycles == 0);
    CHECK(r.overall_util_percent == Approx(10.0 * 5 * 6 * 100 / (79 * 16)).epsilon(1e-15));
    CHECK(r.mapping_efficiency_percent == (16 + 8 + 4 + 2) / 16.0 / 4 * 100);  // folds of 4x4, 2x4, 4x1, 2x1 PEs
    // SRAM: ifmap T x rows per fold, filter once, ofmap T x columns per fold.
    CHECK(r.ifmap_sram.count == 2 * 10 * 6);
    CHECK(r.filter_sram.count == 6 * 5);
    CHECK(r.ofmap_sram.count == 2 * 10 * 5);
    // First and last requests: ifmap after R empty lines (served a cycle later), filter at
    // once, ofmap after 2R - 1; the last fold (2 rows, 1 column) starts at line 60.
    CHECK(r.ifmap_sram.start_cycle == 5);
    CHECK(r.ifmap_sram.stop_cycle == 60 + 14 + 1);
    CHECK(r.filter_sram.start_cycle == 1);
    CHECK(r.filter_sram.stop_cycle == 60 + 3 + 1);
    CHECK(r.ofmap_sram.start_cycle == 7);
    CHECK(r.ofmap_sram.stop_cycle == 60 + 16);
    // DRAM: 1 kB buffers hold every word, so each is read once, all before cycle 0, in sets
    // of 10 words at 10 words per cycle. The ofmap buffer takes every fold's partial sums
    // (2 row folds x 50 outputs) and drains them after the last cycle, 4 words a cycle.
    CHECK(r.ifmap_dram.count == 60);
    CHECK(r.ifmap_dram.start_cycle == -6);
    CHECK(r.ifmap_dram.stop_cycle == -1);
    CHECK(r.filter_dram.count == 30);
    CHECK(r.filter_dram.start_cycle == -3);
    CHECK(r.ofmap_dram.count == 100);
    CHECK(r.ofmap_dram.start_cycle == 79);
    CHECK(r.ofmap_dram.stop_cycle == 79 + 100 / 4 - 1);
    // Its work, counted for the limit: 4 folds x (T + 2 (R + C) = 26 lines, at least the 20
    // each has) x (R + 2C = 12 requests a line), and 10 pixels and 6 window elements.
    CHECK(scalesim::simulated_requests(arch, layers[0]) == 4 * 26 * 12 + 10 + 6);
}

TEST_CASE("scalesim: the USER-mode read buffer by hand, a window that wraps", "[scalesim]") {
    // 4 words: lines of ceil(4/100) = 1 address, an active half of 2 lines and a prefetch half of 2;
    // 5 addresses give 6 lines (the last empty). Bandwidth 1 word per cycle.
    scalesim::PrefetchReadBuffer buffer(4, 1, {0, 1, 2, 3, 4}, 5, 5);
    buffer.begin_line(10);  // the first line finds lines 0-1 there, 2 words in cycles 8 and 9
    buffer.read(0);
    buffer.read(1);
    CHECK(buffer.end_line() == 11);  // a hit: served after the 1-cycle latency
    buffer.begin_line(11);
    buffer.read(4);  // line 4: the window moves to lines 2-3 (cycle 12), then 4-5 (cycle 15)
    CHECK(buffer.end_line() == 15);
    CHECK(buffer.dram().count == 6);
    buffer.begin_line(20);
    buffer.read(4);  // still held
    buffer.read(0);  // lines 4-5 wrap to 0-1: fetched by cycle 18, before the line is issued
    CHECK(buffer.end_line() == 21);
    const scalesim::LayerReport::Access dram = buffer.dram();
    CHECK((dram.start_cycle == 8 && dram.stop_cycle == 18 && dram.count == 8));
}

TEST_CASE("scalesim: .cfg values interpolate, and [DEFAULT] fills keys, as configparser does", "[scalesim]") {
    // %% is a %, %(name)s a key of the same section or [DEFAULT] (names in any case), nested.
    std::string cfg = kCfg;
    cfg.replace(cfg.find("run_name = hand"), 15, "run_name = %(Base)s_%(arraywidth)s_100%%\nbase = r%(tag)s\n");
    cfg = "[DEFAULT]\ntag = 7\narraywidth = w\n" + cfg;
    const scalesim::Architecture arch = config::read_scalesim_cfg(cfg, "interp.cfg");
    CHECK(arch.run_name == "r7_w_100%");
    CHECK(arch.array_cols == 4);  // [architecture_presets]' own ArrayWidth, not [DEFAULT]'s
    // A key only [DEFAULT] gives is every section's.
    std::string defaults = cfg;
    defaults.replace(defaults.find("ArrayHeight:    4\n"), 18, "");
    defaults = "[DEFAULT]\narrayheight = 8\n" + defaults.substr(defaults.find('\n', defaults.find("[DEFAULT]")) + 1);
    CHECK(config::read_scalesim_cfg(defaults, "defaults.cfg").array_rows == 8);
    std::string missing = kCfg;
    missing.replace(missing.find("run_name = hand"), 15, "run_name = %(nowhere)s");
    CHECK_THROWS_WITH(config::read_scalesim_cfg(missing, "m.cfg"),
                      Catch::Matchers::Contains("m.cfg:2:1: general.run_name: %(nowhere)s names no key"));
}

TEST_CASE("scalesim: numbers print as Python prints floats", "[scalesim]") {
    CHECK(report::python_float(100.0) == "100.0");
    CHECK(report::python_float(0.1) == "0.1");
    CHECK(report::python_float(75.42250570324504) == "75.42250570324504");
    CHECK(report::python_float(1.0 / 3) == "0.3333333333333333");
    CHECK(report::python_float(0.0001) == "0.0001");
    CHECK(report::python_float(0.00001) == "1e-05");
    CHECK(report::python_float(1e16) == "1e+16");
    CHECK(report::python_float(123456789012345.0) == "123456789012345.0");
    CHECK(report::python_float(-983.0) == "-983.0");
    CHECK(report::python_float(2.5e-07) == "2.5e-07");
}

TEST_CASE("scalesim: every reference run of SCALE-Sim v2 is reproduced byte for byte", "[scalesim]") {
    int compared = 0, user_runs = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dataset(""))) {
        const std::filesystem::path dir = entry.path();
        if (!std::filesystem::exists(dir / "arch.cfg")) continue;
        const std::string name = dir.filename().string();
        INFO(name);
        const std::string cfg = read_input_file((dir / "arch.cfg").string(), "cfg");
        user_runs += cfg.find("InterfaceBandwidth: USER") != std::string::npos;
        const scalesim::Architecture arch = config::read_scalesim_cfg(cfg, name);
        const std::string topology = (dir / "topology.csv").string();
        const auto layers =
            config::scalesim_layers(config::read_scalesim_csv(read_input_file(topology, "topology"), topology));
        std::vector<scalesim::LayerReport> reports;
        for (const auto& l : layers) reports.push_back(scalesim::simulate_layer(arch, l));
        const report::ScalesimReports csv = report::scalesim_reports(reports);
        CHECK(csv.compute == read_input_file((dir / "COMPUTE_REPORT.csv").string(), "report"));
        CHECK(csv.bandwidth == read_input_file((dir / "BANDWIDTH_REPORT.csv").string(), "report"));
        CHECK(csv.detailed_access == read_input_file((dir / "DETAILED_ACCESS_REPORT.csv").string(), "report"));
        ++compared;
    }
    CHECK(compared >= 9);   // ws, os and is on each of three array shapes at least
    CHECK(user_runs >= 7);  // USER mode: conv ws at two bandwidths, os, is; GEMM ws, os, is
}

TEST_CASE("scalesim: layers SCALE-Sim cannot run, or too large to hold, are user errors", "[scalesim]") {
    scalesim::Architecture arch = config::read_scalesim_cfg(kCfg, "hand.cfg");
    arch.array_rows = arch.array_cols = 1;
    arch.dataflow = scalesim::Dataflow::os;
    scalesim::Layer one;  // 1 x 1 GEMM on a 1 x 1 os array: one demand line, 0 cycles, SCALE-Sim divides by it
    CHECK_THROWS_WITH(scalesim::simulate_layer(arch, one), Catch::Contains("division by zero"));
    scalesim::Layer huge;
    huge.ifmap_height = huge.filter_width = huge.ifmap_width = 1 << 20;
    huge.filters = 1 << 20;
    CHECK_THROWS_WITH(scalesim::simulate_layer(arch, huge), Catch::Contains("too large for fastsim scalesim"));
    arch.dataflow = scalesim::Dataflow::ws;
    one.filters = 2;  // ws: 2 column folds of 2R + C + T - 2 = 2 lines, the last timestamp 3
    CHECK(scalesim::simulate_layer(arch, one).total_cycles == 2 * 2 - 1);
}

TEST_CASE("scalesim: the command writes OUT/run_name/ and refuses what SCALE-Sim cannot run", "[scalesim]") {
    const std::filesystem::path dir = std::filesystem::temp_directory_path() / "fastsim_scalesim_cli";
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    write_text(dir / "a.cfg", kCfg);
    write_text(dir / "t.csv", "Layer, M, N, K,\ng, 10, 5, 6,\n");
    const std::string inputs = "scalesim -c " + (dir / "a.cfg").string() + " -t " + (dir / "t.csv").string();
    const auto ok = test::run_fastsim(inputs + " -i gemm -p " + (dir / "out").string());
    CHECK(ok.exit_code == 0);
    CHECK(read_input_file((dir / "out/hand/COMPUTE_REPORT.csv").string(), "report") ==
          "LayerID, Total Cycles, Stall Cycles, Overall Util %, Mapping Efficiency %, Compute Util %,\n"
          "0, 79, 0, " +
              report::python_float(30000.0 / 1264) + ", 46.875, " +
              // per fold: used PEs x T / (16 PEs x (2R + 2C + T - 3) cycles), summed in fold order
              report::python_float(((((0.0 + 160.0 / 368) + 80.0 / 368) + 40.0 / 368) + 20.0 / 368) / 4 * 100) + ",\n");
    // OUT/run_name/ is a run folder: replaced whole by a rerun, kept whole when a rerun fails.
    CHECK(std::filesystem::exists(dir / "out/hand/manifest.json"));
    const std::string first = read_input_file((dir / "out/hand/COMPUTE_REPORT.csv").string(), "report");
    std::string one_by_one = kCfg;
    for (const auto& [from, to] : {std::pair<std::string, std::string>{"ArrayHeight:    4", "ArrayHeight:    1"},
                                   {"ArrayWidth:     4", "ArrayWidth:     1"},
                                   {"Dataflow : ws", "Dataflow : os"}})
        one_by_one.replace(one_by_one.find(from), from.size(), to);
    write_text(dir / "b.cfg", one_by_one);  // layer g runs; layer one divides by zero in SCALE-Sim
    write_text(dir / "two.csv", "Layer, M, N, K,\ng, 10, 5, 6,\none, 1, 1, 1,\n");
    const auto failed = test::run_fastsim("scalesim -c " + (dir / "b.cfg").string() + " -t " +
                                          (dir / "two.csv").string() + " -i gemm -p " + (dir / "out").string());
    CHECK(failed.exit_code == 2);
    CHECK_THAT(failed.err, Catch::Contains("layer 1 'one'") && Catch::Contains("division by zero"));
    CHECK(read_input_file((dir / "out/hand/COMPUTE_REPORT.csv").string(), "report") == first);
    std::size_t entries = 0;
    for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir / "out/hand")) ++entries;
    CHECK(entries == 5);  // the three reports, manifest.json and the lock: no staging folder left
    write_text(dir / "t2.csv", "Layer, M, N, K,\ng, 20, 5, 6,\n");
    REQUIRE(test::run_fastsim("scalesim -c " + (dir / "a.cfg").string() + " -t " + (dir / "t2.csv").string() +
                              " -i gemm -p " + (dir / "out").string())
                .exit_code == 0);
    CHECK(read_input_file((dir / "out/hand/COMPUTE_REPORT.csv").string(), "report") != first);
    const auto wrong_form = test::run_fastsim(inputs + " -p " + (dir / "out").string());
    CHECK(wrong_form.exit_code == 2);
    CHECK_THAT(wrong_form.err, Catch::Contains("run with -i gemm"));
    // A layer whose folds would run for minutes is refused under the work limit, before any runs.
    write_text(dir / "big.csv", "Layer, M, N, K,\ng, 10, 5, 6,\nhuge, 65536, 4096, 4096,\n");
    const std::string big = "scalesim -c " + (dir / "a.cfg").string() + " -t " + (dir / "big.csv").string() +
                            " -i gemm -p " + (dir / "big").string();
    const auto refused = test::run_fastsim(big);
    CHECK(refused.exit_code == 2);
    CHECK_THAT(refused.err, Catch::Contains("SCALE-Sim demand requests") &&
                                Catch::Contains("most of it in layer 'huge' of " + (dir / "big.csv").string()) &&
                                Catch::Contains("above the work limit of 20 s"));
    CHECK_FALSE(std::filesystem::exists(dir / "big"));
    CHECK_THAT(test::run_fastsim(big + " --max-work 0.5").err, Catch::Contains("above the work limit of 0.5 s"));
    std::filesystem::remove_all(dir);
}
