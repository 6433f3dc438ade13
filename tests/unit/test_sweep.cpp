// SPDX-License-Identifier: MIT
// Sweep files: point enumeration order, zipped axes, conditional overrides, shards, errors.
#include <catch2/catch.hpp>

#include <map>
#include <set>

#include "common/errors.h"
#include "sweep/sweep_dir.h"
#include "sweep/sweep_spec.h"
#include "support/temp_dir.h"

using Catch::Matchers::Contains;
using namespace fastsim;

namespace {

const std::string kBase = std::string(FASTSIM_SOURCE_DIR) + "/configs/tests/tiny_node.yaml";

std::string write_sweep(const test::TempDir& dir, const std::string& body) {
    return dir.write("sweep.yaml", "sweep:\n  name: t\n  base: " + kBase + "\n" + body);
}

}  // namespace

TEST_CASE("sweep points are the cartesian product with the last axis fastest", "[sweep]") {
    test::TempDir dir;
    const auto spec =
        sweep::load_sweep(write_sweep(dir,
                                      "axes:\n"
                                      "  - {key: node.array.rows, values: [4, 8, 16]}\n"
                                      "  - name: precision\n"
                                      "    zip: {precision.weights: [2, 8], precision.gradients: [4, 6]}\n"));
    const auto points = sweep::enumerate_points(spec);
    REQUIRE(points.size() == 6);
    CHECK(points[0].id == "p0000");
    CHECK(points[5].id == "p0005");
    // index = rows_index * 2 + precision_index
    CHECK(points[3].values == std::vector<std::pair<std::string, std::string>>{
                                  {"node.array.rows", "8"}, {"precision.weights", "8"}, {"precision.gradients", "6"}});
    CHECK(points[4].overrides ==
          std::vector<std::string>{"node.array.rows=16", "precision.weights=2", "precision.gradients=4"});
    CHECK(points[1].base_config == kBase);
    REQUIRE(spec.axes.size() == 2);
    CHECK(spec.axes[0].name == "node.array.rows");
    CHECK(spec.axes[1].name == "precision");
}

TEST_CASE("sweep set applies first and matching overrides last, in file order", "[sweep]") {
    test::TempDir dir;
    const auto spec = sweep::load_sweep(write_sweep(dir,
                                                    "  set: {workload.batch: 2, precision.layers: []}\n"
                                                    "axes:\n"
                                                    "  - {key: node.array.rows, values: [4, 8]}\n"
                                                    "  - {key: precision.weights, values: [2, 4]}\n"
                                                    "overrides:\n"
                                                    "  - when: {node.array.rows: 8}\n"
                                                    "    set: {workload.batch: 5}\n"
                                                    "  - when: {node.array.rows: 8, precision.weights: 4}\n"
                                                    "    set: {node.array.cols: 16}\n"));
    const auto points = sweep::enumerate_points(spec);
    REQUIRE(points.size() == 4);
    CHECK(points[0].overrides == std::vector<std::string>{"workload.batch=2", "precision.layers=[]",
                                                          "node.array.rows=4", "precision.weights=2"});
    CHECK(points[2].overrides == std::vector<std::string>{"workload.batch=2", "precision.layers=[]",
                                                          "node.array.rows=8", "precision.weights=2",
                                                          "workload.batch=5"});
    CHECK(points[3].overrides.back() == "node.array.cols=16");
    CHECK(points[3].overrides.size() == 6);
}

TEST_CASE("a base axis swaps the config file per point", "[sweep]") {
    test::TempDir dir;
    const std::string other = std::string(FASTSIM_SOURCE_DIR) + "/configs/quickstart.yaml";
    const auto spec = sweep::load_sweep(dir.write("s.yaml", "axes:\n  - {key: base, values: [" + kBase + ", " + other +
                                                                "]}\n  - {key: workload.batch, values: [1, 2]}\n"));
    const auto points = sweep::enumerate_points(spec);
    REQUIRE(points.size() == 4);
    CHECK(points[1].base_config == kBase);
    CHECK(points[2].base_config == other);
    CHECK(points[2].overrides == std::vector<std::string>{"workload.batch=1"});
}

