// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include "common/errors.h"
#include "config/load.h"
#include "support/temp_dir.h"

using namespace fastsim;
using Catch::Matchers::Contains;

namespace {

std::string bfp_report_config() { return std::string(FASTSIM_SOURCE_DIR) + "/configs/bfp_error_report.yaml"; }

/// The message of the ConfigError that loading `yaml` (with overrides) throws.
std::string error_of(const std::string& yaml, const std::vector<std::string>& overrides = {}) {
    test::TempDir dir;
    const std::string file = dir.write("bad.yaml", yaml);
    try {
        config::load(file, overrides);
    } catch (const ConfigError& e) {
        const std::string what = e.what();
        return what.substr(what.find("bad.yaml"));
    }
    FAIL("no ConfigError for:\n" << yaml);
    return {};
}

}  // namespace

TEST_CASE("the BFP error report config resolves to the documented values", "[config]") {
    const config::Params p = config::load(bfp_report_config());
    CHECK(p.run.mode == config::RunMode::bfp_report);
    CHECK(p.run.seed == 1);
    CHECK(p.bfp.group_size == 16);
    CHECK(p.bfp.noise_bits == 8);
    CHECK(p.bfp_report.mantissa_bits == std::vector<int>{2, 4, 6, 8});
    REQUIRE(p.bfp_report.tensors.size() == 3);
    CHECK(p.bfp_report.tensors[2].name == "gradients");
    CHECK(p.bfp_report.tensors[2].distribution == config::Distribution::student_t);
    CHECK(p.bfp_report.tensors[2].scale == 1.0e-4);
}

TEST_CASE("an empty config takes every default", "[config]") {
    test::TempDir dir;
    const config::Params p = config::load(dir.write("empty.yaml", ""));
    CHECK(p.bfp.exponent_bits == 8);
    CHECK(p.bfp.overflow == bfp::Overflow::nan);
    CHECK(p.bfp_report.tensors.size() == 3);
    CHECK(p.bfp_report.roundings.size() == 2);
}

TEST_CASE("unknown keys are errors with file, line, column and key path", "[config]") {
    CHECK(error_of("bfp:\n  grup_size: 8\n") ==
          "bad.yaml:2:3: bfp.grup_size: unknown key 'grup_size' in bfp (expected one of: exponent_bias, exponent_bits, "
          "group_size, lfsr_bits, noise_bits, overflow)");
    CHECK_THAT(error_of("bfp_report:\n  tensors:\n    - name: w\n      stddev: 1\n"),
               Contains("bad.yaml:4:7: bfp_report.tensors[0].stddev: unknown key 'stddev'"));
    CHECK_THAT(error_of("nodes: 4\n"), Contains("bad.yaml:1:1: nodes: unknown key 'nodes'"));
}

TEST_CASE("wrong types are errors naming what was expected", "[config]") {
    CHECK(error_of("bfp:\n  group_size: abc\n") == "bad.yaml:2:15: bfp.group_size: expected an integer, got 'abc'");
    CHECK(error_of("bfp:\n  group_size: 1.5\n") == "bad.yaml:2:15: bfp.group_size: expected an integer, got '1.5'");
    CHECK_THAT(error_of("bfp: [1, 2]\n"), Contains("bad.yaml:1:6: bfp: expected a map of keys, got a list"));
    CHECK_THAT(error_of("bfp:\n  overflow: clamp\n"),
               Contains("bad.yaml:2:13: bfp.overflow: expected one of nan, saturate, got 'clamp'"));
    CHECK_THAT(error_of("bfp:\n  group_size: [1]\n"), Contains("bfp.group_size: expected an integer, got a list"));
}

TEST_CASE("out-of-range values are errors at the offending entry", "[config]") {
    CHECK_THAT(error_of("bfp_report:\n  mantissa_bits: [2, 17]\n"),
               Contains("bad.yaml:2:22: bfp_report.mantissa_bits[1]: expected a value from 2 to 16 bits, got 17"));
    CHECK(error_of("bfp:\n  exponent_bits: 9\n") ==
          "bad.yaml:2:18: bfp.exponent_bits: expected a value from 2 to 8 bits, got 9");
    CHECK_THAT(error_of("bfp:\n  lfsr_bits: 12\n  noise_bits: 6\n"),
               Contains("bad.yaml:3:15: bfp.noise_bits: noise_bits 6 shares a factor"));
    CHECK_THAT(error_of("bfp_report:\n  tensors:\n    - {distribution: normal, dof: 4}\n"),
               Contains("bfp_report.tensors[0].dof: dof applies only to distribution student_t"));
    CHECK_THAT(error_of("bfp_report:\n  tensors: []\n"), Contains("bfp_report.tensors: expected at least one tensor"));
    CHECK_THAT(error_of("run:\n  mode: nonsense\n"),
               Contains("run.mode: expected one of bfp_report, training_step, cluster, got 'nonsense'"));
}

