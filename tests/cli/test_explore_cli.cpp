// SPDX-License-Identifier: MIT
// fastsim explore as a user runs it: its front against a plain sweep of the same grid, resuming,
// constraints, refusals.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <vector>

#include "common/csv_reader.h"
#include "common/json_reader.h"
#include "support/fastsim_process.h"
#include "support/temp_dir.h"

using Catch::Matchers::Contains;
using fastsim::test::Result;
using fastsim::test::run_fastsim;
using fastsim::test::slurp;
using fastsim::test::TempDir;

namespace {

const std::string kTinyNode = std::string(FASTSIM_SOURCE_DIR) + "/configs/tests/tiny_node.yaml";

/// 48 tiny-node designs: 4 row counts x 4 column counts x 3 mantissa banks.
std::string grid(const std::string& name) {
    return "sweep:\n  name: " + name + "\n  base: " + kTinyNode +
           "\naxes:\n  - {key: node.array.rows, values: [2, 3, 4, 6]}\n"
           "  - {key: node.array.cols, values: [2, 3, 4, 6]}\n"
           "  - {key: node.sram.mantissa_bank.capacity_kib, values: [2, 4, 8]}\n";
}

const std::vector<std::string> kObjectives{"time_ms", "energy_uj", "area_mm2"};

/// The test's own oracle, independent of sweep::dominates.
bool dominates(const std::vector<double>& a, const std::vector<double>& b) {
    bool better = false;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (a[i] > b[i]) return false;
        better = better || a[i] < b[i];
    }
    return better;
}

/// Objective vectors by design id of a results.csv or designs.csv, feasible/ok rows only.
std::map<std::string, std::vector<double>> objectives_of(const std::string& path, const char* id_column,
                                                         const char* ok_column, const char* ok_value,
                                                         const std::vector<std::string>& objectives = kObjectives) {
    const fastsim::CsvTable t = fastsim::read_csv_file(path);
    std::map<std::string, std::vector<double>> out;
    for (const auto& row : t.rows) {
        if (row[*t.column(ok_column)] != ok_value) continue;
        std::vector<double> v;
        for (const std::string& o : objectives) v.push_back(*fastsim::parse_number(row[*t.column(o)]));
        out[row[*t.column(id_column)]] = v;
    }
    return out;
}

}  // namespace

TEST_CASE("explore's front is the non-dominated set of a plain sweep of the same 48 designs", "[cli][explore]") {
    TempDir dir;
    const std::string sweep = dir.write("grid.yaml", grid("grid"));
    const std::string explore =
        dir.write("explore.yaml", grid("grid") + "explore:\n  objectives: [time_ms, energy_uj, area_mm2]\n");
    REQUIRE(run_fastsim("sweep " + sweep + " --out " + dir.path("sweep") + " --jobs 2").exit_code == 0);
    const Result r = run_fastsim("explore " + explore + " --out " + dir.path("explore") + " --jobs 1");
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Contains("48 designs evaluated"));
    // Three worker processes write the same designs, in the same order, and the same front.
    const Result parallel = run_fastsim("explore " + explore + " --out " + dir.path("parallel") + " --jobs 3");
    REQUIRE(parallel.exit_code == 0);
    CHECK_THAT(parallel.err, Contains("3 at a time"));
    CHECK(slurp(dir.path("parallel/designs.csv")) == slurp(dir.path("explore/designs.csv")));
    CHECK(slurp(dir.path("parallel/pareto.csv")) == slurp(dir.path("explore/pareto.csv")));
    CHECK(run_fastsim("explore " + explore + " --out " + dir.path("x") + " --jobs 0").err ==
          "fastsim: error: --jobs: expected 1 to 4096, got 0\n");

    // The front from the sweep, by brute force over its results.csv.
    const auto swept = objectives_of(dir.path("sweep/results.csv"), "point", "status", "ok");
    REQUIRE(swept.size() == 48);
    std::map<std::string, std::vector<double>> expected;
    for (const auto& [id, v] : swept)
        if (std::none_of(swept.begin(), swept.end(), [&, w = v](const auto& o) { return dominates(o.second, w); }))
            expected[id] = v;
    const auto front = objectives_of(dir.path("explore/pareto.csv"), "design", "feasible", "1");
    CHECK(front == expected);
    CHECK(front.size() > 1);
    CHECK(front.size() < 48);
    // Every design is in designs.csv with the sweep's values.
    CHECK(objectives_of(dir.path("explore/designs.csv"), "design", "feasible", "1") == swept);

    // A run killed after its header and before any design, then resumed, writes one header.
    const std::string killed = dir.path("killed");
    std::filesystem::create_directories(killed);
    std::filesystem::copy_file(dir.path("explore/explore.json"), killed + "/explore.json");
    const std::string header =
        slurp(dir.path("explore/designs.csv")).substr(0, slurp(dir.path("explore/designs.csv")).find('\n') + 1);
    dir.write("killed/designs.csv", header + "p00");  // and cut mid-row
    REQUIRE(run_fastsim("explore " + explore + " --out " + killed).exit_code == 0);
    CHECK(fastsim::read_csv_file(killed + "/designs.csv").rows.size() == 48);
    CHECK(objectives_of(killed + "/pareto.csv", "design", "feasible", "1") == expected);

    // Rerun: nothing is evaluated again, the front is the same.
    const Result again = run_fastsim("explore " + explore + " --out " + dir.path("explore"));
    REQUIRE(again.exit_code == 0);
    CHECK_THAT(again.out, Contains("48 designs evaluated (0 now)"));
    CHECK(objectives_of(dir.path("explore/pareto.csv"), "design", "feasible", "1") == expected);
}

