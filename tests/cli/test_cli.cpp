// SPDX-License-Identifier: MIT
// The fastsim executable as a user runs it: exit codes, messages, output formats.
#include <catch2/catch.hpp>
#include <sys/wait.h>
#include <unistd.h>
#include <fcntl.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "planner/planner.h"
#include "config/load.h"
#include "run/work.h"
#include "common/csv_reader.h"
#include "common/json_reader.h"
#include "support/fastsim_process.h"
#include "support/temp_dir.h"

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

using fastsim::test::Result;
using fastsim::test::run_fastsim;
using fastsim::test::slurp;

const std::string kBfpReportConfig = std::string(FASTSIM_SOURCE_DIR) + "/configs/bfp_error_report.yaml";

}  // namespace

TEST_CASE("quantize prints exponent and exact values per group", "[cli]") {
    // Hand-derived: max 1 -> E = 0, m = 4 LSB 1/8 (see test_bfp_rules).
    const Result r = run_fastsim("quantize -g 4 -m 4", "1.0 0.3 -0.55 0\n1e-3,2e-3,3e-3,inf\n");
    CHECK(r.exit_code == 0);
    CHECK(r.err.empty());
    CHECK(r.out == "0,1,0.25,-0.5,0\nnan,nan,nan,nan,nan\n");
}

TEST_CASE("quantize values parse back to the same float32", "[cli]") {
    const Result r = run_fastsim("quantize -g 2 -m 16", "0.1 0.7\n");
    REQUIRE(r.exit_code == 0);
    // m=16: E = -1, LSB 2^-16: 0.1 -> 6554 * 2^-16, 0.7 -> 45875 * 2^-16.
    CHECK(r.out == "-1,0.100006104,0.699996948\n");
    CHECK(std::strtof("0.100006104", nullptr) == 6554.0f / 65536.0f);
}

TEST_CASE("quantize rejects ragged rows and non-numbers, naming the line", "[cli]") {
    Result r = run_fastsim("quantize -g 4", "1 2 3 4\n\n1 2 3\n");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("<stdin>:3: 3 values is not a whole number of groups of 4"));
    r = run_fastsim("quantize -g 2", "1 x\n");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("<stdin>:1: 'x' is not a number"));
    r = run_fastsim("quantize -g 2 /nonexistent/values.txt");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("/nonexistent/values.txt: cannot open"));
    r = run_fastsim("quantize -m 17", "1 2\n");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("--mantissa-bits: expected an integer from 2 to 16, got '17'"));
    r = run_fastsim("quantize --rounding up", "1 2\n");
    CHECK(r.exit_code == 2);
    r = run_fastsim("quantize --seed -1", "1 2\n");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("--seed: expected an integer from 0 to 2^64-1, got '-1'"));
    r = run_fastsim("quantize --frobnicate", "");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("see fastsim quantize --help"));
}

TEST_CASE("quantize --stats reports error per mantissa width", "[cli]") {
    std::string input;
    for (int i = 1; i <= 64; ++i) input += std::to_string(std::sin(i * 0.37) * 3.0) + (i % 16 ? " " : "\n");
    const Result r = run_fastsim("quantize --stats -m 2,4,6,8 -r stochastic", input);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, StartsWith("mantissa_bits  rounding    values  max_abs_error"));
    std::istringstream lines(r.out);
    std::string line;
    std::getline(lines, line);
    std::getline(lines, line);
    double previous = -1;
    for (int m : {2, 4, 6, 8}) {
        std::getline(lines, line);
        std::istringstream cells(line);
        int width;
        std::string rounding, skip;
        double sqnr, bits_per_value;
        std::uint64_t packed_bits;
        cells >> width >> rounding >> skip >> skip >> skip >> skip >> skip >> sqnr >> packed_bits >> bits_per_value;
        CHECK(width == m);
        // 64 values = 4 groups of 16: 4 * (8 + 16 * (m/2) * 3) bits.
        CHECK(packed_bits == 4u * (8 + 16 * (m / 2) * 3));
        CHECK(bits_per_value == Approx(double(packed_bits) / 64).margin(0.001));
        CHECK(rounding == "stochastic");
        CHECK(sqnr > previous + 8);  // about 12 dB per 2 bits
        previous = sqnr;
    }
}

TEST_CASE("every command has --help and bad commands exit 2", "[cli]") {
    for (const char* command : {"run", "validate", "quantize"}) {
        const Result r = run_fastsim(std::string(command) + " --help");
        CHECK(r.exit_code == 0);
        CHECK_THAT(r.out, Contains("--log-level"));
    }
    CHECK(run_fastsim("--help").exit_code == 0);
    CHECK(run_fastsim("").exit_code == 2);
    const Result r = run_fastsim("simulate x.yaml");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("unknown command 'simulate'"));
}

TEST_CASE("run prints the BFP error report table", "[cli]") {
    const Result r = run_fastsim("run " + kBfpReportConfig + " -p bfp_report.mantissa_bits=[2,8]");
    CHECK(r.exit_code == 0);
    CHECK(r.err.empty());
    CHECK_THAT(r.out, Contains("tensor       distribution  mantissa_bits  rounding    sqnr_db"));
    CHECK_THAT(r.out, Contains("gradients    student_t                 8  stochastic"));
    CHECK_FALSE(r.out.find("SystemC") != std::string::npos);  // no kernel banner on stdout
}

TEST_CASE("config errors exit 2 with file, line and key path, never a crash", "[cli]") {
    fastsim::test::TempDir dir;
    const std::string bad = dir.write("bad.yaml", "bfp:\n  group_size: -4\n");
    for (const char* command : {"run", "validate"}) {
        const Result r = run_fastsim(std::string(command) + " " + bad);
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Contains("bad.yaml:2:15: bfp.group_size: expected a value from 1 to 65536, got -4"));
        CHECK_FALSE(r.err.find("terminate") != std::string::npos);
    }
    CHECK(run_fastsim("run").exit_code == 2);
    CHECK(run_fastsim("run " + dir.path("missing.yaml")).exit_code == 2);
    CHECK(run_fastsim("run " + kBfpReportConfig + " -p nosuch.key=1").exit_code == 2);
    CHECK(run_fastsim("run " + kBfpReportConfig + " --log-level loud").exit_code == 2);
}

TEST_CASE("validate --dump-config prints a config that validates again", "[cli]") {
    const Result dumped = run_fastsim("validate " + kBfpReportConfig + " -p bfp.group_size=32 --dump-config");
    REQUIRE(dumped.exit_code == 0);
    CHECK_THAT(dumped.out, Contains("group_size: 32"));
    fastsim::test::TempDir dir;
    const std::string again = dir.write("again.yaml", dumped.out);
    const Result r = run_fastsim("validate " + again);
    CHECK(r.exit_code == 0);
    CHECK(r.out == again + ": ok\n");
}

namespace {

const std::string kTinyNode = std::string(FASTSIM_SOURCE_DIR) + "/configs/tests/tiny_node.yaml";

/// The value of `"key": N` at the top of a report.json.
double json_number(const std::string& json, const std::string& key) {
    const auto at = json.find("\"" + key + "\": ");
    REQUIRE(at != std::string::npos);
    return std::strtod(json.c_str() + at + key.size() + 4, nullptr);
}

/// Column `name` of a CSV, summed over its rows.
double csv_column_sum(const std::string& csv, const std::string& name) {
    std::istringstream in(csv);
    std::string line, cell;
    std::getline(in, line);
    std::istringstream header(line);
    int column = -1;
    for (int i = 0; std::getline(header, cell, ','); ++i)
        if (cell == name) column = i;
    REQUIRE(column >= 0);
    double sum = 0;
    while (std::getline(in, line)) {
        std::istringstream row(line);
        for (int i = 0; std::getline(row, cell, ','); ++i)
            if (i == column) sum += std::strtod(cell.c_str(), nullptr);
    }
    return sum;
}

}  // namespace

