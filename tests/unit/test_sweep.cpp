// SPDX-License-Identifier: MIT
// Sweep files: point enumeration order, zipped axes, conditional overrides, shards, errors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <map>
#include <set>

#include "common/errors.h"
#include "sweep/explore.h"
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

namespace {

/// An explore spec over a synthetic space of 3 axes of 12 values (1,728 designs); its
/// evaluator gives two conflicting objectives of the axis values.
sweep::ExploreSpec synthetic(std::size_t budget, sweep::SearchMethod method) {
    test::TempDir dir;
    std::string values = "[";
    for (int v = 0; v < 12; ++v) values += (v ? ", " : "") + std::to_string(v);
    values += "]";
    const std::string base = dir.write("base.yaml", "run: {mode: training_step}\n");
    sweep::ExploreSpec spec =
        sweep::load_explore_text("sweep: {base: base.yaml}\naxes:\n  - {key: a, values: " + values +
                                     "}\n  - {key: b, values: " + values + "}\n  - {key: c, values: " + values +
                                     "}\nexplore: {objectives: [f, g], budget: " + std::to_string(budget) + "}\n",
                                 dir.path("space.yaml"));
    spec.method = method;
    return spec;
}

sweep::Evaluation synthetic_evaluation(const sweep::SweepPoint& p) {
    const double a = std::stod(p.values[0].second), b = std::stod(p.values[1].second),
                 c = std::stod(p.values[2].second);
    // f falls with a and c, g rises with a; b only hurts both: the front has b = 0.
    return {{{"f", (12 - a) * (12 - a) + b + (11 - c)}, {"g", a * a + b + 0.5 * c}}, "", false};
}

}  // namespace

TEST_CASE("The exhaustive search's front is the brute-force non-dominated set", "[sweep][explore]") {
    const sweep::ExploreSpec spec = synthetic(5000, sweep::SearchMethod::automatic);
    sweep::Explorer explorer(spec, synthetic_evaluation, {});
    CHECK(explorer.method() == sweep::SearchMethod::exhaustive);
    const std::vector<sweep::Design> all = explorer.run({});
    REQUIRE(all.size() == 1728);
    sweep::ParetoFront front;
    for (std::size_t i = 0; i < all.size(); ++i) front.add(i, all[i].objectives);
    std::set<std::size_t> expected;
    for (std::size_t i = 0; i < all.size(); ++i)
        if (std::none_of(all.begin(), all.end(),
                         [&](const sweep::Design& d) { return sweep::dominates(d.objectives, all[i].objectives); }))
            expected.insert(i);
    CHECK(std::set<std::size_t>(front.members().begin(), front.members().end()) == expected);
    for (const std::size_t m : front.members()) CHECK(all[m].objectives.size() == 2);
}

TEST_CASE("The sampled search evaluates its budget, reproducibly, and refines around the front", "[sweep][explore]") {
    const sweep::ExploreSpec sampled = synthetic(300, sweep::SearchMethod::automatic);
    std::vector<std::size_t> order;
    sweep::Explorer explorer(sampled, synthetic_evaluation, [&](const sweep::Design& d) { order.push_back(d.index); });
    CHECK(explorer.method() == sweep::SearchMethod::sampled);
    const std::vector<sweep::Design> designs = explorer.run({});
    CHECK(designs.size() == 300);
    CHECK(std::set<std::size_t>(order.begin(), order.end()).size() == 300);  // no design twice
    // The same seed, the same designs; a run resumed from its first 120 ends where it did.
    std::vector<std::size_t> again;
    sweep::Explorer(sampled, synthetic_evaluation, [&](const sweep::Design& d) { again.push_back(d.index); }).run({});
    CHECK(again == order);
    std::vector<sweep::Design> first(designs.begin(), designs.begin() + 120);
    const std::vector<sweep::Design> resumed = sweep::Explorer(sampled, synthetic_evaluation, {}).run(first);
    std::set<std::size_t> a, b;
    for (const auto& d : designs) a.insert(d.index);
    for (const auto& d : resumed) b.insert(d.index);
    CHECK(resumed.size() == 300);
    // Refinement finds the true front better than the same budget drawn at random: count the
    // exhaustive front's members each search found.
    std::set<std::size_t> truth;
    {
        const std::vector<sweep::Design> all =
            sweep::Explorer(synthetic(5000, sweep::SearchMethod::automatic), synthetic_evaluation, {}).run({});
        for (std::size_t i = 0; i < all.size(); ++i)
            if (std::none_of(all.begin(), all.end(),
                             [&](const sweep::Design& d) { return sweep::dominates(d.objectives, all[i].objectives); }))
                truth.insert(all[i].index);
    }
    const auto found = [&](const std::vector<sweep::Design>& ds) {
        std::size_t n = 0;
        for (const auto& d : ds) n += truth.count(d.index);
        return n;
    };
    const std::vector<sweep::Design> random =
        sweep::Explorer(synthetic(300, sweep::SearchMethod::random), synthetic_evaluation, {}).run({});
    CHECK(random.size() == 300);
    CHECK(found(designs) > 2 * found(random));
}