TEST_CASE("explore --merge: three shards' designs are the unsharded run's, a missing shard is evaluated",
          "[cli][explore]") {
    TempDir dir;
    const std::string explore =
        dir.write("explore.yaml", grid("grid") + "explore:\n  objectives: [time_ms, energy_uj, area_mm2]\n");
    REQUIRE(run_fastsim("explore " + explore + " --out " + dir.path("whole")).exit_code == 0);
    std::string shards;
    for (const char* k : {"1", "2", "3"}) {
        REQUIRE(run_fastsim("explore " + explore + " --out " + dir.path(std::string("s") + k) + " --shard " + k + "/3")
                    .exit_code == 0);
        shards += " " + dir.path(std::string("s") + k);
    }
    // Each shard's own front is not the whole front; merged, the shards give the unsharded bytes.
    CHECK(slurp(dir.path("s1/pareto.csv")) != slurp(dir.path("whole/pareto.csv")));
    const Result merged = run_fastsim("explore " + explore + " --out " + dir.path("merged") + " --merge" + shards);
    REQUIRE(merged.exit_code == 0);
    CHECK_THAT(merged.err, Contains("48 already evaluated (48 from the shards merged), up to 0 to go"));
    CHECK(slurp(dir.path("merged/designs.csv")) == slurp(dir.path("whole/designs.csv")));
    CHECK(slurp(dir.path("merged/pareto.csv")) == slurp(dir.path("whole/pareto.csv")));
    CHECK(slurp(dir.path("merged/knee/summary.json")) == slurp(dir.path("whole/knee/summary.json")));
    // Shard 3 missing: its 16 designs are evaluated, and the front is the whole one again.
    const Result two = run_fastsim("explore " + explore + " --out " + dir.path("two") + " --merge " + dir.path("s1") +
                                   " " + dir.path("s2"));
    REQUIRE(two.exit_code == 0);
    CHECK_THAT(two.out, Contains("48 designs evaluated (16 now)"));
    CHECK(slurp(dir.path("two/pareto.csv")) == slurp(dir.path("whole/pareto.csv")));
    // What cannot be merged.
    const std::string other = dir.write("other.yaml", grid("other") + "explore:\n  objectives: [time_ms, energy_uj]\n");
    REQUIRE(run_fastsim("explore " + other + " --out " + dir.path("o")).exit_code == 0);
    const Result wrong = run_fastsim("explore " + explore + " --out " + dir.path("w") + " --merge " + dir.path("o"));
    CHECK(wrong.exit_code == 2);
    CHECK_THAT(wrong.err,
               Contains("--merge " + dir.path("o") + ": " + dir.path("o") + "/explore.json is another exploration's"));
    CHECK_THAT(
        run_fastsim("explore " + explore + " --out " + dir.path("w") + " --merge " + dir.path("s1") + " --shard 1/2")
            .err,
        Contains("--merge gathers the shards into one exploration: it takes no --shard"));
    CHECK_THAT(run_fastsim("explore " + explore + " --out " + dir.path("s1") + " --merge " + dir.path("s1")).err,
               Contains("is --out itself"));
    // A shard's designs.csv edited by hand: each row must be its design's, once, and consistent.
    const std::string good = slurp(dir.path("s2/designs.csv"));
    const std::size_t second = good.find('\n') + 1, third = good.find('\n', second) + 1;
    const std::string row = good.substr(second, third - second);  // p0001, feasible
    const auto cells = [](const std::string& line) {
        std::vector<std::string> out;
        std::size_t at = 0;
        for (std::size_t comma; (comma = line.find(',', at)) != std::string::npos; at = comma + 1)
            out.push_back(line.substr(at, comma - at));
        out.push_back(line.substr(at, line.size() - 1 - at));  // without the newline
        return out;
    };
    const auto joined = [](const std::vector<std::string>& c) {
        std::string line;
        for (std::size_t i = 0; i < c.size(); ++i) line += (i ? "," : "") + c[i];
        return line + "\n";
    };
    std::vector<std::string> c = cells(row);
    REQUIRE(c.size() == 9);  // design, 3 keys, feasible, 3 objectives, error
    const auto refused = [&](const std::string& edited_row, const std::string& expected) {
        std::filesystem::remove_all(dir.path("edited"));
        std::filesystem::copy(dir.path("s2"), dir.path("edited"), std::filesystem::copy_options::recursive);
        dir.write("edited/designs.csv", good.substr(0, second) + edited_row + good.substr(third));
        const Result r =
            run_fastsim("explore " + explore + " --out " + dir.path("m") + " --merge " + dir.path("edited"));
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Contains(dir.path("edited") + "/designs.csv:2: " + expected));
    };
    std::vector<std::string> e = c;
    e[5] = "-5";
    refused(joined(e), "column 'time_ms': '-5' is not a finite number of at least 0");
    e = c;
    e[1] = "999";
    refused(joined(e), "column 'node.array.rows' is '999', but design 'p0001' has node.array.rows = " + c[1]);
    e = c;
    e[4] = "2";
    refused(joined(e), "column 'feasible': expected 1 or 0, got '2'");
    e = c;
    e[8] = "because";
    refused(joined(e), "design 'p0001' is feasible but has an error");
    e = c;
    e[4] = "0";
    refused(joined(e), "design 'p0001' is infeasible but gives no reason in column 'error'");
    std::filesystem::remove_all(dir.path("edited"));
    std::filesystem::copy(dir.path("s2"), dir.path("edited"), std::filesystem::copy_options::recursive);
    dir.write("edited/designs.csv", good.substr(0, third) + row + good.substr(third));
    CHECK_THAT(run_fastsim("explore " + explore + " --out " + dir.path("m") + " --merge " + dir.path("edited")).err,
               Contains("designs.csv:3: design 'p0001' is listed twice"));
    dir.write("edited/explore.json", "{\"fingerprint\": ");
    CHECK_THAT(run_fastsim("explore " + explore + " --out " + dir.path("m") + " --merge " + dir.path("edited")).err,
               Contains(dir.path("edited") + "/explore.json:1:17: expected a JSON value"));
}