TEST_CASE("the README quickstart: a ResNet-18 training step", "[cli][node]") {
    fastsim::test::TempDir dir;
    const Result r =
        run_fastsim("run " + std::string(FASTSIM_SOURCE_DIR) + "/configs/quickstart.yaml --out " + dir.path("q"));
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.out, Contains("Training step of resnet18 (batch 32) on a 32x32 FAST node"));
    // The whole step: the vector unit (batch norms, ReLUs, adds, pools, the update) is at least
    // 15% of it, and the converter's waits are apart from DRAM's.
    const std::string report = slurp(dir.path("q/report.json"));
    const std::size_t split = report.find("\"cycles\": {");  // the cycle split, after the totals
    REQUIRE(split != std::string::npos);
    const auto number_after = [&report](const std::string& key, std::size_t from) {
        const std::size_t at = report.find("\"" + key + "\": ", from);
        REQUIRE(at != std::string::npos);
        return std::stod(report.substr(at + key.size() + 4));
    };
    CHECK(number_after("vector", split) >= 0.15 * number_after("total_cycles", 0));
    CHECK(number_after("converter_wait", split) >= 0);
    CHECK_THAT(r.out, Contains("pJ/MAC = fmac"));
    // 32 x 32 PEs of 16-value groups at 4 x 4 bits (4 passes): 4,096 MACs a cycle at most.
    CHECK_THAT(r.out, Contains("peak MAC/cycle (R x C x g / passes): forward 4096 at 4x4 bits, backward_data 4096 "
                               "at 4x4 bits, weight_gradient 4096 at 4x4 bits"));
    // A summary a person reads: the three phases, whose cycles add up to the total, and the top
    // five layer phases, not all 62.
    std::istringstream lines(r.out);
    std::string line;
    long long total = -1, phase_sum = 0;
    int phases = 0;
    while (std::getline(lines, line)) {
        std::istringstream words(line);
        std::string first;
        words >> first;
        if (first == "total:") words >> total;
        if (first == "forward" || first == "backward_data" || first == "weight_gradient") {
            if (phases >= 3) continue;  // the top-layers table starts with a layer name, not a phase
            long long layers = 0, cycles = 0;
            double gmac = 0;
            words >> layers >> gmac >> cycles;
            phase_sum += cycles;
            ++phases;
        }
    }
    CHECK(phases == 3);
    CHECK(total > 0);
    CHECK(phase_sum == total);
    CHECK_THAT(r.out, Contains("the 5 of 177 layer phases that take the most cycles"));
    CHECK_THAT(r.out, !Contains("layer4.1.conv2"));  // not among the top five
    const Result full = run_fastsim("run " + std::string(FASTSIM_SOURCE_DIR) + "/configs/quickstart.yaml --per-layer");
    CHECK(full.exit_code == 0);
    CHECK_THAT(full.out, Contains("layer4.1.conv2"));
    CHECK_THAT(full.out, Contains("converter_uJ"));
    const Result wrong = run_fastsim("run " + kBfpReportConfig + " --per-layer");
    CHECK(wrong.exit_code == 2);
    CHECK_THAT(wrong.err, Contains("--per-layer applies to run.mode training_step"));
}

TEST_CASE("run --out writes report.json and layers.csv whose totals agree", "[cli][node]") {
    fastsim::test::TempDir dir;
    const Result r = run_fastsim("run " + kTinyNode + " --out " + dir.path("out"));
    REQUIRE(r.exit_code == 0);
    const std::string json = slurp(dir.path("out/report.json"));
    const std::string csv = slurp(dir.path("out/layers.csv"));
    CHECK_THAT(csv, StartsWith("layer,phase,gemm_count,m,k,n,x_mantissa_bits,y_mantissa_bits,passes_per_group,macs,"));
    // 3 layers: 3 forward, 2 backward-data (conv1 reads only the input), 3 weight-gradient.
    CHECK(std::count(csv.begin(), csv.end(), '\n') == 1 + 8);
    CHECK(json_number(json, "total_cycles") == csv_column_sum(csv, "cycles"));
    CHECK(json_number(json, "total_macs") == csv_column_sum(csv, "macs"));
    CHECK(json_number(json, "total_energy_pj") == Approx(csv_column_sum(csv, "energy_total_pj")).epsilon(1e-6));
    // tiny_cnn, batch 3: conv1 6*6*27*10, conv2 9*90*12, fc 108*7 MACs per sample, x 3 phases but
    // conv1's backward-data.
    const double forward = 3.0 * (36 * 27 * 10 + 9 * 90 * 12 + 108 * 7);
    CHECK(json_number(json, "total_macs") == 3 * forward - 3.0 * 36 * 27 * 10);
    CHECK(json_number(json, "total_energy_pj") > 0);
}

namespace {

/// Runs `config --out DIR/u` under the shipped energy table cut before its `area` section: it
/// loads, and the terminal calls the area unknown.
void run_without_area(fastsim::test::TempDir& dir, const std::string& config) {
    std::string table = slurp(std::string(FASTSIM_SOURCE_DIR) + "/configs/energy/fast_45nm.yaml");
    table = table.substr(0, table.find("\narea:"));
    std::ofstream(dir.path("no_area.yaml")) << table;
    const Result unknown =
        run_fastsim("run " + config + " -p energy.table=" + dir.path("no_area.yaml") + " --out " + dir.path("u"));
    REQUIRE(unknown.exit_code == 0);
    CHECK_THAT(unknown.out, Contains("area: unknown (energy table"));
}

}  // namespace

TEST_CASE("A run reports its node's area, power and efficiency, and an unknown area as unknown", "[cli][area]") {
    fastsim::test::TempDir dir;
    const Result r = run_fastsim("run " + kTinyNode + " --out " + dir.path("out"));
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Contains("area: ") && Contains(" mm2 at 45 nm = array "));
    const fastsim::JsonValue report = fastsim::read_json_file(dir.path("out/report.json"));
    const fastsim::JsonValue summary = fastsim::read_json_file(dir.path("out/summary.json"));
    const auto number = [](const fastsim::JsonValue& o, const char* key) {
        const fastsim::JsonValue* v = o.find(key);
        REQUIRE(v);
        REQUIRE(v->is_number());
        return v->as_number();
    };
    const double area = number(report, "total_area_mm2");
    const fastsim::JsonValue* parts = report.find("area_mm2");
    REQUIRE(parts);
    double sum = 0;
    for (const char* part : {"array", "converter", "vector", "sram"}) {
        sum += number(*parts, part);
        CHECK(number(summary, ("area_" + std::string(part) + "_mm2").c_str()) == Approx(number(*parts, part)));
    }
    CHECK(area > 0);
    CHECK(sum == Approx(area));
    CHECK(number(summary, "area_mm2") == Approx(area));
    const double joules = number(report, "total_energy_pj") * 1e-12, seconds = number(report, "total_seconds");
    CHECK(number(report, "power_w") == Approx(joules / seconds));
    CHECK(number(report, "tops_per_w") == Approx(2 * number(report, "total_macs") * 1e-12 / joules));
    CHECK(number(report, "tops_per_mm2") == Approx(2 * number(report, "total_macs") * 1e-12 / seconds / area));
    CHECK(number(report, "edp_js") == Approx(joules * seconds));
    CHECK(number(summary, "power_w") == Approx(number(report, "power_w")));

    // At 32 nm every part takes 0.46 of its 45 nm area (energy.process_nm); energies stay.
    const Result smaller = run_fastsim("run " + kTinyNode + " -p energy.process_nm=32 --out " + dir.path("n32"));
    REQUIRE(smaller.exit_code == 0);
    const fastsim::JsonValue n32 = fastsim::read_json_file(dir.path("n32/report.json"));
    CHECK(number(n32, "total_area_mm2") == Approx(0.46 * area));
    CHECK(number(n32, "total_energy_pj") == number(report, "total_energy_pj"));

    // A table without an area section still loads; the area is unknown, not 0.
    run_without_area(dir, kTinyNode);
    const fastsim::JsonValue u = fastsim::read_json_file(dir.path("u/report.json"));
    REQUIRE(u.find("total_area_mm2"));
    CHECK_FALSE(u.find("total_area_mm2")->is_number());
    CHECK_FALSE(fastsim::read_json_file(dir.path("u/summary.json")).find("area_mm2"));
}

TEST_CASE("a run directory describes itself: config.yaml re-runs it, report.json names the command", "[cli][node]") {
    fastsim::test::TempDir dir;
    const std::string out = dir.path("it's out");  // a quote and a space: the command line must quote them
    // (in report.json as JSON escapes the shell's '\'': the backslash doubled)
    Result r = run_fastsim("run " + kTinyNode + " -p node.array.rows=8 --out \"" + out + "\"");
    REQUIRE(r.exit_code == 0);
    const std::string json = slurp(out + "/report.json");
    CHECK_THAT(json, Contains("\"fastsim_version\": \""));
    CHECK_THAT(json, Contains("\"command_line\": \"fastsim run " + kTinyNode + " -p node.array.rows=8 --out '" +
                              dir.path("it'\\\\''s out") + "'\""));
    // The effective config, every default filled in, runs again to the same report.
    r = run_fastsim("run \"" + out + "/config.yaml\" --out " + dir.path("again"));
    REQUIRE(r.exit_code == 0);
    const std::string again = slurp(dir.path("again/report.json"));
    CHECK(json_number(again, "total_cycles") == json_number(json, "total_cycles"));
    CHECK(json_number(again, "total_energy_pj") == json_number(json, "total_energy_pj"));
    CHECK(json_number(json, "total_cycles") > 0);
}

