// SPDX-License-Identifier: MIT
// `fastsim train` as a user runs it: progress lines, output files, errors.
#include <catch2/catch.hpp>

#include <filesystem>
#include <sstream>

#include "support/fastsim_process.h"
#include "support/temp_dir.h"

using Catch::Matchers::Contains;
using fastsim::test::Result;
using fastsim::test::run_fastsim;
using fastsim::test::slurp;

namespace {

const std::string kSliceConfig = std::string(FASTSIM_SOURCE_DIR) + "/tests/data/train/mlp_slice.yaml";

std::size_t count_lines(const std::string& text) {
    std::size_t n = 0;
    for (char c : text) n += c == '\n';
    return n;
}

}  // namespace

TEST_CASE("train prints a line per epoch and writes the CSVs and plots", "[cli][training]") {
    fastsim::test::TempDir dir;
    const std::string out = dir.path("run");
    const Result r = run_fastsim("train " + kSliceConfig + " --out " + out);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    for (const char* policy : {"fp32", "bfp_m8", "fast"})
        for (int epoch : {1, 2})
            CHECK_THAT(r.out, Contains("[" + std::string(policy) + "] epoch " + std::to_string(epoch) + "/2  loss"));
    CHECK_THAT(r.out, Contains("fc1 w8 a8 g8 | fc2 w8 a8 g8 | fc3 w8 a8 g8  cycles"));
    CHECK_THAT(r.out, Contains("n/a (fp32)"));
    CHECK_THAT(r.out, Contains("FAST against each fixed policy") && Contains("  bfp_m8: cycles "));

    // 512 samples / batch 32 = 16 iterations per epoch, 2 epochs; fp32 has no precision rows.
    const std::string log = slurp(out + "/precision_log.csv");
    CHECK_THAT(
        log,
        Contains("policy,iteration,epoch,fc1.weights_bits,fc1.activations_bits,fc1.gradients_bits,fc2.weights_bits"));
    CHECK(count_lines(log) == 1 + 2 * 32);
    CHECK_THAT(log, Contains("\nfast,0,1,2,2,2,2,2,2,2,2,2\n"));  // FAST starts every tensor at 2 bits
    CHECK_THAT(log, Contains("\nbfp_m8,31,2,8,8,8,8,8,8,8,8,8\n"));
    const std::string accuracy = slurp(out + "/accuracy.csv");
    CHECK(count_lines(accuracy) == 1 + 3 * 2);
    const std::string cost = slurp(out + "/cost.csv");
    CHECK(count_lines(cost) == 1 + 2 * 2);
    const std::string checks = slurp(out + "/schedule_checks.csv");
    CHECK_THAT(checks, Contains("policy,iteration,layer,tensor,bits,r,threshold,raised\nfast,0,fc1,"));
    const std::string comparison = slurp(out + "/comparison.csv");
    CHECK_THAT(comparison, Contains("policy,final_test_accuracy,total_cycles,total_energy_uj,fast_speedup_cycles"));
    // FAST's widths are at most 8 in every iteration, so bfp_m8 costs at least as many cycles.
    std::istringstream rows(comparison);
    std::string line;
    bool found = false;
    while (std::getline(rows, line))
        if (line.rfind("bfp_m8,", 0) == 0) {
            found = true;
            std::vector<std::string> fields;
            std::stringstream fs(line);
            for (std::string f; std::getline(fs, f, ',');) fields.push_back(f);
            REQUIRE(fields.size() >= 5);
            CHECK(std::stod(fields[4]) > 1.0);
        }
    CHECK(found);
    for (const char* plot : {"accuracy", "accuracy_vs_cycles", "cycles_per_epoch", "precision_fast"})
        CHECK_THAT(slurp(out + "/plots/" + plot + ".svg"), Contains("<svg xmlns=\"http://www.w3.org/2000/svg\""));
}