TEST_CASE("explore over cluster designs: its front is a plain sweep's, a node-count bound prunes", "[cli][explore]") {
    TempDir dir;
    // 24 clusters: 1-4 small nodes, 1-3 big ones, the big ones' arrays of 4 or 8 rows.
    const std::string space = "sweep:\n  name: counts\n  base: " + std::string(FASTSIM_SOURCE_DIR) +
                              "/configs/tests/tiny_cluster.yaml\naxes:\n"
                              "  - {key: cluster.groups.0.count, values: [1, 2, 3, 4]}\n"
                              "  - {key: cluster.groups.1.count, values: [1, 2, 3]}\n"
                              "  - {key: node_types.1.array.rows, values: [4, 8]}\n";
    const std::vector<std::string> objectives{"step_ms", "energy_uj", "area_mm2"};
    REQUIRE(
        run_fastsim("sweep " + dir.write("grid.yaml", space) + " --out " + dir.path("sweep") + " --jobs 2").exit_code ==
        0);
    const Result r =
        run_fastsim("explore " +
                    dir.write("explore.yaml", space + "explore:\n  objectives: [step_ms, energy_uj, area_mm2]\n"
                                                      "  constraints: ['nodes <= 5']\n") +
                    " --out " + dir.path("explore"));
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Contains("24 designs evaluated"));
    // The front from the sweep's results.csv, by brute force over the designs of at most 5 nodes.
    const fastsim::CsvTable results = fastsim::read_csv_file(dir.path("sweep/results.csv"));
    std::map<std::string, std::vector<double>> bounded;
    for (const auto& [id, v] : objectives_of(dir.path("sweep/results.csv"), "point", "status", "ok", objectives))
        for (const auto& row : results.rows)
            if (row[*results.column("point")] == id && *fastsim::parse_number(row[*results.column("nodes")]) <= 5)
                bounded[id] = v;
    REQUIRE(bounded.size() == 18);
    std::map<std::string, std::vector<double>> expected;
    for (const auto& [id, v] : bounded)
        if (std::none_of(bounded.begin(), bounded.end(), [&, w = v](const auto& o) { return dominates(o.second, w); }))
            expected[id] = v;
    CHECK(objectives_of(dir.path("explore/pareto.csv"), "design", "feasible", "1", objectives) == expected);
    CHECK(expected.size() > 1);
    CHECK(objectives_of(dir.path("explore/designs.csv"), "design", "feasible", "1", objectives) == bounded);
    // The six clusters of more than 5 nodes are infeasible without being simulated.
    const fastsim::CsvTable designs = fastsim::read_csv_file(dir.path("explore/designs.csv"));
    std::size_t pruned = 0;
    for (const auto& row : designs.rows)
        if (row[*designs.column("feasible")] == "0") {
            CHECK_THAT(row[*designs.column("error")], Contains("breaks nodes <= 5") && Contains("not simulated"));
            CHECK(row[*designs.column("step_ms")].empty());
            ++pruned;
        }
    CHECK(pruned == 6);
    // A node run's field is not a cluster's.
    const Result wrong =
        run_fastsim("explore " + dir.write("wrong.yaml", space + "explore:\n  objectives: [time_ms]\n") + " --out " +
                    dir.path("wrong"));
    CHECK(wrong.exit_code == 2);
    CHECK_THAT(wrong.err, Contains("explore.objectives: 'time_ms' is not a summary field of a cluster run (one of "));
}