TEST_CASE("a whole run costs each precision segment's steps at that segment's step", "[cli][node]") {
    fastsim::test::TempDir dir;
    const std::string base = "run: {mode: training_step}\nworkload: {trace: " + std::string(FASTSIM_SOURCE_DIR) +
                             "/traces/tiny_cnn.yaml, batch: 4, steps: 10}\n";
    const std::string config = dir.write(
        "run.yaml", base +
                        "precision:\n  schedule:\n    - {from_step: 0, weights: 2, activations: 2, gradients: 2}\n"
                        "    - {from_step: 3, weights: 4, activations: 4, gradients: 4}\n"
                        "    - {from_step: 6, weights: 2, activations: 2, gradients: 2}\n");
    Result r = run_fastsim("run " + config + " --out " + dir.path("run"));
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out,
               Contains("whole run: 10 steps (workload.steps) in 3 precision segments, 2 distinct steps simulated"));
    const std::string json = slurp(dir.path("run/report.json"));
    // One step at each width, run on its own.
    const auto step_cycles = [&](int bits) {
        const std::string b = std::to_string(bits);
        const std::string one = dir.write("w" + b + ".yaml", base + "precision: {weights: " + b +
                                                                 ", activations: " + b + ", gradients: " + b + "}\n");
        REQUIRE(run_fastsim("run " + one + " -p workload.steps=1 --out " + dir.path("w" + b)).exit_code == 0);
        return json_number(slurp(dir.path("w" + b + "/report.json")), "total_cycles");
    };
    const double c2 = step_cycles(2), c4 = step_cycles(4);
    REQUIRE(c2 != c4);
    const std::string whole = json.substr(json.find("\"whole_run\""));
    CHECK(json_number(whole, "total_cycles") == 7 * c2 + 3 * c4);
    CHECK(json_number(json, "total_cycles") == c2);  // the step reported is step 0
    // summary.json's whole run is report.json's; a run of one precision is its steps times the step.
    const fastsim::JsonValue summary = fastsim::read_json_file(dir.path("run/summary.json"));
    CHECK(summary.find("run_time_s")->as_number() == Approx(json_number(whole, "total_seconds")).epsilon(1e-8));
    CHECK(summary.find("run_energy_j")->as_number() ==
          Approx(json_number(whole, "total_energy_pj") * 1e-12).epsilon(1e-8));
    const fastsim::JsonValue one = fastsim::read_json_file(dir.path("w2/summary.json"));
    CHECK(one.find("run_time_s")->as_number() == Approx(one.find("time_ms")->as_number() * 1e-3).epsilon(1e-8));
    CHECK(one.find("run_energy_j")->as_number() == Approx(one.find("energy_uj")->as_number() * 1e-6).epsilon(1e-8));

    // The same run from a fastsim train precision_log.csv: steps 0-1 at 2 bits, 2-4 at 4 (the
    // last row's widths continue to step 9).
    std::string log = "policy,iteration,epoch";
    for (const char* layer : {"conv1", "conv2", "fc"})
        for (const char* kind : {"weights", "activations", "gradients"})
            log += std::string(",") + layer + "." + kind + "_bits";
    log += "\n";
    for (int i = 0; i < 5; ++i) {
        log += "fast," + std::to_string(i) + ",1";
        for (int c = 0; c < 9; ++c) log += i < 2 ? ",2" : ",4";
        log += "\n";
    }
    dir.write("precision_log.csv", log);
    const std::string from_log = dir.write("log.yaml", base + "precision: {schedule: precision_log.csv}\n");
    r = run_fastsim("run " + from_log + " --out " + dir.path("log"));
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Contains("in 2 precision segments, 2 distinct steps simulated"));
    const std::string log_json = slurp(dir.path("log/report.json"));
    CHECK(json_number(log_json.substr(log_json.find("\"whole_run\"")), "total_cycles") == 2 * c2 + 8 * c4);
    // A column naming no layer of the trace, and a second policy, are errors naming the file.
    dir.write("bad_log.csv", "policy,iteration,epoch,conv7.weights_bits\nfast,0,1,4\n");
    r = run_fastsim("run " + dir.write("bad.yaml", base + "precision: {schedule: bad_log.csv}\n"));
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("bad_log.csv: column 'conv7.weights_bits': no layer named 'conv7' in the trace"));
    dir.write("two_policies.csv", "policy,iteration,epoch,fc.weights_bits\nfast,0,1,4\nbfp_m8,1,1,8\n");
    r = run_fastsim("run " + dir.write("two.yaml", base + "precision: {schedule: two_policies.csv}\n"));
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("two_policies.csv:3: policy 'bfp_m8' after 'fast': keep one policy's rows"));
}

TEST_CASE("diff prints the totals and the layers that changed between two runs", "[cli][node]") {
    fastsim::test::TempDir dir;
    REQUIRE(run_fastsim("run " + kTinyNode + " --out " + dir.path("a")).exit_code == 0);
    REQUIRE(run_fastsim("run " + kTinyNode + " -p node.array.cols=4 --out " + dir.path("b")).exit_code == 0);
    REQUIRE(run_fastsim("run " + kTinyNode + " --out " + dir.path("a2")).exit_code == 0);
    const double a = json_number(slurp(dir.path("a/report.json")), "total_cycles");
    const double b = json_number(slurp(dir.path("b/report.json")), "total_cycles");
    REQUIRE(a != b);
    Result r = run_fastsim("diff " + dir.path("a") + " " + dir.path("b"));
    REQUIRE(r.exit_code == 0);
    std::ostringstream change;
    change.setf(std::ios::fixed);
    change.precision(2);
    change << (b > a ? "+" : "") << 100.0 * (b - a) / a << "%";
    INFO(r.out);
    CHECK_THAT(r.out, Contains("total_cycles"));
    CHECK_THAT(r.out, Contains(change.str()));
    CHECK_THAT(r.out, Contains("conv1 / forward"));
    CHECK_THAT(r.out, Contains("node.array_cols"));
    // Two runs of the same config: nothing differs but the command line, which is not a number.
    r = run_fastsim("diff " + dir.path("a") + " " + dir.path("a2"));
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Contains("equal layers not shown"));
    CHECK_THAT(r.out, !Contains("conv1 / forward"));
    CHECK_THAT(run_fastsim("diff " + dir.path("a") + " " + dir.path("a2") + " --all").out, Contains("conv1 / forward"));
    // Bad input: exit 2 naming the file.
    r = run_fastsim("diff " + dir.path("a") + " " + dir.path("missing"));
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains(dir.path("missing") + ": not a directory"));
    // A training directory is not a run directory.
    std::filesystem::create_directories(dir.path("t"));
    for (const char* name : {"comparison.csv", "accuracy.csv"})
        std::ofstream(dir.path(std::string("t/") + name)) << "x\n";
    r = run_fastsim("diff " + dir.path("a") + " " + dir.path("t"));
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains(dir.path("t") + ": a training (fastsim train --out) directory; diff compares two run"));
    r = run_fastsim("diff " + dir.path("a"));
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("expected two run directories"));
    // A layers.csv with a row given twice, or a non-finite number, is named with its line.
    const std::string report = slurp(dir.path("a/report.json")), csv = slurp(dir.path("a/layers.csv"));
    const std::string first_row = csv.substr(csv.find('\n') + 1, csv.find('\n', csv.find('\n') + 1) - csv.find('\n'));
    for (const char* sub : {"dup", "nan", "cluster"}) std::filesystem::create_directories(dir.path(sub));
    dir.write("dup/report.json", report);
    dir.write("dup/layers.csv", csv + first_row);
    r = run_fastsim("diff " + dir.path("a") + " " + dir.path("dup"));
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains(dir.path("dup/layers.csv") + ":10: 'conv1 / forward' again (first on line 2)"));
    std::string nan_csv = csv;
    nan_csv.replace(nan_csv.find(",\"forward\",") + 11, 1, "nan");  // gemm_count of the first row
    dir.write("nan/report.json", report);
    dir.write("nan/layers.csv", nan_csv);
    r = run_fastsim("diff " + dir.path("a") + " " + dir.path("nan"));
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains(dir.path("nan/layers.csv") + ":2: column 'gemm_count': 'nan' is not a finite number"));
    dir.write("cluster/report.json", report);
    dir.write("cluster/layers.csv", "layer,planned_s,simulated_s\nconv1,1,1\n");
    r = run_fastsim("diff " + dir.path("a") + " " + dir.path("cluster"));
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("one is a node run's"));
}

TEST_CASE("fidelity stepped gives the memo path's report, cycle for cycle", "[cli][node][fidelity]") {
    fastsim::test::TempDir dir;
    REQUIRE(run_fastsim("run " + kTinyNode + " --out " + dir.path("memo")).exit_code == 0);
    const Result stepped = run_fastsim("run " + kTinyNode + " --fidelity stepped --out " + dir.path("stepped"));
    REQUIRE(stepped.exit_code == 0);
    std::string memo_json = slurp(dir.path("memo/report.json")), stepped_json = slurp(dir.path("stepped/report.json"));
    CHECK_THAT(stepped_json, Contains("\"fidelity\": \"stepped\""));
    memo_json.replace(memo_json.find("\"memo\""), 6, "\"stepped\"");
    // The command lines differ (--fidelity, --out); everything after them must not.
    const auto after_command_line = [](const std::string& json) { return json.substr(json.find("\"network\"")); };
    CHECK(after_command_line(memo_json) == after_command_line(stepped_json));
    CHECK(slurp(dir.path("memo/layers.csv")) == slurp(dir.path("stepped/layers.csv")));
}