TEST_CASE("every point is in exactly one shard", "[sweep]") {
    for (std::size_t count = 1; count <= 7; ++count) {
        std::map<std::size_t, int> seen;
        for (std::size_t k = 1; k <= count; ++k) {
            const sweep::Shard shard = sweep::parse_shard(std::to_string(k) + "/" + std::to_string(count));
            for (std::size_t i = 0; i < 23; ++i)
                if (shard.contains(i)) ++seen[i];
        }
        CHECK(seen.size() == 23);
        for (const auto& [index, times] : seen) CHECK(times == 1);
    }
    CHECK(sweep::parse_shard("2/3").contains(4));
    CHECK_FALSE(sweep::parse_shard("2/3").contains(5));
    for (const char* bad : {"0/3", "4/3", "1", "a/b", "1/0", "-1/2"})
        CHECK_THROWS_WITH(sweep::parse_shard(bad), Contains("--shard: expected k/N"));
}

TEST_CASE("the fingerprint changes with any point's overrides or base config", "[sweep]") {
    test::TempDir dir;
    const auto a = sweep::enumerate_points(
        sweep::load_sweep(write_sweep(dir, "axes:\n  - {key: workload.batch, values: [1, 2]}\n")));
    const auto b = sweep::enumerate_points(
        sweep::load_sweep(write_sweep(dir, "axes:\n  - {key: workload.batch, values: [1, 3]}\n")));
    const auto a2 = sweep::enumerate_points(
        sweep::load_sweep(write_sweep(dir, "axes:\n  - {key: workload.batch, values: [1, 2]}\n")));
    CHECK(sweep::fingerprint(a) == sweep::fingerprint(a2));
    CHECK(sweep::fingerprint(a) != sweep::fingerprint(b));
    CHECK(sweep::fingerprint(a).size() == 16);
}

TEST_CASE("bad sweep files name the file, line and key path", "[sweep]") {
    test::TempDir dir;
    const auto error_of = [&](const std::string& text) {
        try {
            sweep::load_sweep(dir.write("bad.yaml", text));
        } catch (const UserError& e) {
            return std::string(e.what());
        }
        return std::string("no error");
    };
    CHECK_THAT(error_of("sweep: {name: x}\naxes:\n  - {key: a, values: [1]}\n"), Contains("missing key 'base'"));
    CHECK_THAT(error_of("sweep: {base: " + kBase + "}\naxes:\n  - {key: a, values: []}\n"),
               Contains("bad.yaml:3:") && Contains("axes[0].values: expected a non-empty list"));
    CHECK_THAT(error_of("sweep: {base: " + kBase + "}\naxes:\n  - zip: {a: [1, 2], b: [1]}\n"),
               Contains("axes[0].zip.b: zipped lists must have equal lengths"));
    CHECK_THAT(error_of("sweep: {base: " + kBase + "}\naxes:\n  - {key: a, values: [1]}\n  - {key: a, values: [2]}\n"),
               Contains("key 'a' is swept twice"));
    CHECK_THAT(error_of("sweep: {base: nowhere.yaml}\naxes:\n  - {key: a, values: [1]}\n"),
               Contains("sweep.base: no config file at"));
    CHECK_THAT(error_of("sweep: {base: " + kBase +
                        "}\naxes:\n  - {key: a, values: [1]}\noverrides:\n  - when: {b: 1}\n    set: {c: 2}\n"),
               Contains("overrides[0].when.b: 'b' is not a swept key"));
    CHECK_THAT(error_of("sweep: {base: " + kBase + "}\naxes:\n  - {key: a, valuez: [1]}\n"), Contains("axes[0]"));
    CHECK_THAT(error_of("sweep: {base: " + kBase + "}\naxes:\n  - {key: a, values: [1]}\nplot: {x: q}\n"),
               Contains("plot.x: 'q' is not a swept key"));
}

TEST_CASE("results.csv quotes cells that need it and orders columns by first appearance", "[sweep]") {
    sweep::SweepIdentity id;
    id.axes = {{"a", {"workload.trace"}}};
    std::map<std::size_t, sweep::PointRecord> records;
    records[1] = {
        "p0001", 1, false, 2, "", "exit status 2: bad \"value\", really", 0.1, "", {{"workload.trace", "x,y.yaml"}},
        {},      {}};
    records[0] = {
        "p0000", 0, true, 0, "", "", 0.1, "", {{"workload.trace", "a.yaml"}}, {}, {{"cycles", 10}, {"energy_uj", 0.5}}};
    CHECK(sweep::results_csv(id, records) ==
          "point,workload.trace,status,cycles,energy_uj,error\n"
          "p0000,a.yaml,ok,10,0.5,\n"
          "p0001,\"x,y.yaml\",failed,,,\"exit status 2: bad \"\"value\"\", really\"\n");
}