TEST_CASE("explore: constraints make designs infeasible, an area bound prunes before simulating", "[cli][explore]") {
    TempDir dir;
    const std::string explore = dir.write("explore.yaml", grid("bounded") +
                                                              "explore:\n  objectives: [time_ms, energy_uj]\n"
                                                              "  constraints: ['area_mm2 <= 0.13', 'power_w >= 0']\n");
    const Result r = run_fastsim("explore " + explore + " --out " + dir.path("out"));
    REQUIRE(r.exit_code == 0);
    const fastsim::CsvTable designs = fastsim::read_csv_file(dir.path("out/designs.csv"));
    REQUIRE(designs.rows.size() == 48);
    std::size_t pruned = 0, feasible = 0;
    for (const auto& row : designs.rows) {
        const double area = *fastsim::parse_number(row[*designs.column("area_mm2")]);
        const bool ok = row[*designs.column("feasible")] == "1";
        CHECK(ok == (area <= 0.13));
        feasible += ok ? 1 : 0;
        if (!ok) {
            CHECK_THAT(row[*designs.column("error")], Contains("breaks area_mm2 <= 0.13") && Contains("not simulated"));
            CHECK(row[*designs.column("time_ms")].empty());
            ++pruned;
        }
    }
    CHECK(pruned > 0);
    CHECK(feasible > 0);
    // Only feasible designs are on the front.
    for (const auto& row : fastsim::read_csv_file(dir.path("out/pareto.csv")).rows)
        CHECK(row[*designs.column("feasible")] == "1");
}