TEST_CASE("training_step bad input exits 2 naming the file and line", "[cli][node]") {
    fastsim::test::TempDir dir;
    const std::string trace = dir.write("net.yaml", "network: n\nlayers:\n  - {name: a, type: lstm, in_features: 4}\n");
    const std::string config = dir.write("run.yaml", "run: {mode: training_step}\nworkload: {trace: net.yaml}\n");
    Result r = run_fastsim("run " + config);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("net.yaml:3:") && Contains("type"));
    r = run_fastsim("run " + kTinyNode + " --fidelity exact");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("--fidelity: expected memo or stepped"));
    r = run_fastsim("run " + kTinyNode + " -p node.sram.exponent_bank.capacity_kib=0.001");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("node.sram.exponent_bank.capacity_kib: layer 'conv1' (forward) cannot be tiled"));
    CHECK(run_fastsim("run " + kBfpReportConfig + " --out " + dir.path("x")).exit_code == 2);
}

namespace {
const std::string kTinyCluster = std::string(FASTSIM_SOURCE_DIR) + "/configs/tests/tiny_cluster.yaml";
}  // namespace

TEST_CASE("plan writes plan.json and plan.csv with one row per group and layer", "[cli][cluster]") {
    fastsim::test::TempDir dir;
    const Result r = run_fastsim("plan " + kTinyCluster + " --out " + dir.path("plan"));
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Contains("predicted step:") && Contains("planner: accpar, minimising time, balanced splits"));
    const std::string csv = slurp(dir.path("plan/plan.csv"));
    CHECK(std::count(csv.begin(), csv.end(), '\n') == 1 + 3);  // header + 1 group x 3 layers
    CHECK_THAT(csv, StartsWith("group,depth,nodes,side_a_nodes,layer,type,alpha"));
    CHECK_THAT(slurp(dir.path("plan/plan.json")),
               Contains("\"planner\": \"accpar\"") && Contains("\"predicted_step_s\""));
}

namespace {

/// `path`'s lines less those naming the fields that differ from run to run by design.
std::string without_volatile_fields(const std::string& path) {
    std::istringstream in(slurp(path));
    std::string out, line;
    while (std::getline(in, line))
        if (line.find("\"command_line\"") == std::string::npos && line.find("\"planning_s\"") == std::string::npos &&
            line.find("\"simulation_s\"") == std::string::npos)
            out += line + "\n";
    return out;
}

}  // namespace

TEST_CASE("plan, then run --plan, reproduces run's report for every planner on every shipped cluster",
          "[cli][cluster][plan]") {
    fastsim::test::TempDir dir;
    std::vector<std::string> configs;
    for (const auto& entry : std::filesystem::directory_iterator(std::string(FASTSIM_SOURCE_DIR) + "/configs/cluster"))
        if (entry.path().extension() == ".yaml") configs.push_back(entry.path().string());
    std::sort(configs.begin(), configs.end());
    REQUIRE(configs.size() >= 3);
    for (const std::string& config : configs)
        for (const fastsim::planner::PlannerKind kind : fastsim::planner::kAllPlanners) {
            const std::string planner(fastsim::planner::to_string(kind));
            INFO(config << ", " << planner);
            std::filesystem::remove_all(dir.path("p"));
            std::filesystem::remove_all(dir.path("r"));
            std::filesystem::remove_all(dir.path("g"));
            REQUIRE(run_fastsim("plan " + config + " --planner " + planner + " --out " + dir.path("p")).exit_code == 0);
            REQUIRE(run_fastsim("run " + config + " --planner " + planner + " --out " + dir.path("r")).exit_code == 0);
            const Result given =
                run_fastsim("run " + config + " --plan " + dir.path("p/plan.json") + " --out " + dir.path("g"));
            REQUIRE(given.exit_code == 0);
            for (const char* file :
                 {"report.json", "plan.json", "plan.csv", "layers.csv", "nodes.csv", "summary.json"}) {
                INFO(file);
                CHECK(without_volatile_fields(dir.path(std::string("g/") + file)) ==
                      without_volatile_fields(dir.path(std::string("r/") + file)));
            }
        }
}

TEST_CASE("run --plan takes a hand-written plan: splits by alpha alone, no predictions", "[cli][cluster][plan]") {
    fastsim::test::TempDir dir;
    // tiny_cluster: two nodes, conv1 -> conv2 -> fc at batch 8; conv2 has 10 input channels.
    const std::string hand = dir.write("hand.json", R"({
  "nodes": 2,
  "planner": "hypar",
  "layers": [{"name": "conv1"}, {"name": "conv2"}, {"name": "fc"}],
  "groups": [
    {"nodes": [0, 1], "types": ["I", "I", "II"], "alpha": [0.5, 0.25, 0.5]},
    {"nodes": [0]},
    {"nodes": [1]}
  ]
})");
    const Result r = run_fastsim("run " + kTinyCluster + " --plan " + hand + " --out " + dir.path("run"));
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Contains("planner: hypar"));
    const std::string csv = slurp(dir.path("run/plan.csv"));
    CHECK_THAT(csv, Contains(",conv1,I,0.5,4,") && Contains(",conv2,I,0.25,2,") && Contains(",fc,II,0.5,"));
    // The plan run writes is the hand-written one, every figure filled in: it runs to the same report.
    const Result again =
        run_fastsim("run " + kTinyCluster + " --plan " + dir.path("run/plan.json") + " --out " + dir.path("again"));
    REQUIRE(again.exit_code == 0);
    CHECK(without_volatile_fields(dir.path("again/report.json")) ==
          without_volatile_fields(dir.path("run/report.json")));
}

TEST_CASE("plan.csv lists every layer's split for a pipeline's stages too, one-node stages included",
          "[cli][cluster][plan]") {
    fastsim::test::TempDir dir;
    const Result r =
        run_fastsim("plan " + kTinyCluster + " --planner pipeline -p planner.pipeline.stages=2 --out " + dir.path("p"));
    REQUIRE(r.exit_code == 0);
    const fastsim::CsvTable csv = fastsim::read_csv_file(dir.path("p/plan.csv"));
    REQUIRE(csv.rows.size() == 3);  // conv1 on node 0; conv2 and fc on node 1: one node each, not split
    const auto column = [&](const std::string& name) {
        return static_cast<std::size_t>(std::find(csv.header.begin(), csv.header.end(), name) - csv.header.begin());
    };
    REQUIRE(column("stage_nodes") < csv.header.size());
    CHECK(csv.rows[0][column("layer")] == "conv1");
    CHECK(csv.rows[0][column("stage")] == "0");
    CHECK(csv.rows[0][column("stage_nodes")] == "0");
    CHECK(csv.rows[0][column("type")] == "-");
    CHECK(csv.rows[2][column("layer")] == "fc");
    CHECK(csv.rows[2][column("stage")] == "1");
    CHECK(csv.rows[2][column("stage_nodes")] == "1");
    CHECK(std::stod(csv.rows[2][column("compute_a_s")]) > 0);
    // Over the TPU cluster's two groups, each stage splits its layers over its eight nodes.
    const std::string tpu = std::string(FASTSIM_SOURCE_DIR) + "/configs/cluster/tpu_v2_v3.yaml";
    REQUIRE(run_fastsim("plan " + tpu + " --planner pipeline --out " + dir.path("t")).exit_code == 0);
    const fastsim::CsvTable t = fastsim::read_csv_file(dir.path("t/plan.csv"));
    const auto t_column = [&](const std::string& name) {
        return static_cast<std::size_t>(std::find(t.header.begin(), t.header.end(), name) - t.header.begin());
    };
    REQUIRE(t_column("stage_nodes") < t.header.size());
    std::size_t stage0 = 0, stage1 = 0;
    for (const auto& row : t.rows) {
        CHECK(row[t_column("type")] != "-");
        (row[t_column("stage")] == "0" ? stage0 : stage1) += row[t_column("group")] == "0";
        CHECK(row[t_column("stage_nodes")] == (row[t_column("stage")] == "0" ? "0-7" : "8-15"));
    }
    CHECK(stage0 + stage1 == 54);  // ResNet-50's GEMM layers, each once at its stage's root group
}

TEST_CASE("run of a cluster config reports the simulated step and writes its files", "[cli][cluster]") {
    fastsim::test::TempDir dir;
    const Result r = run_fastsim("run " + kTinyCluster + " --planner owt --out " + dir.path("run"));
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Contains("simulated step:") && Contains("prediction error") && Contains("planner: owt"));
    CHECK(std::count(r.out.begin(), r.out.end(), '\n') > 10);
    const std::string nodes = slurp(dir.path("run/nodes.csv"));
    CHECK(std::count(nodes.begin(), nodes.end(), '\n') == 3);
    CHECK_THAT(slurp(dir.path("run/report.json")), Contains("\"simulated_step_s\"") && Contains("\"links\""));
    CHECK_THAT(slurp(dir.path("run/layers.csv")), Contains("planned_s,simulated_s"));
}

