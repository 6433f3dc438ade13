// SPDX-License-Identifier: MIT
// The BFP error report's numbers against quantisation theory: uniform rounding error gives
// 6.02 dB of SQNR per mantissa bit, and stochastic rounding's error variance (E f(1-f) =
// 1/6 LSB^2) is twice round-to-nearest's (1/12 LSB^2): 3.01 dB less.
#include <catch2/catch.hpp>

#include <map>

#include "config/load.h"
#include "run/bfp_error_report.h"

using namespace fastsim;

TEST_CASE("BFP error report follows 6.02 dB per bit and SR costs 3 dB", "[report]") {
    const config::Params p = config::load(std::string(FASTSIM_SOURCE_DIR) + "/configs/bfp_error_report.yaml",
                                          {"bfp_report.mantissa_bits=[4, 6, 8]"});
    const auto rows = run::bfp_error_report(p);
    REQUIRE(rows.size() == 3 * 3 * 2);
    std::map<std::tuple<std::string, int, bfp::Rounding>, double> sqnr;
    for (const auto& r : rows) sqnr[{r.tensor, r.mantissa_bits, r.rounding}] = r.stats.sqnr_db;
    for (const std::string tensor : {"weights", "activations", "gradients"}) {
        INFO(tensor);
        for (int m : {4, 6}) {
            CHECK(sqnr[{tensor, m + 2, bfp::Rounding::nearest}] - sqnr[{tensor, m, bfp::Rounding::nearest}] ==
                  Approx(12.04).margin(0.3));
        }
        for (int m : {4, 6, 8})
            CHECK(sqnr[{tensor, m, bfp::Rounding::nearest}] - sqnr[{tensor, m, bfp::Rounding::stochastic}] ==
                  Approx(3.01).margin(0.3));
    }
    // Heavy tails cost SQNR: a few large gradients set their groups' exponents.
    CHECK(sqnr[{"gradients", 8, bfp::Rounding::nearest}] < sqnr[{"weights", 8, bfp::Rounding::nearest}] - 2.0);
}

TEST_CASE("the report is reproducible from the seed", "[report]") {
    const std::string path = std::string(FASTSIM_SOURCE_DIR) + "/configs/bfp_error_report.yaml";
    const auto a = run::bfp_error_report(config::load(path, {"bfp_report.mantissa_bits=[2]"}));
    const auto b = run::bfp_error_report(config::load(path, {"bfp_report.mantissa_bits=[2]"}));
    const auto c = run::bfp_error_report(config::load(path, {"bfp_report.mantissa_bits=[2]", "run.seed=2"}));
    REQUIRE(a.size() == b.size());
    for (std::size_t i = 0; i < a.size(); ++i) CHECK(a[i].stats.sqnr_db == b[i].stats.sqnr_db);
    CHECK(a[1].stats.sqnr_db != c[1].stats.sqnr_db);
}