TEST_CASE("explore refuses what it cannot do, naming the file and key", "[cli][explore]") {
    TempDir dir;
    int runs = 0;
    const auto error_of = [&](const std::string& text, const std::string& extra = "") {
        const Result r = run_fastsim("explore " + dir.write("e.yaml", text) + " --out " +
                                     dir.path("o" + std::to_string(++runs)) + extra);
        CHECK(r.exit_code == 2);
        return r.err;
    };
    CHECK_THAT(error_of(grid("g")), Contains("missing section explore:"));
    CHECK_THAT(error_of(grid("g") + "explore:\n  objectives: []\n"),
               Contains("explore.objectives: expected objectives"));
    CHECK_THAT(error_of(grid("g") + "explore:\n  objectives: [time_ms]\n  constraints: ['area < lots']\n"),
               Contains("explore.constraints[0]: expected a constraint FIELD <= NUMBER"));
    CHECK_THAT(error_of(grid("g") + "explore:\n  objectives: [speed]\n"),
               Contains("explore.objectives: 'speed' is not a summary field of a node run (one of cycles, "));
    CHECK_THAT(error_of(grid("g") + "explore:\n  objectives: [tops_per_w]\n"),
               Contains("'tops_per_w' is better when higher, and explore minimises every objective"));
    CHECK_THAT(error_of(grid("g") + "explore:\n  objectives: [time_ms]\n  budget: 10\n  method: exhaustive\n"),
               Contains("explore.method: exhaustive evaluates all 48 designs, more than explore.budget (10)"));
    CHECK_THAT(error_of(grid("g") + "explore:\n  objectives: [time_ms]\n  budget: 10\n", " --shard 1/2"),
               Contains("--shard splits a space searched whole"));
    // A directory holding another exploration is refused, not mixed.
    REQUIRE(run_fastsim("explore " + dir.write("a.yaml", grid("a") + "explore:\n  objectives: [time_ms]\n") +
                        " --out " + dir.path("mixed"))
                .exit_code == 0);
    const Result other =
        run_fastsim("explore " + dir.write("b.yaml", grid("b") + "explore:\n  objectives: [energy_uj]\n") + " --out " +
                    dir.path("mixed"));
    CHECK(other.exit_code == 2);
    CHECK_THAT(other.err, Contains("holds another exploration"));
    // The fingerprint covers the trace the designs read: editing it makes another exploration.
    const std::string trace = dir.write("t.yaml", slurp(std::string(FASTSIM_SOURCE_DIR) + "/traces/tiny_cnn.yaml"));
    const std::string traced = dir.write(
        "traced.yaml", "sweep:\n  name: traced\n  base: " + kTinyNode + "\n  set: {workload.trace: " + trace +
                           "}\naxes:\n  - {key: node.array.rows, values: [2, 3]}\nexplore:\n  objectives: [time_ms]\n");
    REQUIRE(run_fastsim("explore " + traced + " --out " + dir.path("traced")).exit_code == 0);
    std::ofstream(trace, std::ios::app) << "\n# edited\n";
    const Result edited = run_fastsim("explore " + traced + " --out " + dir.path("traced"));
    CHECK(edited.exit_code == 2);
    CHECK_THAT(edited.err, Contains("holds another exploration (or one of an edited file)"));
    // A second run into a directory another is writing is refused before it reads or appends.
    const std::string lock_path = dir.path("mixed") + "/.lock-1-of-1";
    const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    REQUIRE(fd >= 0);
    REQUIRE(::flock(fd, LOCK_EX | LOCK_NB) == 0);
    const Result locked = run_fastsim("explore " + dir.path("a.yaml") + " --out " + dir.path("mixed"));
    ::close(fd);
    CHECK(locked.exit_code == 2);
    CHECK_THAT(locked.err, Contains("another fastsim command") && Contains(" is writing into "));
    CHECK(run_fastsim("explore " + dir.path("a.yaml") + " --out " + dir.path("mixed")).exit_code == 0);
    // A key no config has, on an axis: every design would fail, so the space is refused, naming it.
    const Result typo = run_fastsim(
        "explore " +
        dir.write("typo.yaml", "sweep: {name: typo, base: " + kTinyNode +
                                   "}\naxes:\n  - {key: node.aray.rows, values: [2, 3]}\nexplore:\n  objectives: "
                                   "[time_ms]\n") +
        " --out " + dir.path("typo"));
    CHECK(typo.exit_code == 2);
    CHECK_THAT(typo.err, Contains(dir.path("typo.yaml") + ": axes[0] sets node.aray.rows = 2 (design p0000): "
                                                          "node.aray: unknown key 'aray' in node"));
    // A value a design cannot take makes that design infeasible, its error naming the axis.
    REQUIRE(run_fastsim("explore " +
                        dir.write("zero.yaml", "sweep: {name: zero, base: " + kTinyNode +
                                                   "}\naxes:\n  - {key: node.array.rows, values: [0, 3]}\nexplore:"
                                                   "\n  objectives: [time_ms]\n") +
                        " --out " + dir.path("zero"))
                .exit_code == 0);
    CHECK_THAT(slurp(dir.path("zero/designs.csv")),
               Contains("p0000,0,0,,\"" + dir.path("zero.yaml") +
                        ": axes[0] sets node.array.rows = 0 (design p0000): node.array.rows: expected a value from 1"));
    // A run's folder and an exploration's are never one folder, either way round.
    REQUIRE(run_fastsim("run " + kTinyNode + " --out " + dir.path("run")).exit_code == 0);
    CHECK_THAT(run_fastsim("explore " + dir.path("a.yaml") + " --out " + dir.path("run")).err,
               Contains("--out " + dir.path("run") + " holds a run: an exploration writes a folder of its own"));
    const Result run_into = run_fastsim("run " + kTinyNode + " --force --out " + dir.path("mixed"));
    CHECK(run_into.exit_code == 2);
    CHECK_THAT(run_into.err, Contains("--out " + dir.path("mixed") +
                                      " holds an exploration (explore.json): a run "
                                      "writes a folder of its own"));
    // --out naming a file.
    const Result on_file = run_fastsim("explore " + dir.path("a.yaml") + " --out " + dir.path("a.yaml"));
    CHECK(on_file.exit_code == 2);
    CHECK(on_file.err == "fastsim: error: --out " + dir.path("a.yaml") +
                             " exists and is not a directory: an exploration writes a folder\n");
}