TEST_CASE("run of a large cluster prints each node type's means and the slowest nodes, not every node",
          "[cli][cluster]") {
    fastsim::test::TempDir dir;
    const Result r = run_fastsim("run " + kTinyCluster +
                                 " --planner owt -p cluster.groups.0.count=30 -p cluster.groups.1.count=10 "
                                 "-p workload.batch=40 --out " +
                                 dir.path("run"));
    REQUIRE(r.exit_code == 0);
    const fastsim::CsvTable nodes = fastsim::read_csv_file(dir.path("run/nodes.csv"));
    REQUIRE(nodes.rows.size() == 40);
    const auto column = [&](const std::string& name) { return nodes.column(name).value(); };
    // Per type: the mean compute in ms, as the terminal rounds it.
    for (const auto& [type, count] : {std::pair<std::string, int>{"small", 30}, {"big", 10}}) {
        double compute_s = 0;
        for (const auto& row : nodes.rows)
            if (row[column("type")] == type) compute_s += std::stod(row[column("compute_s")]);
        char expected[96];
        std::snprintf(expected, sizeof expected, "%-6s %5d %11.3f", type.c_str(), count, compute_s / count * 1e3);
        INFO(r.out);
        CHECK_THAT(r.out, Contains(expected));
    }
    // The 8 busiest nodes (compute and waits) are the rows listed, and no other node is.
    std::vector<std::pair<double, std::size_t>> busy;
    for (std::size_t n = 0; n < nodes.rows.size(); ++n)
        busy.emplace_back(
            -(std::stod(nodes.rows[n][column("compute_s")]) + std::stod(nodes.rows[n][column("comm_wait_s")])), n);
    std::stable_sort(busy.begin(), busy.end());
    const std::size_t from = r.out.find("the 8 nodes busy longest (compute and waits), of 40");
    REQUIRE(from != std::string::npos);
    const std::string listed = r.out.substr(from, r.out.find("\n\n", from) - from);
    for (std::size_t i = 0; i < busy.size(); ++i) {
        const std::string id = std::to_string(busy[i].second);
        const bool shown = listed.find("\n" + std::string(4 - id.size(), ' ') + id + "  ") != std::string::npos;
        INFO("node " << id << ", rank " << i);
        CHECK(shown == (i < 8));
    }
}

TEST_CASE("A cluster run too large for the machine's memory says what would fit", "[cli][cluster]") {
    // GPT-3 175B on 1,024 nodes under a delayed update: no plan is replayed, so the bound before
    // planning decides (about 21 GiB: every micro-batch of a stage per torus simulated message
    // by message). (Without one, the simulation is checked once planned: "A run's simulation
    // is checked against the ops its plan's replay counted".)
    const std::string config = std::string(FASTSIM_SOURCE_DIR) + "/configs/pipeline/gpt3_175b_1024node.yaml";
    const double need =
        fastsim::run::estimate_cluster(fastsim::config::load(config, {"cluster.gradient_sync.staleness=1"}), true,
                                       {fastsim::planner::PlannerKind::alpa})
            .memory_bytes;
    if (fastsim::run::run_memory_limit_bytes() >= need) {
        WARN("this machine allows a run the " << need / 0x1p30 << " GiB this one needs: not checked here");
        return;
    }
    const Result r = run_fastsim("run " + config + " -p cluster.gradient_sync.staleness=1");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("of memory for planning and simulating 1024 nodes") &&
                          Contains("what would fit: fewer nodes (about ") &&
                          Contains("planning without the simulation (fastsim plan)"));
    // Fewer nodes than asked: node count x limit / need (both in the message, rounded).
    const std::size_t from = r.err.find("(about ") + 7;
    const double fit = std::stod(r.err.substr(from));
    CHECK(fit >= 1);
    CHECK(fit < 1024);
}

TEST_CASE("run and plan refuse planner.pipeline keys their planner does not use", "[cli][cluster]") {
    // fast_4node is one group: AccPar weighs no pipeline there, so no pipeline key means anything.
    const std::string one_group = std::string(FASTSIM_SOURCE_DIR) + "/configs/cluster/fast_4node.yaml";
    for (const char* command : {"plan ", "run "}) {
        const Result r = run_fastsim(command + one_group + " -p planner.name=owt -p planner.pipeline.microbatches=2");
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Contains("-p planner.pipeline.microbatches: ") &&
                              Contains("planner.pipeline.microbatches applies to the pipeline and alpa planners") &&
                              Contains("planner.name is owt"));
    }
    CHECK(run_fastsim("plan " + one_group + " -p planner.name=accpar -p planner.pipeline.stages=2").exit_code == 2);
    CHECK(run_fastsim("plan " + one_group + " -p planner.name=pipeline -p planner.pipeline.stages=2").exit_code == 0);
    // Over several groups AccPar weighs the pipeline planners' plans with these keys, but plans
    // their stages with itself: another intra planner is refused, accpar itself is not.
    const std::string groups = std::string(FASTSIM_SOURCE_DIR) + "/configs/cluster/tpu_v2_v3.yaml";
    CHECK(run_fastsim("plan " + groups + " -p planner.name=accpar -p planner.pipeline.schedule=gpipe").exit_code == 0);
    CHECK(run_fastsim("plan " + groups + " -p planner.name=accpar -p planner.pipeline.intra=accpar").exit_code == 0);
    const Result intra = run_fastsim("plan " + groups + " -p planner.name=accpar -p planner.pipeline.intra=owt");
    CHECK(intra.exit_code == 2);
    CHECK_THAT(intra.err, Contains("(accpar plans their stages with accpar); planner.name is accpar"));
    // A run's own config.yaml writes every planner key, at its default where not given: it
    // runs again.
    fastsim::test::TempDir out;
    REQUIRE(run_fastsim("run " + one_group + " -p planner.name=owt --out " + out.path("o")).exit_code == 0);
    CHECK(run_fastsim("plan " + out.path("o") + "/config.yaml").exit_code == 0);
    // compare plans with every planner, so every key means something to one of them.
    CHECK(run_fastsim("compare " + one_group + " -p planner.pipeline.microbatches=2").exit_code == 0);
}

TEST_CASE("A config's run.max_work_s is its work limit, and --max-work overrides it", "[cli][cluster]") {
    // fast_4node's plan is estimated at about 0.01 s.
    const std::string cluster = std::string(FASTSIM_SOURCE_DIR) + "/configs/cluster/fast_4node.yaml";
    const Result refused = run_fastsim("plan " + cluster + " -p run.max_work_s=0.001");
    CHECK(refused.exit_code == 2);
    CHECK_THAT(refused.err, Contains("above the work limit of 0.001 s"));
    CHECK(run_fastsim("plan " + cluster + " -p run.max_work_s=0.001 --max-work 100").exit_code == 0);
    CHECK(run_fastsim("plan " + cluster + " -p run.max_work_s=100").exit_code == 0);
    const Result zero = run_fastsim("plan " + kTinyCluster + " -p run.max_work_s=0");
    CHECK(zero.exit_code == 2);
    CHECK_THAT(zero.err, Contains("run.max_work_s: expected a value from 0.001 to 1000000000 s, got 0"));
}

TEST_CASE("compare prints every planner's speedup over data parallelism and a geomean", "[cli][cluster]") {
    const Result r = run_fastsim("compare " + kTinyCluster + " --simulate");
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Contains("speedup over data parallelism, simulated") && Contains("geomean") &&
                          Contains("tiny_cnn") && Contains("accpar") && Contains("tofu"));
    const Result volume = run_fastsim("compare " + kTinyCluster + " --comm-only --equal-split");
    REQUIRE(volume.exit_code == 0);
    CHECK_THAT(volume.out, Contains("communication volume of data parallelism / planner"));
}

TEST_CASE("compare.csv has planned and simulated steps, integer bytes and both baselines", "[cli][cluster]") {
    fastsim::test::TempDir dir;
    const Result r = run_fastsim("compare " + kTinyCluster + " --simulate --equal-split --out " + dir.path("cmp"));
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out,
               Contains("speedup over balanced data parallelism, simulated") &&
                   Contains("prediction error, (planned - simulated) / simulated, percent") &&
                   Contains("note: tiny_cnn, data_parallel_balanced: with --equal-split this is data_parallel") &&
                   Contains("note: tiny_cnn, hypar: splits by node count already"));
    const auto csv = fastsim::read_csv_file(dir.path("cmp/compare.csv"));
    REQUIRE(csv.rows.size() == fastsim::planner::kAllPlanners.size());
    const auto col = [&](const char* name) { return *csv.column(name); };
    for (const auto& row : csv.rows) {
        INFO(row[col("planner")]);
        const double planned = *fastsim::parse_number(row[col("planned_step_s")]);
        const double simulated = *fastsim::parse_number(row[col("simulated_step_s")]);
        CHECK(*fastsim::parse_number(row[col("prediction_error")]) ==
              Approx((planned - simulated) / simulated).margin(1e-6));
        CHECK(row[col("step_s")] == row[col("simulated_step_s")]);
        CHECK(row[col("comm_bytes")].find_first_not_of("0123456789") == std::string::npos);  // an integer, no exponent
        CHECK(!row[col("speedup_over_data_parallel_balanced")].empty());
    }
    // --equal-split turns data_parallel_balanced into data_parallel: the same step.
    CHECK(csv.rows[1][col("simulated_step_s")] == csv.rows[0][col("simulated_step_s")]);
    // With --comm-only the speedup columns are volume ratios.
    const Result volume = run_fastsim("compare " + kTinyCluster + " --comm-only --out " + dir.path("vol"));
    REQUIRE(volume.exit_code == 0);
    const auto v = fastsim::read_csv_file(dir.path("vol/compare.csv"));
    const double dp_bytes = *fastsim::parse_number(v.rows[0][*v.column("comm_bytes")]);
    const double accpar_bytes = *fastsim::parse_number(v.rows[4][*v.column("comm_bytes")]);
    CHECK(v.rows[4][*v.column("planner")] == "accpar");
    CHECK(*fastsim::parse_number(v.rows[4][*v.column("speedup_over_data_parallel")]) ==
          Approx(dp_bytes / accpar_bytes));
}