TEST_CASE("The designs, their order and the front do not depend on how batches are evaluated", "[sweep][explore]") {
    for (const sweep::SearchMethod method : {sweep::SearchMethod::automatic, sweep::SearchMethod::random}) {
        for (const std::size_t budget : {300, 5000}) {
            const sweep::ExploreSpec spec = synthetic(budget, method);
            const auto order_with = [&](std::size_t batch, std::size_t* largest) {
                std::vector<std::size_t> order;
                const auto evaluate = [&](const std::vector<sweep::SweepPoint>& points) {
                    *largest = std::max(*largest, points.size());
                    std::vector<sweep::Evaluation> out;
                    for (auto it = points.rbegin(); it != points.rend(); ++it) out.push_back(synthetic_evaluation(*it));
                    std::reverse(out.begin(), out.end());  // evaluated in another order, returned in theirs
                    return out;
                };
                sweep::Explorer(
                    spec, sweep::Explorer::EvaluateBatch(evaluate),
                    [&](const sweep::Design& d) { order.push_back(d.index); }, {}, batch)
                    .run({});
                return order;
            };
            std::size_t one = 0, seven = 0, many = 0;
            const std::vector<std::size_t> sequential = order_with(1, &one);
            CHECK(one <= 6);  // a front member's neighbours (one step on each of 3 axes) are one batch
            CHECK(order_with(7, &seven) == sequential);
            CHECK(order_with(64, &many) == sequential);
            CHECK(seven == 7);
            CHECK(many > 7);
            CHECK(sequential.size() == std::min<std::size_t>(budget, 1728));
        }
    }
}

TEST_CASE("An evaluation survives its bytes exactly", "[sweep][explore]") {
    sweep::Evaluation e;
    e.fields = {{"time_ms", 0.1 + 0.2}, {"energy_uj", 1e-310}, {"area_mm2", -0.0}, {"", 7}};
    e.error = std::string("breaks area_mm2 <= 4\0 with a NUL", 31);
    e.pruned = true;
    const sweep::Evaluation back = sweep::decode_evaluation(sweep::encode_evaluation(e));
    CHECK(back.fields == e.fields);
    CHECK(back.error == e.error);
    CHECK(back.pruned);
    CHECK(!sweep::decode_evaluation(sweep::encode_evaluation(sweep::Evaluation{})).pruned);
    const std::string bytes = sweep::encode_evaluation(e);
    CHECK_THROWS_AS(sweep::decode_evaluation(bytes.substr(0, bytes.size() - 1)), std::logic_error);
    CHECK_THROWS_AS(sweep::decode_evaluation(bytes + "x"), std::logic_error);
}

TEST_CASE("Constraints and dominance by hand", "[sweep][explore]") {
    const auto c = sweep::parse_constraint("area_mm2 <= 400");
    REQUIRE(c);
    CHECK((c->field == "area_mm2" && c->bound == 400 && c->holds(400) && !c->holds(400.5)));
    CHECK(sweep::parse_constraint("power_w > 3e2")->holds(301));
    CHECK_FALSE(sweep::parse_constraint("power_w > 3e2")->holds(300));
    CHECK_FALSE(sweep::parse_constraint("area_mm2 = 4"));
    CHECK_FALSE(sweep::parse_constraint("area_mm2 <= lots"));
    CHECK(sweep::dominates({1, 2}, {1, 3}));
    CHECK_FALSE(sweep::dominates({1, 2}, {1, 2}));  // equal: neither
    CHECK_FALSE(sweep::dominates({0, 3}, {1, 2}));
    sweep::ParetoFront front;
    CHECK(front.add(0, {2, 2}));
    CHECK(front.add(1, {2, 2}));  // an equal one is kept
    CHECK(front.add(2, {1, 3}));
    CHECK_FALSE(front.add(3, {3, 3}));
    CHECK(front.add(4, {1, 1}));  // dominates every member
    CHECK(front.members() == std::vector<std::size_t>{4});
}