TEST_CASE("report refuses an exploration's files that explore could not have written", "[cli][explore][report]") {
    TempDir dir;
    const std::string explore = dir.write("e.yaml", grid("g") + "explore:\n  objectives: [time_ms, energy_uj]\n");
    REQUIRE(run_fastsim("explore " + explore + " --out " + dir.path("o")).exit_code == 0);
    REQUIRE(run_fastsim("report " + dir.path("o")).exit_code == 0);
    const std::string designs = slurp(dir.path("o/designs.csv")), pareto = slurp(dir.path("o/pareto.csv"));
    const std::size_t second = designs.find('\n') + 1, third = designs.find('\n', second) + 1;
    const std::string row = designs.substr(second, third - second);  // p0000: 3 keys, feasible, 2 objectives
    const auto with_cell = [&](std::size_t cell, const std::string& value) {
        std::size_t at = 0;
        for (std::size_t c = 0; c < cell; ++c) at = row.find(',', at) + 1;
        return row.substr(0, at) + value + row.substr(row.find(',', at));
    };
    const auto refused = [&](const std::string& file, const std::string& content, const std::string& expected) {
        const std::string kept = slurp(dir.path("o/" + file));
        dir.write("o/" + file, content);
        const Result r = run_fastsim("report " + dir.path("o"));
        dir.write("o/" + file, kept);
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Contains("error: " + dir.path("o/" + file) + ":") && Contains(expected));
    };
    const auto edited = [&](const std::string& new_row) {
        return designs.substr(0, second) + new_row + designs.substr(third);
    };
    refused("designs.csv", edited(with_cell(5, "nan")), ":2: column 'time_ms': 'nan' is not a finite number");
    refused("designs.csv", edited(with_cell(5, "-3")), ":2: column 'time_ms': '-3' is not a finite number");
    refused("designs.csv", edited(with_cell(4, "7")), ":2: column 'feasible': expected 1 or 0, got '7'");
    refused("designs.csv", designs + row, ":50: design 'p0000' is listed twice");
    refused("pareto.csv", pareto + with_cell(5, "123"),
            "design 'p0000' is not a feasible row of designs.csv: pareto.csv holds rows copied from it");
    const std::string identity = slurp(dir.path("o/explore.json"));
    const std::size_t at = identity.find("\"designs_in_space\": 48");
    REQUIRE(at != std::string::npos);
    refused("explore.json", identity.substr(0, at) + "\"designs_in_space\": -4" + identity.substr(at + 22),
            ": designs_in_space: expected a whole number from 0 to 2^53");
}