TEST_CASE("Memory capacity: plan.json lists every node footprint, and a plan that cannot fit is exit 2",
          "[cli][cluster][memory]") {
    const std::string config = std::string(FASTSIM_SOURCE_DIR) + "/configs/cluster/fast_4node.yaml";
    fastsim::test::TempDir dir;
    // 0.08 GiB: data parallelism's copies of ResNet-18's weights do not fit; AccPar splits them.
    const Result refused =
        run_fastsim("plan " + config + " -p node_types.0.dram.capacity_gib=0.08 --planner data_parallel");
    CHECK(refused.exit_code == 2);
    CHECK_THAT(refused.err, Contains("no plan of data_parallel fits in memory: node 0 (fast32) needs") &&
                                Contains("GiB of its 0.080 GiB") && Contains("GiB short"));
    const Result fits =
        run_fastsim("plan " + config + " -p node_types.0.dram.capacity_gib=0.08 --out " + dir.path("p"));
    REQUIRE(fits.exit_code == 0);
    CHECK_THAT(fits.out, Contains("memory: node") && Contains("of 0.080 GiB"));
    const std::string json = slurp(dir.path("p/plan.json"));
    CHECK_THAT(json, Contains("\"memory\": [") && Contains("{\"node\": 3, \"memory_bytes\": ") &&
                         Contains("\"capacity_bytes\": 85899346"));
}

TEST_CASE("Bad cluster configs name the key and exit 2", "[cli][cluster]") {
    Result r = run_fastsim("run " + kTinyCluster + " -p cluster.groups.0.node_type=nope");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("cluster.groups[0].node_type") && Contains("no node type named 'nope'"));
    r = run_fastsim("plan " + kTinyCluster + " -p planner.name=data_parallel -p workload.batch=1");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("workload.batch") && Contains("batch 1 is smaller than the 2 nodes"));
    r = run_fastsim("plan " + kTinyCluster + " -p cluster.groups.0.topology=torus2d");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("cluster.groups[0]") && Contains("torus2d needs torus"));
    // Two groups and nothing joining them.
    fastsim::test::TempDir dir;
    std::string text = slurp(kTinyCluster);
    text = text.substr(0, text.find("  upper:")) + "planner: {name: accpar}\n";
    text.replace(text.find("../../traces"), 12, std::string(FASTSIM_SOURCE_DIR) + "/traces");
    r = run_fastsim("run " + dir.write("split.yaml", text));
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("cluster.upper") && Contains("nodes 1..1 are unreachable from node 0"));
    r = run_fastsim("plan " + std::string(FASTSIM_SOURCE_DIR) + "/configs/quickstart.yaml");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("needs a config with run.mode cluster"));
}

namespace {
/// The cell of `column` in the layers.csv row of `layer` and `phase`, as an integer.
std::uint64_t layer_cell(const fastsim::CsvTable& csv, const std::string& layer, const std::string& phase,
                         const std::string& column) {
    const auto at = csv.column(column);
    REQUIRE(at);
    for (const auto& row : csv.rows)
        if (row[0] == layer && row[1] == phase) return std::stoull(row[*at]);
    FAIL("no layers.csv row for " << layer << " " << phase);
    return 0;
}
}  // namespace

TEST_CASE("grouped convolutions and gemm layers: stepped = memo, and G groups cost G times one group",
          "[cli][node][fidelity]") {
    // One GEMM per group (node.lowering.depthwise per_channel); the packed default below.
    fastsim::test::TempDir dir;
    const std::string trace = dir.write(
        "grouped.yaml",
        "layers:\n"
        "  - {name: grouped, type: conv, input: [10, 10, 8], kernel: [3, 3], filters: 12, padding: 1, groups: 4}\n"
        "  - {name: one_group, type: conv, input: [10, 10, 2], kernel: [3, 3], filters: 3, padding: 1, inputs: "
        "[input]}\n"
        "  - {name: depthwise, type: conv, input: [10, 10, 12], kernel: [3, 3], filters: 12, stride: 2, groups: 12, "
        "inputs: [grouped]}\n"
        "  - {name: probe, type: gemm, m: 20, k: 30, n: 7}\n");
    const std::string with_trace =
        kTinyNode + " -p workload.trace=" + trace + " -p 'precision.layers=[]' -p node.lowering.depthwise=per_channel";
    REQUIRE(run_fastsim("run " + with_trace + " --out " + dir.path("memo")).exit_code == 0);
    REQUIRE(run_fastsim("run " + with_trace + " --fidelity stepped --out " + dir.path("stepped")).exit_code == 0);
    CHECK(slurp(dir.path("memo/layers.csv")) == slurp(dir.path("stepped/layers.csv")));
    const fastsim::CsvTable csv = fastsim::read_csv_file(dir.path("memo/layers.csv"));
    const auto cell = [&csv](const char* layer, const char* phase, const char* column) {
        return layer_cell(csv, layer, phase, column);
    };
    for (const char* phase : {"forward", "weight_gradient"}) {
        CHECK(cell("grouped", phase, "gemm_count") == 4);
        CHECK(cell("grouped", phase, "macs") == 4 * cell("one_group", phase, "macs"));
        CHECK(cell("grouped", phase, "cycles") == 4 * cell("one_group", phase, "cycles"));
    }
    // 12 GEMMs of (3 * 4 * 4) x 9 x 1.
    CHECK(cell("depthwise", "forward", "gemm_count") == 12);
    CHECK(cell("depthwise", "forward", "m") == 48);
    CHECK(cell("depthwise", "forward", "k") == 9);
    CHECK(cell("depthwise", "forward", "n") == 1);
    // One GEMM: batch 3 does not scale it.
    CHECK(cell("probe", "forward", "gemm_count") == 1);
    CHECK(cell("probe", "forward", "m") == 20);
    CHECK(cell("probe", "forward", "k") == 30);
    CHECK(cell("probe", "forward", "n") == 7);

    // Packed (the default): on the tiny node's 4 x 3 array three 9-tap channels fill a fold (one
    // group of 16 a row, one column each): 4 GEMMs of 48 x 3, stepped = memo; the same MACs in
    // fewer cycles; grouped's 4 groups (k = 18: 2 groups of 16, n = 3) pack 1 to a fold: as before.
    const std::string packed = kTinyNode + " -p workload.trace=" + trace + " -p 'precision.layers=[]'";
    REQUIRE(run_fastsim("run " + packed + " --out " + dir.path("packed")).exit_code == 0);
    REQUIRE(run_fastsim("run " + packed + " --fidelity stepped --out " + dir.path("packed_stepped")).exit_code == 0);
    CHECK(slurp(dir.path("packed/layers.csv")) == slurp(dir.path("packed_stepped/layers.csv")));
    const fastsim::CsvTable packed_csv = fastsim::read_csv_file(dir.path("packed/layers.csv"));
    const auto packed_cell = [&packed_csv](const char* layer, const char* phase, const char* column) {
        return layer_cell(packed_csv, layer, phase, column);
    };
    CHECK(packed_cell("depthwise", "forward", "gemm_count") == 4);
    CHECK(packed_cell("depthwise", "forward", "m") == 48);
    CHECK(packed_cell("depthwise", "forward", "k") == 48);
    CHECK(packed_cell("depthwise", "forward", "n") == 3);
    for (const char* phase : {"forward", "backward_data", "weight_gradient"}) {
        INFO(phase);
        CHECK(packed_cell("depthwise", phase, "macs") == cell("depthwise", phase, "macs"));
    }
    for (const char* phase : {"forward", "weight_gradient"})  // grouped reads the input: no backward-data
        CHECK(packed_cell("grouped", phase, "cycles") == cell("grouped", phase, "cycles"));
    CHECK(packed_cell("depthwise", "forward", "cycles") < cell("depthwise", "forward", "cycles"));
    CHECK(packed_cell("depthwise", "backward_data", "cycles") < cell("depthwise", "backward_data", "cycles"));
    // On the vector unit (forward and backward-data): the same MACs, stepped = memo too.
    const std::string vector = packed + " -p node.lowering.depthwise=vector";
    REQUIRE(run_fastsim("run " + vector + " --out " + dir.path("vector")).exit_code == 0);
    REQUIRE(run_fastsim("run " + vector + " --fidelity stepped --out " + dir.path("vector_stepped")).exit_code == 0);
    CHECK(slurp(dir.path("vector/layers.csv")) == slurp(dir.path("vector_stepped/layers.csv")));
    const fastsim::CsvTable vector_csv = fastsim::read_csv_file(dir.path("vector/layers.csv"));
    for (const char* phase : {"forward", "backward_data", "weight_gradient"}) {
        INFO(phase);
        CHECK(layer_cell(vector_csv, "depthwise", phase, "macs") == cell("depthwise", phase, "macs"));
    }
    CHECK(layer_cell(vector_csv, "depthwise", "forward", "gemm_count") == 0);
    CHECK(layer_cell(vector_csv, "depthwise", "forward", "vector_cycles") > 0);
}