TEST_CASE("train refuses bad input with exit status 2 and a message naming it", "[cli][training]") {
    fastsim::test::TempDir dir;
    Result r = run_fastsim("train " + kSliceConfig + " -p data.dir=" + dir.path("nowhere"));
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains(dir.path("nowhere") + "/train-images-idx3-ubyte.gz: no such file") &&
                          Contains("data.dir in " + kSliceConfig));
    r = run_fastsim("train " + kSliceConfig + " -p train.epochz=3");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("train.epochz"));
    r = run_fastsim("train " + kSliceConfig + " --policy msfp12");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("--policy msfp12: not in the policies list of " + kSliceConfig));
    r = run_fastsim("train");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("missing CONFIG"));
    // A delayed update as long as the run (512 samples in 32s, 2 epochs: 32 iterations).
    r = run_fastsim("train " + kSliceConfig + " -p train.gradient_sync.staleness=32");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains(kSliceConfig + ": train.gradient_sync.staleness 32 is not less than the run's 32 "
                                              "iterations, so no gradient would ever be applied"));
    r = run_fastsim("train " + kSliceConfig + " -p train.gradient_sync.staleness=5 -p train.max_iterations=5");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("staleness 5 is not less than the run's 5 iterations"));
}

TEST_CASE("train --policy runs only the named policies", "[cli][training]") {
    const Result r = run_fastsim("train " + kSliceConfig + " --policy fast -p train.epochs=1");
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Contains("[fast] epoch 1/1"));
    CHECK(r.out.find("[fp32]") == std::string::npos);
    CHECK(r.out.find("FAST against") == std::string::npos);  // no fixed policy ran
}

TEST_CASE("train --out writes each policy's whole run as a run config that costs it as train did", "[cli][training]") {
    // 512 samples / batch 32: 16 full batches an epoch, 2 epochs, so every step has the batch.
    fastsim::test::TempDir dir;
    const std::string out = dir.path("run");
    const Result trained = run_fastsim("train " + kSliceConfig + " --policy bfp_m8 --policy fast --out " + out);
    INFO(trained.err);
    REQUIRE(trained.exit_code == 0);
    CHECK_THAT(trained.out, Contains("whole_run_bfp_m8.yaml whole_run_fast.yaml"));
    CHECK_THAT(slurp(out + "/trace.yaml"), Contains("{name: fc1, type: fc, in_features: 784, out_features: 256}"));
    // `fastsim run` of whole_run_<policy>.yaml reports the cycles and energy comparison.csv has.
    const std::string comparison = slurp(out + "/comparison.csv");
    for (const std::string policy : {"bfp_m8", "fast"}) {
        const std::size_t row = comparison.find("\n" + policy + ",");
        REQUIRE(row != std::string::npos);
        std::vector<std::string> fields;
        std::stringstream line(comparison.substr(row + 1, comparison.find('\n', row + 1) - row - 1));
        for (std::string f; std::getline(line, f, ',');) fields.push_back(f);
        REQUIRE(fields.size() >= 4);
        const Result run = run_fastsim("run " + out + "/whole_run_" + policy + ".yaml");
        INFO(run.err);
        REQUIRE(run.exit_code == 0);
        CHECK_THAT(run.out, Contains("32 steps (workload.steps)"));
        CHECK_THAT(run.out, Contains("run total: " + fields[2] + " cycles"));
        const std::size_t joules = run.out.find(" s at 1000 MHz), ");
        REQUIRE(joules != std::string::npos);
        CHECK(std::stod(run.out.substr(joules + 17)) * 1e6 == Approx(std::stod(fields[3])).epsilon(1e-8));
    }
    // A policy's config reads its own rows of the shared log: fast's widths change, bfp_m8's do not.
    CHECK_THAT(run_fastsim("run " + out + "/whole_run_bfp_m8.yaml").out, Contains("in 1 precision segment,"));
    CHECK(run_fastsim("run " + out + "/whole_run_fast.yaml").out.find("in 1 precision segment,") == std::string::npos);
    // As the base of an exploration: its whole run on other nodes.
    const std::string space =
        dir.write("space.yaml", "sweep:\n  name: whole\n  base: " + out +
                                    "/whole_run_fast.yaml\naxes:\n  - {key: node.array.rows, values: [8, 16, 32]}\n"
                                    "explore:\n  objectives: [run_time_s, run_energy_j]\n");
    const Result explored = run_fastsim("explore " + space + " --out " + dir.path("explore"));
    INFO(explored.err);
    CHECK(explored.exit_code == 0);
    CHECK(count_lines(slurp(dir.path("explore/designs.csv"))) == 1 + 3);
}