TEST_CASE("explore: a design above the work limit is infeasible with its estimate, not run", "[cli][explore]") {
    TempDir dir;
    const std::string explore = dir.write("e.yaml", grid("g") + "explore:\n  objectives: [time_ms]\n");
    // The largest arrays take fewer memo tiles: a limit between the smallest and the largest
    // designs' estimates leaves some feasible.
    const Result r = run_fastsim("explore " + explore + " --out " + dir.path("o") + " --max-work 0.000005 --jobs 1");
    REQUIRE(r.exit_code == 0);
    const fastsim::CsvTable t = fastsim::read_csv_file(dir.path("o/designs.csv"));
    std::size_t limited = 0, feasible = 0;
    for (const auto& row : t.rows) {
        const std::string& error = row[*t.column("error")];
        if (row[*t.column("feasible")] == "1") {
            ++feasible;
        } else {
            CHECK_THAT(error, Contains("the run's work is estimated at") &&
                                  Contains("above the work limit of 5e-06 s") && Contains("--max-work"));
            ++limited;
        }
    }
    CHECK(limited > 0);
    CHECK(feasible > 0);
    // Their errors (with quotes) read back: a rerun resumes, evaluating nothing.
    const Result again = run_fastsim("explore " + explore + " --out " + dir.path("o") + " --max-work 0.000005");
    CHECK(again.exit_code == 0);
    CHECK_THAT(again.out, Contains("48 designs evaluated (0 now)"));
    CHECK(run_fastsim("explore " + explore + " --out " + dir.path("x") + " --max-work -1").err ==
          "fastsim: error: --max-work: expected estimated seconds of work, a positive number such as 600, got '-1'\n");
}