TEST_CASE("run.phases simulates a subset of the training phases", "[cli][node]") {
    fastsim::test::TempDir dir;
    REQUIRE(run_fastsim("run " + kTinyNode + " --out " + dir.path("all")).exit_code == 0);
    REQUIRE(run_fastsim("run " + kTinyNode + " -p 'run.phases=[forward]' --out " + dir.path("fwd")).exit_code == 0);
    REQUIRE(
        run_fastsim("run " + kTinyNode + " -p 'run.phases=[weight_gradient, backward_data]' --out " + dir.path("bwd"))
            .exit_code == 0);
    const std::string all = slurp(dir.path("all/layers.csv")), fwd = slurp(dir.path("fwd/layers.csv")),
                      bwd = slurp(dir.path("bwd/layers.csv"));
    // The forward rows are the full step's, and the two subsets together are the full step.
    std::istringstream rows(all);
    std::string line, forward_rows, backward_rows;
    std::getline(rows, line);
    while (std::getline(rows, line))
        (line.find(",\"forward\",") != std::string::npos ? forward_rows : backward_rows) += line + "\n";
    CHECK(fwd.substr(fwd.find('\n') + 1) == forward_rows);
    CHECK(bwd.substr(bwd.find('\n') + 1) == backward_rows);
    const double total = json_number(slurp(dir.path("all/report.json")), "total_cycles");
    CHECK(json_number(slurp(dir.path("fwd/report.json")), "total_cycles") +
              json_number(slurp(dir.path("bwd/report.json")), "total_cycles") ==
          total);
    Result r = run_fastsim("run " + kTinyNode + " -p 'run.phases=[]'");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("run.phases: expected at least one value"));
    r = run_fastsim("run " + kTinyNode + " -p 'run.phases=[forward, forward]'");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("run.phases: 'forward' is listed twice"));
    r = run_fastsim("run " + kTinyNode + " -p 'run.phases=[backwards]'");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("run.phases"));
    r = run_fastsim("run " + kTinyCluster + " -p 'run.phases=[forward]'");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("run.mode cluster simulates whole training steps"));
}

TEST_CASE("vector-unit layers: stepped = memo, and cycles by hand from their operations",
          "[cli][node][fidelity][vector]") {
    fastsim::test::TempDir dir;
    const std::string trace = std::string(FASTSIM_SOURCE_DIR) + "/tests/data/every_vector_layer.yaml";
    // The tiny node's 2 KiB mantissa bank cuts the larger tensors into many chunks.
    const std::string with_trace = kTinyNode + " -p workload.trace=" + trace + " -p 'precision.layers=[]'";
    REQUIRE(run_fastsim("run " + with_trace + " -p run.optimizer=adam --out " + dir.path("memo")).exit_code == 0);
    REQUIRE(run_fastsim("run " + with_trace + " -p run.optimizer=adam --fidelity stepped --out " + dir.path("stepped"))
                .exit_code == 0);
    CHECK(slurp(dir.path("memo/layers.csv")) == slurp(dir.path("stepped/layers.csv")));
    const fastsim::CsvTable chunked = fastsim::read_csv_file(dir.path("memo/layers.csv"));
    CHECK(layer_cell(chunked, "relu1", "forward", "tiles") > 4);

    // With banks that hold every tensor, each phase is one chunk: 4 + ceil(ops / 8) cycles on 8 lanes.
    REQUIRE(run_fastsim("run " + with_trace +
                        " -p node.vector.lanes=8 -p node.sram.mantissa_bank.capacity_kib=4096 "
                        "-p node.sram.exponent_bank.capacity_kib=1024 --out " +
                        dir.path("one"))
                .exit_code == 0);
    const fastsim::CsvTable csv = fastsim::read_csv_file(dir.path("one/layers.csv"));
    const auto cell = [&csv](const char* layer, const char* phase, const char* column) {
        return layer_cell(csv, layer, phase, column);
    };
    constexpr std::uint64_t batch = 3;
    const std::pair<const char*, std::uint64_t> forward_ops[] = {
        {"bn1", 7 * 4096 * batch + 4 * 16},  // 7 per value, 4 per channel
        {"relu1", 4096 * batch},
        {"pool1", 9 * 1024 * batch},  // 3x3 windows over 8 x 8 x 16 outputs
        {"add1", 1024 * batch},
        {"cat", 1536 * batch},
        {"gap", 64 * 24 * batch},
        {"gelu1", 9 * 32 * batch},
        {"ln1", (7 * 32 + 4) * batch},
        {"sm", (5 * 10 + 1) * batch},
    };
    for (const auto& [layer, ops] : forward_ops) {
        INFO(layer);
        CHECK(cell(layer, "forward", "vector_ops") == ops);
        CHECK(cell(layer, "forward", "tiles") == 1);
        CHECK(cell(layer, "forward", "vector_cycles") == 4 + (ops + 7) / 8);
        CHECK(cell(layer, "forward", "macs") == 0);
        CHECK(cell(layer, "forward", "array_cycles") == 0);
        const std::uint64_t backward = cell(layer, "backward_data", "vector_ops");
        CHECK(cell(layer, "backward_data", "vector_cycles") == (backward == 0 ? 0 : 4 + (backward + 7) / 8));
    }
    CHECK(cell("bn1", "backward_data", "vector_ops") == 9 * 4096 * batch + 4 * 16);
    CHECK(cell("pool1", "backward_data", "vector_ops") == 18 * 1024 * batch);
    CHECK(cell("add1", "backward_data", "vector_ops") == 0);
    CHECK(cell("add1", "backward_data", "cycles") == 0);

    // Adam's update of fc2 (320 weights): 14 operations per weight; it reads the fp32 gradient,
    // master weights, m and v, and writes the last three in fp32 and the weights in BFP at 4 bits
    // (20 groups of 16 x 2 chunks x 3 bits + an 8-bit exponent, in two groupings).
    REQUIRE(run_fastsim("run " + with_trace +
                        " -p node.vector.lanes=8 -p node.sram.mantissa_bank.capacity_kib=4096 "
                        "-p node.sram.exponent_bank.capacity_kib=1024 -p run.optimizer=adam --out " +
                        dir.path("adam"))
                .exit_code == 0);
    const fastsim::CsvTable adam = fastsim::read_csv_file(dir.path("adam/layers.csv"));
    CHECK(layer_cell(adam, "fc2", "weight_update", "vector_ops") == 14 * 320);
    CHECK(layer_cell(adam, "fc2", "weight_update", "vector_cycles") == 4 + 14 * 320 / 8);
    CHECK(layer_cell(adam, "fc2", "weight_update", "dram_read_bits") == 4 * 32 * 320);
    CHECK(layer_cell(adam, "fc2", "weight_update", "dram_write_bits") == 3 * 32 * 320 + 2 * 20 * (16 * 2 * 3 + 8));
    CHECK(layer_cell(adam, "conv1", "weight_update", "vector_ops") == 14 * 3 * 3 * 3 * 16);
    // Every other row is the run without an optimiser's.
    const std::string without = slurp(dir.path("one/layers.csv")), with = slurp(dir.path("adam/layers.csv"));
    std::istringstream rows(with);
    std::string line, kept;
    while (std::getline(rows, line))
        if (line.find(",\"weight_update\",") == std::string::npos) kept += line + "\n";
    CHECK(kept == without);

    // A cluster run costs every layer: nothing is left out, and its nodes' vector units work.
    const Result cluster =
        run_fastsim("run " + kTinyCluster + " -p workload.trace=" + trace + " --out " + dir.path("cluster"));
    CHECK(cluster.exit_code == 0);
    CHECK(cluster.err.find("left out") == std::string::npos);
    const fastsim::JsonValue cluster_report =
        fastsim::parse_json(slurp(dir.path("cluster/report.json")), dir.path("cluster/report.json"));
    const fastsim::JsonValue* energy = cluster_report.find("energy_pj");
    REQUIRE(energy != nullptr);
    REQUIRE(energy->find("vector") != nullptr);
    CHECK(energy->find("vector")->as_number() > 0);
}

