// SPDX-License-Identifier: MIT
// training_step configs: units, per-layer/per-phase precision, the fit check, the energy
// table, and errors that name the file, line and key.
#include <catch2/catch.hpp>

#include <cmath>

#include "common/errors.h"
#include "config/load.h"
#include "run/training_step.h"
#include <fstream>
#include <iomanip>
#include <sstream>

#include "support/temp_dir.h"

using namespace fastsim;
using Catch::Matchers::Contains;

namespace {

const std::string kSource = FASTSIM_SOURCE_DIR;

/// A training_step config around `extra` (YAML appended), trace given by absolute path.
std::string config_text(const std::string& extra, const std::string& trace = kSource + "/traces/tiny_cnn.yaml") {
    return "run: {mode: training_step}\nworkload:\n  trace: " + trace + "\n  batch: 2\n" + extra;
}

std::string error_of(const std::string& yaml) {
    test::TempDir dir;
    const std::string file = dir.write("bad.yaml", yaml);
    try {
        config::load(file);
    } catch (const ConfigError& e) {
        const std::string what = e.what();
        return what.substr(what.find("bad.yaml"));
    }
    FAIL("no ConfigError for:\n" << yaml);
    return {};
}

std::size_t phase(fmac::TrainingPhase p) { return static_cast<std::size_t>(p); }

}  // namespace

