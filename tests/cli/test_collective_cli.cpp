// SPDX-License-Identifier: MIT
// fastsim collective: collective.csv's columns, its times against the closed forms, best's
// per-dimension choice, and the errors for what cannot run.
#include <catch2/catch.hpp>

#include <cmath>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "support/fastsim_process.h"
#include "support/temp_dir.h"

using Catch::Contains;
using fastsim::test::Result;
using fastsim::test::run_fastsim;

namespace {

const std::string kReference = std::string(FASTSIM_SOURCE_DIR) + "/configs/collective/reference.yaml";

std::vector<std::vector<std::string>> read_csv(const std::string& path) {
    std::ifstream in(path);
    std::vector<std::vector<std::string>> rows;
    for (std::string line; std::getline(in, line);) {
        std::vector<std::string> cells;
        std::stringstream s(line);
        for (std::string cell; std::getline(s, cell, ',');) cells.push_back(cell);
        if (!line.empty() && line.back() == ',') cells.emplace_back();
        rows.push_back(cells);
    }
    return rows;
}

}  // namespace

TEST_CASE("collective writes collective.csv, its times on the closed forms of a switch", "[cli][collective]") {
    fastsim::test::TempDir dir;
    const Result r = run_fastsim("collective " + kReference +
                                 " --group 1 --ranks 16 --algorithm ring --algorithm halving_doubling --algorithm tree "
                                 "--algorithm direct --bytes 4096 --bytes 16777216 --out " +
                                 dir.path("out"));
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Contains("busbw_gb_per_s"));
    const auto rows = read_csv(dir.path("out") + "/collective.csv");
    REQUIRE(rows.size() == 1 + 4 * 2);
    CHECK(rows[0] == std::vector<std::string>{"op", "algorithm", "dimensions", "ranks", "bytes", "time_s",
                                              "closed_form_s", "algbw_gb_per_s", "busbw_gb_per_s", "planned_s"});
    // The first 16 nodes of a switch of 64: ring 2(p-1)(2L + n/(pB)), and the others' forms.
    const double L = 500e-9, B = 100e9, p = 16;
    for (std::size_t i = 1; i < rows.size(); ++i) {
        const auto& row = rows[i];
        CAPTURE(row[1], row[4]);
        CHECK(row[0] == "all_reduce");
        CHECK(row[2] == "16");
        CHECK(row[3] == "16");
        const double n = std::stod(row[4]), t = std::stod(row[5]);
        double form = 0;
        if (row[1] == "ring") form = 2 * (p - 1) * (2 * L + n / (p * B));
        if (row[1] == "halving_doubling") form = 4 * L * std::log2(p) + 2 * (p - 1) / p * n / B;
        if (row[1] == "tree") form = 2 * std::log2(p) * (2 * L + n / B);
        if (row[1] == "direct") form = 2 * (2 * L + (p - 1) / p * n / B);
        CHECK(t == Approx(form).epsilon(0.01));
        CHECK(std::stod(row[6]) == Approx(form).epsilon(1e-6));
        CHECK(std::stod(row[7]) == Approx(n / t / 1e9).epsilon(1e-6));
        CHECK(std::stod(row[8]) == Approx(n / t / 1e9 * 2 * (p - 1) / p).epsilon(1e-6));
        // The planner's alpha-beta line, fitted at two sizes, is exact where the time is affine.
        CHECK(std::stod(row[9]) == Approx(form).epsilon(0.01));
    }
}

TEST_CASE("collective: best on a two-dimensional group names its choice per dimension", "[cli][collective]") {
    fastsim::test::TempDir dir;
    const Result r = run_fastsim("collective " + kReference +
                                 " --group 4 --op all_reduce --op reduce_scatter --op all_to_all --algorithm best "
                                 "--algorithm ring --bytes 1048576 --out " +
                                 dir.path("out"));
    REQUIRE(r.exit_code == 0);
    const auto rows = read_csv(dir.path("out") + "/collective.csv");
    REQUIRE(rows.size() == 1 + 3 * 2);
    for (std::size_t i = 1; i < rows.size(); i += 2) {
        const auto &best = rows[i], &ring = rows[i + 1];
        CAPTURE(best[0], best[1]);
        CHECK(best[1].rfind("best:", 0) == 0);
        CHECK(best[2] == "8x4");
        CHECK(best[3] == "32");
        CHECK(ring[1] == "ring");
        CHECK(std::stod(best[5]) <= 1.01 * std::stod(ring[5]));  // never slower than ring
    }
}

TEST_CASE("collective refuses what cannot run, naming it", "[cli][collective]") {
    const auto err = [](const std::string& args) {
        const Result r = run_fastsim("collective " + kReference + " " + args);
        CHECK(r.exit_code == 2);
        return r.err;
    };
    CHECK_THAT(err("--op broadcast"), Contains("--op: expected one of all_reduce, reduce_scatter"));
    CHECK_THAT(err("--algorithm ring/fast"), Contains("--algorithm: expected best"));
    CHECK_THAT(err("--group 1 --op reduce_scatter --algorithm tree --bytes 64"),
               Contains("reduce_scatter needs an algorithm that splits the buffer"));
    CHECK_THAT(err("--group 4 --algorithm ring/direct/tree"), Contains("3 algorithms (one per dimension)"));
    CHECK_THAT(err("--ranks 1"), Contains("--ranks") && Contains("from 2"));
    CHECK_THAT(err("--group 9"), Contains("--group"));
    CHECK_THAT(err("--bytes 0"), Contains("--bytes") && Contains("from 1"));
    CHECK_THAT(err("--group 3 --algorithm direct --max-work 0.001"), Contains("--max-work"));
    fastsim::test::TempDir dir;
    const std::string none = dir.write("none.yaml", "workload: {}\n");
    const Result r = run_fastsim("collective " + none);
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("none.yaml") && Contains("expected a cluster: section"));
}

TEST_CASE("plan and run list the same all-reduce choices per dimension", "[cli][collective]") {
    fastsim::test::TempDir dir;
    const std::string config = std::string(FASTSIM_SOURCE_DIR) + "/configs/cluster/fast_32node_2d.yaml";
    REQUIRE(run_fastsim("plan " + config + " --out " + dir.path("plan")).exit_code == 0);
    REQUIRE(run_fastsim("run " + config + " --out " + dir.path("run")).exit_code == 0);
    const auto line_of = [](const std::string& path) {
        std::ifstream in(path);
        for (std::string line; std::getline(in, line);)
            if (line.find("\"all_reduces\"") != std::string::npos) return line;
        return std::string();
    };
    const std::string planned = line_of(dir.path("plan") + "/plan.json");
    CHECK_THAT(planned, Contains("\"dimensions\": \"8x4\"") && Contains("\"ranks\": 32"));
    CHECK(planned == line_of(dir.path("run") + "/plan.json"));
    const std::string reported = line_of(dir.path("run") + "/report.json");  // there followed by a comma
    CHECK(reported.substr(reported.find('['), planned.size() - planned.find('[')) == planned.substr(planned.find('[')));
}