TEST_CASE("node.fusion: stepped = memo, the streamed tensors leave DRAM, and dram_saved_bits adds up",
          "[cli][node][vector][fusion]") {
    fastsim::test::TempDir dir;
    const std::string trace = std::string(FASTSIM_SOURCE_DIR) + "/tests/data/every_vector_layer.yaml";
    const std::string with_trace = kTinyNode + " -p workload.trace=" + trace + " -p 'precision.layers=[]'";
    REQUIRE(run_fastsim("run " + with_trace + " --out " + dir.path("off")).exit_code == 0);
    REQUIRE(run_fastsim("run " + with_trace + " -p node.fusion=on --out " + dir.path("on")).exit_code == 0);
    REQUIRE(run_fastsim("run " + with_trace + " -p node.fusion=on --fidelity stepped --out " + dir.path("stepped"))
                .exit_code == 0);
    CHECK(slurp(dir.path("on/layers.csv")) == slurp(dir.path("stepped/layers.csv")));
    const fastsim::CsvTable off = fastsim::read_csv_file(dir.path("off/layers.csv"));
    const fastsim::CsvTable on = fastsim::read_csv_file(dir.path("on/layers.csv"));
    const auto cell = [](const fastsim::CsvTable& csv, const char* layer, const char* column,
                         const char* phase = "forward") { return layer_cell(csv, layer, phase, column); };
    // relu1 runs in bn1's pass: bn1 converts and writes nothing, relu1 reads nothing.
    CHECK(cell(on, "bn1", "dram_write_bits") == 0);
    CHECK(cell(on, "bn1", "converter_cycles") == 0);
    CHECK(cell(on, "bn1", "dram_saved_bits") == cell(off, "bn1", "dram_write_bits"));
    CHECK(cell(on, "relu1", "dram_read_bits") == 0);
    CHECK(cell(on, "relu1", "dram_saved_bits") == cell(off, "relu1", "dram_read_bits"));
    // add1 streams conv2's output (the layer before it) and loads pool1's: half its reads.
    CHECK(cell(on, "conv2", "dram_write_bits") == 0);
    CHECK(cell(on, "conv2", "dram_saved_bits") == cell(off, "conv2", "dram_write_bits"));
    CHECK(cell(on, "add1", "dram_read_bits") * 2 == cell(off, "add1", "dram_read_bits"));
    CHECK(cell(on, "add1", "dram_write_bits") == cell(off, "add1", "dram_write_bits"));  // cat reads it
    // gelu1 streams fc1's output, which fc1 still writes: GELU's backward reads its input.
    CHECK(cell(on, "fc1", "dram_saved_bits") == 0);
    CHECK(cell(on, "gelu1", "dram_read_bits") == 0);
    CHECK(cell(on, "gelu1", "dram_saved_bits") == cell(off, "gelu1", "dram_read_bits"));
    // Every other phase is unchanged, and the savings are exactly the runs' DRAM difference.
    std::uint64_t saved = 0, dram_off = 0, dram_on = 0;
    for (std::size_t i = 0; i < on.rows.size(); ++i) {
        const auto value = [](const fastsim::CsvTable& t, std::size_t row, const char* column) {
            return std::stoull(t.rows[row][*t.column(column)]);
        };
        saved += value(on, i, "dram_saved_bits");
        dram_off += value(off, i, "dram_read_bits") + value(off, i, "dram_write_bits");
        dram_on += value(on, i, "dram_read_bits") + value(on, i, "dram_write_bits");
        if (value(on, i, "dram_saved_bits") == 0) {
            INFO(on.rows[i][0] << " " << on.rows[i][1]);
            CHECK(value(on, i, "cycles") == value(off, i, "cycles"));
            CHECK(value(on, i, "dram_read_bits") == value(off, i, "dram_read_bits"));
        }
    }
    CHECK(saved > 0);
    CHECK(dram_off - dram_on == saved);
    CHECK(cell(off, "relu1", "dram_saved_bits") == 0);
}

TEST_CASE("output that cannot be written is exit 2, never a silent success", "[cli]") {
    // /dev/full: every write fails with ENOSPC, as on a full disk.
    fastsim::test::TempDir dir;
    for (const std::string& args : {"quantize -g 2 -m 4 " + dir.write("v.txt", "1 2 3 4\n"), std::string("--help"),
                                    "validate " + kBfpReportConfig + " --dump-config"}) {
        CAPTURE(args);
        const std::string command = "env -u SC_COPYRIGHT_MESSAGE " + std::string(FASTSIM_BINARY) + " " + args +
                                    " </dev/null >/dev/full 2>" + dir.path("err");
        const int status = std::system(command.c_str());
        REQUIRE(WIFEXITED(status));
        CHECK(WEXITSTATUS(status) == 2);
        CHECK_THAT(fastsim::test::slurp(dir.path("err")), Contains("could not write to standard output"));
    }
    // A pipe whose reader has gone (`fastsim … | head -0`): EPIPE, not a death by SIGPIPE.
    int ends[2];
    REQUIRE(::pipe(ends) == 0);
    ::close(ends[0]);  // no reader, before fastsim writes anything
    const pid_t pid = ::fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        ::dup2(ends[1], STDOUT_FILENO);
        const int err = ::open(dir.path("err").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        ::dup2(err, STDERR_FILENO);
        ::execl(FASTSIM_BINARY, "fastsim", "validate", kBfpReportConfig.c_str(), "--dump-config",
                static_cast<char*>(nullptr));
        ::_exit(127);
    }
    ::close(ends[1]);
    int status = 0;
    REQUIRE(::waitpid(pid, &status, 0) == pid);
    REQUIRE(WIFEXITED(status));
    CHECK(WEXITSTATUS(status) == 2);
    CHECK_THAT(fastsim::test::slurp(dir.path("err")), Contains("could not write to standard output"));
}

TEST_CASE("A cluster run's area is every node's, each node type's as a node run of that node gives it", "[cli][area]") {
    fastsim::test::TempDir dir;
    const std::string cluster = std::string(FASTSIM_SOURCE_DIR) + "/configs/tests/tiny_cluster.yaml";
    // Two `small` nodes (tiny_node's node) and one `big` (two 8 x 8 arrays, each with 4 + 16 KiB).
    const Result r = run_fastsim("run " + cluster + " -p cluster.groups.0.count=2 --out " + dir.path("c"));
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Contains(" mm2 at 45 nm over 3 nodes = array "));
    const Result small = run_fastsim("run " + kTinyNode + " --out " + dir.path("small"));
    const Result big =
        run_fastsim("run " + kTinyNode +
                    " -p node.array.rows=8 -p node.array.cols=8 -p node.sram.exponent_bank.capacity_kib=4"
                    " -p node.sram.mantissa_bank.capacity_kib=16 --out " +
                    dir.path("big"));
    REQUIRE(small.exit_code == 0);
    REQUIRE(big.exit_code == 0);
    const auto number = [](const fastsim::JsonValue& o, const char* key) {
        const fastsim::JsonValue* v = o.find(key);
        REQUIRE(v);
        REQUIRE(v->is_number());
        return v->as_number();
    };
    const fastsim::JsonValue report = fastsim::read_json_file(dir.path("c/report.json"));
    const fastsim::JsonValue summary = fastsim::read_json_file(dir.path("c/summary.json"));
    const fastsim::JsonValue small_report = fastsim::read_json_file(dir.path("small/report.json"));
    const fastsim::JsonValue big_report = fastsim::read_json_file(dir.path("big/report.json"));
    const double small_mm2 = number(small_report, "total_area_mm2"),
                 big_array_mm2 = number(big_report, "total_area_mm2");
    const fastsim::JsonValue* per_type = report.find("node_area_mm2");
    REQUIRE(per_type);
    CHECK(number(*per_type, "small") == Approx(small_mm2).epsilon(1e-7));
    CHECK(number(*per_type, "big") == Approx(2 * big_array_mm2).epsilon(1e-7));
    const double total = number(report, "total_area_mm2");
    CHECK(total == Approx(2 * small_mm2 + 2 * big_array_mm2).epsilon(1e-7));
    const fastsim::JsonValue* parts = report.find("area_mm2");
    REQUIRE(parts);
    for (const char* part : {"array", "converter", "vector", "sram"})
        CHECK(number(*parts, part) ==
              Approx(2 * number(*small_report.find("area_mm2"), part) + 2 * number(*big_report.find("area_mm2"), part))
                  .epsilon(1e-7));
    CHECK(number(summary, "area_mm2") == Approx(total));
    CHECK(number(summary, "nodes") == 3);
    // Power and efficiency over the simulated step and every node's MACs, links' energy included.
    const double joules = number(*report.find("energy_pj"), "total") * 1e-12;
    const double seconds = number(report, "simulated_step_s");
    CHECK(number(report, "power_w") == Approx(joules / seconds));
    CHECK(number(summary, "power_w") == Approx(joules / seconds));
    CHECK(number(summary, "tops_per_mm2") == Approx(2 * number(summary, "macs") * 1e-12 / seconds / total));
    CHECK(number(report, "edp_js") == Approx(joules * seconds));

    // Without an area section the cluster's area is unknown, not 0.
    run_without_area(dir, cluster);
    CHECK_FALSE(fastsim::read_json_file(dir.path("u/report.json")).find("total_area_mm2")->is_number());
    CHECK_FALSE(fastsim::read_json_file(dir.path("u/summary.json")).find("area_mm2"));
}