TEST_CASE("the quickstart: ResNet-18 on a 32x32 node, units converted once", "[config][node]") {
    const config::Params p = config::load(kSource + "/configs/quickstart.yaml");
    CHECK(p.run.mode == config::RunMode::training_step);
    // Every layer: 21 GEMM layers, 20 batch norms, 17 ReLUs, 8 residual adds and 2 pools.
    CHECK(p.workload.network.layers.size() == 68);
    CHECK(p.run.optimizer == workload::Optimizer::sgd_momentum);
    CHECK(p.workload.batch == 32);
    const node::NodeParams& n = p.node.resolved;
    CHECK((n.array.rows == 32 && n.array.cols == 32 && n.array.group_size == 16));
    CHECK(n.clock_hz == 1'000'000'000);
    CHECK(n.dram.bandwidth_bits_per_s == 2'048'000'000'000ull);
    CHECK(n.dram.latency_cycles == 100);
    CHECK(n.sram.mantissa_bank.capacity_bits == 1024ull * 1024 * 8);
    CHECK(n.converter.pipeline_latency_cycles == 4 + 3);
    CHECK(n.converter.lanes == 64);  // 2 x 32 columns
    CHECK(n.lowering.backward_data == workload::BackwardDataLowering::transposed);
    CHECK(n.lowering.depthwise == workload::DepthwiseLowering::array_packed);
    CHECK(p.precision.per_layer[0][phase(fmac::TrainingPhase::forward)].weights == 8);  // conv1 override
    CHECK(p.precision.per_layer[1][phase(fmac::TrainingPhase::forward)].weights == 4);
    CHECK(p.precision.rounding.gradients == bfp::Rounding::stochastic);
    CHECK(p.energy.resolved.dram_pj_per_bit == 3.9);  // hbm2 from the built-in table
    CHECK(p.energy.resolved.chunk_multiply_pj == 0.0125);
}

TEST_CASE("per-phase overrides apply to one phase, later overrides win", "[config][node]") {
    const config::Params p = config::load(kSource + "/configs/tests/tiny_node.yaml");
    const auto& fc = p.precision.per_layer[2];
    CHECK(fc[phase(fmac::TrainingPhase::backward_data)].gradients == 2);
    CHECK(fc[phase(fmac::TrainingPhase::forward)].gradients == 6);
    CHECK(fc[phase(fmac::TrainingPhase::weight_gradient)].gradients == 6);
    CHECK(p.precision.per_layer[1][phase(fmac::TrainingPhase::weight_gradient)].weights == 8);
    // 50 ns at 700 MHz = 35 cycles; 12.8 GB/s = 102.4 Gbit/s.
    CHECK(p.node.resolved.dram.latency_cycles == 35);
    CHECK(p.node.resolved.dram.bandwidth_bits_per_s == 102'400'000'000ull);
    CHECK(p.energy.resolved.dram_pj_per_bit == 8);  // lpddr4
}

TEST_CASE("the training_step dump loads back to the same values", "[config][node]") {
    const config::Params p = config::load(kSource + "/configs/tests/tiny_node.yaml");
    test::TempDir dir;
    const config::Params q = config::load(dir.write("again.yaml", config::dump(p)));
    CHECK(config::dump(q) == config::dump(p));
    CHECK(q.precision.per_layer[2][phase(fmac::TrainingPhase::backward_data)].gradients == 2);
    CHECK(q.node.resolved.dram.latency_cycles == p.node.resolved.dram.latency_cycles);
}

TEST_CASE("training_step errors name the file, line and key", "[config][node]") {
    CHECK_THAT(
        error_of(config_text("node:\n  sram:\n    mantissa_bank: {capacity_kib: 0.01}\n")),
        Contains("bad.yaml:7:35: node.sram.mantissa_bank.capacity_kib: layer 'conv1' (forward) cannot be tiled"));
    CHECK_THAT(error_of(config_text("precision:\n  layers:\n    - {layer: conv9, weights: 8}\n")),
               Contains("precision.layers[0].layer: no layer named 'conv9'"));
    CHECK_THAT(error_of(config_text("precision:\n  weights: 3\n")),
               Contains("bad.yaml:6:12: precision.weights: expected 2, 4, 6 or 8 bits (the fMAC multiplies whole 2-bit "
                        "chunks), got 3"));
    CHECK_THAT(error_of(config_text("precision:\n  layers:\n    - {layer: fc, phase: sideways}\n")),
               Contains("expected one of forward, backward_data, weight_gradient, got 'sideways'"));
    CHECK_THAT(
        error_of(config_text("node:\n  dram: {type: ddr9}\n")),
        Contains("node.dram.type: the energy table configs/energy/fast_45nm.yaml (built in) has no DRAM type 'ddr9'"));
    CHECK_THAT(error_of(config_text("node:\n  clock_mhz: -5\n")),
               Contains("node.clock_mhz: expected a value from 1 to 100000 MHz, got -5"));
    CHECK_THAT(error_of(config_text("node:\n  arrray: {rows: 4}\n")), Contains("node.arrray: unknown key"));
    CHECK_THAT(error_of("run: {mode: training_step}\n"), Contains("needs workload.trace"));
    CHECK_THAT(error_of("node: {clock_mhz: 100}\n"), Contains("node: applies only to run.mode training_step"));
    CHECK_THAT(error_of(config_text("bfp_report: {mantissa_bits: [4]}\n")),
               Contains("bfp_report: applies only to run.mode bfp_report"));
    CHECK_THAT(error_of(config_text("", "/nonexistent/net.yaml")),
               Contains("bad.yaml:3:10: workload.trace: no trace file at /nonexistent/net.yaml"));
}

TEST_CASE("a precision schedule splits workload.steps into segments, layer overrides apply in each", "[config][node]") {
    test::TempDir dir;
    const std::string file = dir.write(
        "run.yaml",
        "run: {mode: training_step}\nworkload:\n  trace: " + kSource +
            "/traces/tiny_cnn.yaml\n  batch: 2\n  steps: 100\nprecision:\n  weights: 6\n  layers:\n"
            "    - {layer: fc, gradients: 2}\n  schedule:\n    - {from_step: 10, weights: 2, activations: 4}\n"
            "    - {from_step: 60}\n");
    const config::Params p = config::load(file);
    const auto& segments = p.precision.segments;
    REQUIRE(segments.size() == 3);
    CHECK(segments[0].first_step == 0);  // before the first entry: the precision keys as written
    CHECK(segments[0].steps == 10);
    CHECK(segments[1].first_step == 10);
    CHECK(segments[1].steps == 50);
    CHECK(segments[2].steps == 40);
    const auto fwd = phase(fmac::TrainingPhase::forward);
    CHECK(segments[0].per_layer[0][fwd].weights == 6);
    CHECK(segments[1].per_layer[0][fwd].weights == 2);
    CHECK(segments[1].per_layer[0][fwd].activations == 4);
    CHECK(segments[1].per_layer[0][fwd].gradients == 8);  // unset: precision.gradients
    CHECK(segments[2].per_layer[0][fwd].weights == 6);    // no widths: the precision keys
    for (const auto& segment : segments) CHECK(segment.per_layer[2][fwd].gradients == 2);  // fc's override
    CHECK(p.precision.per_layer == segments[0].per_layer);  // a single step reports step 0
    // The dump loads back to the same schedule.
    const config::Params q = config::load(dir.write("again.yaml", config::dump(p)));
    CHECK(config::dump(q) == config::dump(p));
    REQUIRE(q.precision.segments.size() == 3);
    CHECK(q.precision.segments[1].per_layer == segments[1].per_layer);
}

TEST_CASE("precision schedule errors name the entry and key", "[config][node]") {
    const std::string steps = "  steps: 50\n";
    const auto with = [&](const std::string& schedule) {
        return "run: {mode: training_step}\nworkload:\n  trace: " + kSource + "/traces/tiny_cnn.yaml\n  batch: 2\n" +
               steps + "precision:\n  schedule:\n" + schedule;
    };
    CHECK_THAT(
        error_of(with("    - {from_step: 50}\n")),
        Contains("precision.schedule[0].from_step: from_step 50 is not a step of the run: workload.steps is 50"));
    CHECK_THAT(
        error_of(with("    - {from_step: 20}\n    - {from_step: 20}\n")),
        Contains("precision.schedule[1].from_step: from_step 20 must be greater than the previous entry's (20)"));
    CHECK_THAT(error_of(with("    - {weights: 4}\n")), Contains("precision.schedule[0]: expected from_step"));
    CHECK_THAT(error_of(with("    - {from_step: 5, weights: 5}\n")),
               Contains("precision.schedule[0].weights: expected 2, 4, 6 or 8 bits"));
    CHECK_THAT(error_of(with("    - {from_step: -1}\n")), Contains("precision.schedule[0].from_step"));
    CHECK_THAT(error_of(with("    - {from_step: 5, bits: 4}\n")), Contains("precision.schedule[0].bits: unknown key"));
    CHECK_THAT(
        error_of("run: {mode: training_step}\nworkload:\n  trace: " + kSource + "/traces/tiny_cnn.yaml\n  steps: 0\n"),
        Contains("workload.steps: expected"));
}

TEST_CASE("energy tables: every entry needs a value and a source", "[config][energy]") {
    test::TempDir dir;
    std::string table;
    {
        std::ifstream in(kSource + "/configs/energy/fast_45nm.yaml");
        std::stringstream s;
        s << in.rdbuf();
        table = s.str();
    }
    dir.write("table.yaml", table);
    const config::Params p = config::load(dir.write("run.yaml", config_text("energy: {table: table.yaml}\n")));
    CHECK(p.energy.resolved.psum_add_pj == 0.9);
    CHECK(p.energy.resolved.leakage_mw_per_pe == 0.02);

    std::string unsourced = table;
    unsourced.replace(unsourced.find("psum_add_pj: {value: 0.9, source: \"Horowitz ISSCC 2014, 32b FP add\"}"),
                      std::string("psum_add_pj: {value: 0.9, source: \"Horowitz ISSCC 2014, 32b FP add\"}").size(),
                      "psum_add_pj: {value: 0.9}");
    dir.write("table.yaml", unsourced);
    try {
        config::load(dir.path("run.yaml"));
        FAIL("an unsourced figure was accepted");
    } catch (const ConfigError& e) {
        CHECK_THAT(e.what(), Contains("table.yaml:") && Contains("fmac.psum_add_pj: missing source"));
    }

    // SRAM energy by capacity: its three keys together or not at all.
    std::string partial = table;
    const std::string line = partial.substr(partial.find("  capacity_exponent:"));
    partial.erase(partial.find("  capacity_exponent:"), line.find('\n') + 1);
    dir.write("table.yaml", partial);
    try {
        config::load(dir.path("run.yaml"));
        FAIL("a partial capacity fit was accepted");
    } catch (const ConfigError& e) {
        CHECK_THAT(e.what(), Contains("table.yaml:") && Contains("give all three (energy by bank capacity) or none"));
    }
}

TEST_CASE("a precision log's widths take layer overrides on top, and a stepped run costs its whole run",
          "[config][node]") {
    // tiny_cnn's layers conv1, conv2, fc; the log sets conv1 and fc, fc's weights overridden.
    test::TempDir dir;
    dir.write("log.csv",
              "policy,iteration,epoch,conv1.weights_bits,fc.weights_bits\n"
              "fast,0,1,2,2\nfast,1,1,4,4\n");
    const std::string file =
        dir.write("run.yaml", "run: {mode: training_step}\nworkload:\n  trace: " + kSource +
                                  "/traces/tiny_cnn.yaml\n  batch: 2\n  steps: 3\nprecision:\n  layers:\n"
                                  "    - {layer: fc, weights: 8}\n  schedule: log.csv\n");
    const config::Params p = config::load(file);
    const auto& segments = p.precision.segments;
    REQUIRE(segments.size() == 2);
    const auto fwd = phase(fmac::TrainingPhase::forward);
    CHECK(segments[0].per_layer[0][fwd].weights == 2);  // the log's
    CHECK(segments[1].per_layer[0][fwd].weights == 4);
    for (const auto& segment : segments) CHECK(segment.per_layer[2][fwd].weights == 8);  // the override's
    CHECK(segments[0].per_layer[1][fwd].weights == 8);  // conv2: not in the log, the precision keys
    // Stepped: step 0 on the SystemC node, the other precision on the memo path; the whole run is
    // the memo path's, cycle for cycle.
    const auto whole = [&](config::Fidelity fidelity) {
        config::Params q = p;
        q.run.fidelity = fidelity;
        return run::run_whole_training(q, run::run_training_step(q), {});
    };
    const run::WholeRunResult memo = whole(config::Fidelity::memo), stepped = whole(config::Fidelity::stepped);
    CHECK(stepped.total_cycles == memo.total_cycles);
    CHECK(stepped.distinct_steps == 2);
}

TEST_CASE("SRAM energy per bit falls below a sub-bank's capacity as the CACTI fit says", "[config][energy]") {
    // The built-in table: the mantissa bank's 1.18 pJ/bit is a 128 KiB sub-bank's; at 4 KiB it is
    // CACTI's 4 KB figure, 3.92 pJ per 32-bit read = 0.1225 pJ/bit; a bank above 128 KiB stays at 1.18.
    const auto at = [](double mantissa_kib, double exponent_kib) {
        return config::load(kSource + "/configs/quickstart.yaml",
                            {"node.sram.mantissa_bank.capacity_kib=" + std::to_string(mantissa_kib),
                             "node.sram.exponent_bank.capacity_kib=" + std::to_string(exponent_kib)})
            .energy.resolved;
    };
    CHECK(at(4, 64).sram_mantissa_read_pj_per_bit == Approx(3.92 / 32).epsilon(0.01));
    CHECK(at(128, 64).sram_mantissa_read_pj_per_bit == Approx(1.18));
    CHECK(at(1024, 64).sram_mantissa_read_pj_per_bit == Approx(1.18));
    CHECK(at(32, 64).sram_mantissa_write_pj_per_bit == Approx(1.18 * std::pow(0.25, 0.654)));
    CHECK(at(1024, 64).sram_exponent_read_pj_per_bit == Approx(0.156));  // above its 8 KiB sub-bank
    CHECK(at(1024, 2).sram_exponent_read_pj_per_bit == Approx(0.156 * std::pow(0.25, 0.654)));
    // Every smaller bank costs less per bit.
    double previous = 0;
    for (const double kib : {4.0, 8.0, 64.0, 128.0}) {
        const double e = at(kib, 64).sram_mantissa_read_pj_per_bit;
        CHECK(e > previous);
        previous = e;
    }
}

TEST_CASE("SRAM read latency grows with capacity as the CACTI fit says", "[config][energy]") {
    // CACTI 7, 45 nm ITRS-HP scratchpad, one bank, one 128-bit read/write port: access time (ns)
    // by capacity (KiB), the points the built-in table's fit is made from; each is within 20%.
    const std::pair<double, double> cacti[] = {{4, 0.2712},    {8, 0.2917},    {16, 0.3745},  {32, 0.4185},
                                               {64, 0.5344},   {128, 0.7536},  {256, 1.0625}, {512, 1.4930},
                                               {1024, 1.9669}, {2048, 2.5402}, {4096, 3.3047}};
    const config::Params quickstart = config::load(kSource + "/configs/quickstart.yaml");
    REQUIRE(quickstart.energy.resolved.sram_access.has_value());
    const energy::SramAccessFit& fit = *quickstart.energy.resolved.sram_access;
    for (const auto& [kib, ns] : cacti) CHECK(std::abs(fit.access_ns(kib) / ns - 1) < 0.2);
    // The banks' latency, ceil(ns x clock): at 1 GHz the 64 KiB exponent bank (0.64 ns) reads in
    // 1 cycle and the 1 MiB mantissa bank (1.85 ns) in 2; at 3 GHz in 2 and 6; a 4 MiB bank at
    // 1 GHz in 4 (3.16 ns).
    const auto latency = [&](std::vector<std::string> overrides) {
        const memory::SramParams sram =
            config::load(kSource + "/configs/quickstart.yaml", overrides).node.resolved.sram;
        return std::make_pair(sram.exponent_bank.read_latency_cycles, sram.mantissa_bank.read_latency_cycles);
    };
    CHECK(latency({}) == std::make_pair(std::uint64_t{1}, std::uint64_t{2}));
    CHECK(latency({"node.clock_mhz=3000"}) == std::make_pair(std::uint64_t{2}, std::uint64_t{6}));
    CHECK(latency({"node.sram.mantissa_bank.capacity_kib=4096"}).second == 4);
    // A table without the fit: no latency of the banks' own.
    test::TempDir dir;
    std::ifstream in(kSource + "/configs/energy/fast_45nm.yaml");
    std::string table((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (const char* key : {"  access_ns_at_1kib:", "  access_ns_exponent:"}) {
        const std::size_t at = table.find(key);
        REQUIRE(at != std::string::npos);
        table.erase(at, table.find('\n', at) + 1 - at);
    }
    const std::string path = dir.write("no_access.yaml", table);
    CHECK(latency({"energy.table=" + path}) == std::make_pair(std::uint64_t{0}, std::uint64_t{0}));
}

TEST_CASE("a run names its converter-bound phases once, and none when the converter keeps up", "[config][converter]") {
    // The quickstart node's default converter (2 x 32 = 64 lanes) keeps every GEMM phase of
    // ResNet-18 under 10% waiting for it; a 1-lane converter leaves most phases waiting, and the
    // note says what would feed the array.
    const std::string quickstart = std::string(FASTSIM_SOURCE_DIR) + "/configs/quickstart.yaml";
    const config::Params fed =
        config::load(quickstart, {"workload.trace=../traces/resnet18_gemm.yaml", "run.optimizer=none"});
    CHECK(fed.node.resolved.converter.lanes == 64);
    CHECK_FALSE(run::converter_bound_note(fed, run::run_training_step(fed)).has_value());
    const config::Params starved = config::load(quickstart, {"node.converter.lanes=1"});
    const run::TrainingStepResult step = run::run_training_step(starved);
    const std::optional<std::string> note = run::converter_bound_note(starved, step);
    REQUIRE(note.has_value());
    std::size_t bound = 0;
    for (const run::PhaseResult& p : step.phases)
        bound += static_cast<double>(p.counters.converter_wait_cycles) > 0.1 * static_cast<double>(p.counters.cycles);
    CHECK(bound > 0);
    CHECK_THAT(*note, Catch::Matchers::StartsWith(std::to_string(bound) + " of " + std::to_string(step.phases.size()) +
                                                  " phases are converter-bound") &&
                          Catch::Matchers::Contains("node.converter.lanes is 1; 64 (2 x node.array.cols)"));
    CHECK(step.total.converter_wait_cycles > step.total.load_wait_cycles);
    std::ostringstream share;  // the converter's waits as a share of the whole step
    share << std::fixed << std::setprecision(1)
          << 100.0 * static_cast<double>(step.total.converter_wait_cycles) / static_cast<double>(step.total.cycles)
          << "% of the step in all";
    CHECK_THAT(*note, Catch::Matchers::Contains(share.str()));
}