TEST_CASE("fastsim report of an exploration: the front in every pair of objectives, and its knee", "[cli][explore]") {
    TempDir dir;
    const std::string explore =
        dir.write("explore.yaml", grid("paged") + "explore:\n  objectives: [time_ms, energy_uj, area_mm2]\n");
    REQUIRE(run_fastsim("explore " + explore + " --out " + dir.path("out")).exit_code == 0);
    const Result r = run_fastsim("report " + dir.path("out"));
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Contains("3 plots"));
    const std::string html = slurp(dir.path("out/report.html"));
    CHECK_THAT(html, Contains("The knee") && Contains("Pareto front") && Contains("energy_uj against time_ms"));
    const std::string svg = slurp(dir.path("out/plots/front_time_ms_energy_uj.svg"));
    // One marker per feasible design, one per front member, one for the knee; no lines.
    const auto count = [&](const std::string& text, const std::string& what) {
        std::size_t n = 0;
        for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
        return n;
    };
    const std::size_t front = fastsim::read_csv_file(dir.path("out/pareto.csv")).rows.size();
    CHECK(count(svg, "class=\"marker\"") == 48 + front + 1);
    CHECK(count(svg, "class=\"line\"") == 0);

    // The knee, by the test's own rule (least sum of squares of the objectives scaled to the
    // front's range), was run in full into out/knee, and the page links its own report.
    const auto members = objectives_of(dir.path("out/pareto.csv"), "design", "feasible", "1");
    std::vector<double> lo(3, 1e300), hi(3, -1e300);
    for (const auto& [id, v] : members)
        for (std::size_t i = 0; i < 3; ++i) {
            lo[i] = std::min(lo[i], v[i]);
            hi[i] = std::max(hi[i], v[i]);
        }
    std::string knee;
    double best = 1e300;
    for (const auto& [id, v] : members) {
        double d = 0;
        for (std::size_t i = 0; i < 3; ++i) {
            const double x = hi[i] > lo[i] ? (v[i] - lo[i]) / (hi[i] - lo[i]) : 0;
            d += x * x;
        }
        if (d < best) {
            best = d;
            knee = id;
        }
    }
    const fastsim::JsonValue summary = fastsim::read_json_file(dir.path("out/knee/summary.json"));
    for (std::size_t i = 0; i < 3; ++i)
        CHECK(summary.find(kObjectives[i])->as_number() == Approx(members.at(knee)[i]).epsilon(1e-8));
    CHECK_THAT(slurp(dir.path("out/knee/report.json")), Contains("fastsim run " + kTinyNode + " -p node.array.rows="));
    CHECK_THAT(html, Contains("href=\"knee/report.html\""));
    CHECK_THAT(slurp(dir.path("out/knee/report.html")), Contains("<html"));
}

TEST_CASE("explore minimises a whole run's time or energy under a precision schedule", "[cli][explore]") {
    TempDir dir;
    const std::string config =
        dir.write("run.yaml", "run: {mode: training_step}\nworkload: {trace: " + std::string(FASTSIM_SOURCE_DIR) +
                                  "/traces/tiny_cnn.yaml, batch: 4, steps: 10}\nprecision:\n  schedule:\n"
                                  "    - {from_step: 0, weights: 2, activations: 2, gradients: 2}\n"
                                  "    - {from_step: 4, weights: 8, activations: 8, gradients: 8}\n");
    const std::string space =
        dir.write("space.yaml", "sweep:\n  name: whole\n  base: " + config +
                                    "\naxes:\n  - {key: node.array.rows, values: [4, 8, 16]}\n"
                                    "explore:\n  objectives: [run_energy_j, run_time_s, area_mm2]\n");
    REQUIRE(run_fastsim("explore " + space + " --out " + dir.path("out")).exit_code == 0);
    const auto designs = objectives_of(dir.path("out/designs.csv"), "design", "feasible", "1",
                                       {"run_energy_j", "run_time_s", "area_mm2"});
    REQUIRE(designs.size() == 3);
    // Each design's whole run is what `fastsim run` of it reports: 4 steps at 2 bits, 6 at 8.
    const Result one = run_fastsim("run " + config + " -p node.array.rows=8 --out " + dir.path("r8"));
    REQUIRE(one.exit_code == 0);
    const fastsim::JsonValue summary = fastsim::read_json_file(dir.path("r8/summary.json"));
    CHECK(designs.at("p0001")[0] == Approx(summary.find("run_energy_j")->as_number()).epsilon(1e-8));
    CHECK(designs.at("p0001")[1] == Approx(summary.find("run_time_s")->as_number()).epsilon(1e-8));
    // Not ten times one step: the steps at 8 bits cost more than those at 2.
    CHECK(designs.at("p0001")[1] > 10 * summary.find("time_ms")->as_number() * 1e-3);
}