TEST_CASE("a bias is checked against every mantissa width in use, default ones too", "[config]") {
    // bias -16 with e = 8: the smallest LSB at the default widths (up to 8) is 2^-150.
    CHECK_THAT(error_of("bfp:\n  exponent_bias: -16\n"),
               Contains("bad.yaml:2:18: bfp.exponent_bias: exponent_bias -16 puts the smallest LSB at 2^-150"));
    // Given widths are checked where they stand: bias -12, m = 16 -> LSB 2^(-139-15).
    CHECK_THAT(
        error_of("bfp:\n  exponent_bias: -12\nbfp_report:\n  mantissa_bits: [2, 16]\n"),
        Contains("bad.yaml:4:22: bfp_report.mantissa_bits[1]: exponent_bias -12 puts the smallest LSB at 2^-154"));
}

TEST_CASE("an empty tensors key means the default tensors", "[config]") {
    test::TempDir dir;
    const config::Params p = config::load(dir.write("t.yaml", "bfp_report:\n  tensors:\n"));
    CHECK(p.bfp_report.tensors.size() == 3);
}

TEST_CASE("seeds take the full unsigned 64-bit range and nothing else", "[config]") {
    test::TempDir dir;
    CHECK(config::load(dir.write("s.yaml", "run:\n  seed: 18446744073709551615\n")).run.seed ==
          18446744073709551615ull);
    CHECK_THAT(error_of("run:\n  seed: 18446744073709551616\n"), Contains("run.seed: expected a non-negative integer"));
    CHECK_THAT(error_of("run:\n  seed: -1\n"),
               Contains("bad.yaml:2:9: run.seed: expected a non-negative integer, got '-1'"));
}

TEST_CASE("missing files and YAML syntax errors are reported with the path", "[config]") {
    CHECK_THROWS_WITH(config::load("/nonexistent/fastsim.yaml"),
                      Contains("/nonexistent/fastsim.yaml: cannot open config file: No such file or directory"));
    CHECK_THAT(error_of("bfp:\n  group_size: [1, 2\n"), Contains("bad.yaml:3:1: invalid YAML"));
}

TEST_CASE("overrides (-p) set, add and index keys, and their errors say so", "[config]") {
    const config::Params p = config::load(bfp_report_config(), {"bfp.group_size=32", "bfp_report.mantissa_bits=[4]",
                                                                "bfp_report.tensors.1.scale=0.5", "run.seed=7"});
    CHECK(p.bfp.group_size == 32);
    CHECK(p.bfp_report.mantissa_bits == std::vector<int>{4});
    CHECK(p.bfp_report.tensors[1].scale == 0.5);
    CHECK(p.run.seed == 7);
    CHECK_THROWS_WITH(config::load(bfp_report_config(), {"bfp.grup_size=3"}),
                      Contains("-p bfp.grup_size: bfp.grup_size: unknown key"));
    CHECK_THROWS_WITH(config::load(bfp_report_config(), {"bfp.group_size=x"}),
                      Contains("-p bfp.group_size: bfp.group_size: expected an integer"));
    CHECK_THROWS_WITH(config::load(bfp_report_config(), {"run.seed.x=1"}), Contains("'run.seed' is a single value"));
    CHECK_THROWS_WITH(config::load(bfp_report_config(), {"nosuch.key=1"}),
                      Contains("-p nosuch.key: nosuch: unknown key 'nosuch'"));
    CHECK_THROWS_WITH(config::load(bfp_report_config(), {"bfp_report.tensors.9.scale=1"}),
                      Contains("is a list of 3 entries"));
    CHECK_THROWS_WITH(config::load(bfp_report_config(), {"bfp.group_size"}), Contains("expected key.path=value"));
}

TEST_CASE("the dumped config loads back to the same config", "[config]") {
    const config::Params p = config::load(bfp_report_config(), {"bfp.exponent_bits=4", "bfp.exponent_bias=-10"});
    const std::string text = config::dump(p);
    test::TempDir dir;
    const config::Params again = config::load(dir.write("dumped.yaml", text));
    CHECK(config::dump(again) == text);
    CHECK(again.bfp.exponent_bias == -10);
    CHECK(again.bfp_report.tensors[2].dof == 3.0);
}
