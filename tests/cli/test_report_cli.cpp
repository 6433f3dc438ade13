// SPDX-License-Identifier: MIT
// `fastsim report` as a user runs it: files written, exit codes and messages on bad input.
#include <catch2/catch.hpp>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <sys/wait.h>

#include "common/json_reader.h"
#include "support/fastsim_process.h"
#include "support/temp_dir.h"

using Catch::Matchers::Contains;

namespace {

using fastsim::test::Result;
using fastsim::test::run_fastsim;
using fastsim::test::slurp;

const std::string kNodeSweep = std::string(FASTSIM_SOURCE_DIR) + "/tests/data/sweeps/resnet18_array_precision";

}  // namespace

TEST_CASE("report writes report.html and plots/*.svg into a sweep directory", "[cli][report]") {
    fastsim::test::TempDir dir;
    const std::string sweep = dir.path("sweep");
    std::filesystem::copy(kNodeSweep, sweep, std::filesystem::copy_options::recursive);
    const Result r = run_fastsim("report " + sweep);
    REQUIRE(r.exit_code == 0);
    CHECK(r.err.empty());
    CHECK(r.out == "wrote " + sweep + "/report.html and 5 plots in " + sweep + "/plots\n");
    const std::string html = slurp(sweep + "/report.html");
    CHECK_THAT(html, Contains("<!DOCTYPE html>") && Contains("array_precision_resnet18"));
    for (const char* plot : {"cycles", "energy_uj", "utilisation_percent", "pj_per_mac", "energy_breakdown"}) {
        const std::string svg = slurp(sweep + "/plots/" + plot + ".svg");
        CHECK_THAT(svg, Contains("<svg xmlns=\"http://www.w3.org/2000/svg\""));
        CHECK_THAT(html, Contains(svg));
    }
    // --out and --plots-dir put the files elsewhere; the page is the same.
    const Result elsewhere =
        run_fastsim("report " + sweep + " --out " + dir.path("x/page.html") + " --plots-dir " + dir.path("x/svg"));
    REQUIRE(elsewhere.exit_code == 0);
    CHECK(slurp(dir.path("x/page.html")) == html);
    CHECK(std::filesystem::exists(dir.path("x/svg/cycles.svg")));
    // No temporary files are left behind.
    for (const auto& entry : std::filesystem::recursive_directory_iterator(sweep))
        CHECK(entry.path().filename().string().find(".tmp.") == std::string::npos);
}

TEST_CASE("report of a run --out directory shows the run's totals", "[cli][report][node]") {
    fastsim::test::TempDir dir;
    REQUIRE(
        run_fastsim("run " + std::string(FASTSIM_SOURCE_DIR) + "/configs/tests/tiny_node.yaml --out " + dir.path("run"))
            .exit_code == 0);
    const Result r = run_fastsim("report " + dir.path("run"));
    REQUIRE(r.exit_code == 0);
    const auto report = fastsim::read_json_file(dir.path("run/report.json"));
    const std::string html = slurp(dir.path("run/report.html"));
    CHECK_THAT(html,
               Contains("<td class=\"num\">" +
                        std::to_string(static_cast<long long>(report.find("total_cycles")->as_number())) + "</td>"));
    CHECK_THAT(html, Contains("tiny_cnn"));
    CHECK(std::filesystem::exists(dir.path("run/plots/energy_by_layer.svg")));
}

TEST_CASE("A layer name with quotes and commas is written and read back by report and diff", "[cli][report]") {
    fastsim::test::TempDir dir;
    const std::string trace =
        dir.write("t.yaml",
                  "network: t\nlayers:\n  - {name: 'say \"hi\", then\\go', type: conv, input: [6, 6, 3], "
                  "kernel: [3, 3], filters: 10, padding: 1}\n");
    REQUIRE(run_fastsim("run " + std::string(FASTSIM_SOURCE_DIR) + "/configs/tests/tiny_node.yaml -p workload.trace=" +
                        trace + " -p 'precision.layers=[]' --out " + dir.path("run"))
                .exit_code == 0);
    CHECK_THAT(slurp(dir.path("run/layers.csv")), Contains("\n\"say \"\"hi\"\", then\\go\",\"forward\","));
    const Result r = run_fastsim("report " + dir.path("run"));
    CHECK(r.exit_code == 0);
    CHECK_THAT(slurp(dir.path("run/report.html")), Contains("say &quot;hi&quot;, then\\go"));
    CHECK(run_fastsim("diff " + dir.path("run") + " " + dir.path("run")).exit_code == 0);
}

TEST_CASE("report bad input exits 2 naming the file and line", "[cli][report]") {
    fastsim::test::TempDir dir;
    Result r = run_fastsim("report");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("fastsim: error: missing DIR: fastsim report DIR"));
    r = run_fastsim("report " + dir.path("nowhere"));
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains(dir.path("nowhere") + ": not a directory"));
    r = run_fastsim("report " + dir.path(""));
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("neither a sweep directory"));
    const std::string sweep = dir.path("sweep");
    std::filesystem::copy(kNodeSweep, sweep, std::filesystem::copy_options::recursive);
    std::string results = slurp(sweep + "/results.csv");
    results.insert(results.find("p0003"), "p0002,8,8\n");  // a short row on line 5 (header, p0000..p0002)
    std::ofstream(sweep + "/results.csv") << results;
    r = run_fastsim("report " + sweep);
    CHECK(r.exit_code == 2);
    CHECK(r.err == "fastsim: error: " + sweep + "/results.csv:5: 3 cells, but the header has 24\n");
    CHECK_FALSE(std::filesystem::exists(sweep + "/report.html"));
    r = run_fastsim("report " + sweep + " --bogus");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("(see fastsim report --help)"));
}
