// SPDX-License-Identifier: MIT
// fastsim sweep / sweep-merge as a user runs them: resume after a kill, crashing points,
// shards merged equal to one run, refusals.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <filesystem>
#include <set>
#include <sstream>

#include "support/fastsim_process.h"
#include "support/temp_dir.h"

using Catch::Matchers::Contains;
using fastsim::test::Result;
using fastsim::test::run_fastsim;
using fastsim::test::slurp;
using fastsim::test::TempDir;
namespace fs = std::filesystem;

namespace {

const std::string kTinyNode = std::string(FASTSIM_SOURCE_DIR) + "/configs/tests/tiny_node.yaml";

/// A 10-point sweep of the tiny node: 5 array sizes x 2 weight precisions.
std::string write_tiny_sweep(const TempDir& dir, const std::string& name = "tiny",
                             const std::string& rows = "2, 3, 4, 5, 6") {
    return dir.write(name + ".yaml", "sweep:\n  name: " + name + "\n  base: " + kTinyNode +
                                         "\naxes:\n  - {key: node.array.rows, values: [" + rows +
                                         "]}\n  - {key: precision.weights, values: [2, 8]}\n");
}

/// results.csv rows (header excluded), and the point ids in them.
std::vector<std::string> rows_of(const std::string& csv) {
    std::vector<std::string> rows;
    std::istringstream in(csv);
    std::string line;
    std::getline(in, line);
    while (std::getline(in, line)) rows.push_back(line);
    return rows;
}

std::size_t point_records(const std::string& dir) {
    std::size_t n = 0;
    for (const auto& e : fs::directory_iterator(fs::path(dir) / "points"))
        n += fs::exists(e.path() / "point.json") ? 1 : 0;
    return n;
}

/// A point program that waits `delay_s` and then runs fastsim, or crashes (SIGSEGV) for `crash_id`.
std::string write_wrapper(const TempDir& dir, const std::string& delay_s, const std::string& crash_id = "none") {
    const std::string path =
        dir.write("wrapper.sh", "#!/bin/sh\ncase \"$*\" in *" + crash_id + "*) kill -SEGV $$;; esac\nsleep " + delay_s +
                                    "\nexec " + FASTSIM_BINARY + " \"$@\"\n");
    fs::permissions(path, fs::perms::owner_all);
    return path;
}

/// Starts `fastsim sweep SWEEP --out OUT --jobs 2` in the background with point program `wrapper`,
/// waits (up to 20 s) until `count` paths match OUT/`pattern`, then runs `signal_command` (which
/// may use $pid, the sweep's pid) and waits for the sweep. Returns the sweep's exit status; its
/// stderr is in DIR/err.
int interrupt_sweep(const TempDir& dir, const std::string& sweep, const std::string& out, const std::string& wrapper,
                    const std::string& pattern, int count, const std::string& signal_command) {
    const std::string script = "FASTSIM_SWEEP_EXE=" + wrapper + " " + FASTSIM_BINARY + " sweep " + sweep + " --out " +
                               out + " --jobs 2 >/dev/null 2>" + dir.path("err") +
                               " & pid=$!; i=0; "
                               "while [ $(ls -d " +
                               out + "/" + pattern + " 2>/dev/null | wc -l) -lt " + std::to_string(count) +
                               " ] && [ $i -lt 400 ]; do sleep 0.05; i=$((i+1)); done; " + signal_command +
                               "; wait $pid; echo $? >" + dir.path("rc");
    std::system(("sh -c '" + script + "'").c_str());
    return std::stoi(slurp(dir.path("rc")));
}

}  // namespace

TEST_CASE("a sweep writes one row per point and a rerun skips finished points", "[cli][sweep]") {
    TempDir dir;
    const std::string sweep = write_tiny_sweep(dir), out = dir.path("out");
    Result r = run_fastsim("sweep " + sweep + " --out " + out + " --jobs 2");
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Contains("sweep tiny: 10 ok, 0 failed, 0 not run, of 10 points"));
    const std::string csv = slurp(out + "/results.csv");
    CHECK_THAT(csv,
               Contains("point,node.array.rows,precision.weights,status,cycles,time_ms,macs,energy_uj,pj_per_mac"));
    const auto rows = rows_of(csv);
    REQUIRE(rows.size() == 10);
    CHECK_THAT(rows[3], Contains("p0003,3,8,ok,"));
    // The row holds the point's own run: its summary.json cycles.
    CHECK_THAT(slurp(out + "/points/p0003/summary.json"),
               Contains("\"cycles\": " + rows[3].substr(12, rows[3].find(',', 12) - 12)));
    r = run_fastsim("sweep " + sweep + " --out " + out);
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.err, Contains("10 already done, 0 failed before (not retried), 0 to run"));
    CHECK(slurp(out + "/results.csv") == csv);
}

TEST_CASE("a killed sweep resumes with no duplicate and no missing point", "[cli][sweep]") {
    TempDir dir;
    const std::string sweep = write_tiny_sweep(dir), out = dir.path("out");
    const std::string wrapper = write_wrapper(dir, "0.3");
    // Wait until two points are recorded, then SIGKILL the sweep mid-run.
    CHECK(interrupt_sweep(dir, sweep, out, wrapper, "points/*/point.json", 2, "kill -KILL $pid") == 128 + 9);
    const std::size_t before = point_records(out);
    CHECK(before >= 2);
    CHECK(before < 10);
    std::set<std::string> first_run;  // points finished before the kill: their records must survive unchanged
    for (const auto& e : fs::directory_iterator(fs::path(out) / "points"))
        if (fs::exists(e.path() / "point.json")) first_run.insert(slurp((e.path() / "point.json").string()));

    const Result r = run_fastsim("sweep " + sweep + " --out " + out + " --jobs 2");
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.err, Contains(std::to_string(before) + " already done"));
    const auto rows = rows_of(slurp(out + "/results.csv"));
    REQUIRE(rows.size() == 10);
    std::set<std::string> ids;
    for (const auto& row : rows) {
        ids.insert(row.substr(0, row.find(',')));
        CHECK_THAT(row, Contains(",ok,"));
    }
    CHECK(ids.size() == 10);
    for (const auto& e : fs::directory_iterator(fs::path(out) / "points"))
        if (first_run.count(slurp((e.path() / "point.json").string())))
            first_run.erase(slurp((e.path() / "point.json").string()));
    CHECK(first_run.empty());
}

TEST_CASE("SIGTERM stops a sweep, keeps finished points and exits 143", "[cli][sweep]") {
    TempDir dir;
    const std::string sweep = write_tiny_sweep(dir), out = dir.path("out");
    const std::string wrapper = write_wrapper(dir, "0.3");
    CHECK(interrupt_sweep(dir, sweep, out, wrapper, "points/*/point.json", 1, "kill -TERM $pid") == 143);
    CHECK_THAT(slurp(dir.path("err")), Contains("sweep interrupted by SIGTERM"));
    const auto rows = rows_of(slurp(out + "/results.csv"));
    CHECK(rows.size() == point_records(out));
    CHECK(rows.size() >= 1);
    CHECK(rows.size() < 10);
    for (const auto& row : rows) CHECK_THAT(row, Contains(",ok,"));  // interrupted points are not recorded as failures
}

TEST_CASE("a crashing point is recorded with its signal and the others finish", "[cli][sweep]") {
    TempDir dir;
    const std::string sweep = write_tiny_sweep(dir), out = dir.path("out");
    const std::string wrapper = write_wrapper(dir, "0", "p0004");
    Result r = run_fastsim("sweep " + sweep + " --out " + out + " --jobs 2", "", "FASTSIM_SWEEP_EXE=" + wrapper);
    CHECK(r.exit_code == 3);
    CHECK_THAT(r.out, Contains("9 ok, 1 failed"));
    CHECK_THAT(r.err, Contains("p0004 FAILED"));
    const auto rows = rows_of(slurp(out + "/results.csv"));
    REQUIRE(rows.size() == 10);
    CHECK_THAT(rows[4], Contains("p0004,4,2,failed,") && Contains("killed by SIGSEGV"));
    CHECK_THAT(slurp(out + "/points/p0004/point.json"), Contains("\"signal\": \"SIGSEGV\""));
    // A plain rerun keeps the failure; --retry-failed runs it again.
    r = run_fastsim("sweep " + sweep + " --out " + out);
    CHECK(r.exit_code == 3);
    CHECK_THAT(r.err, Contains("9 already done, 1 failed before (not retried), 0 to run"));
    r = run_fastsim("sweep " + sweep + " --out " + out + " --retry-failed");
    CHECK(r.exit_code == 0);
    CHECK_THAT(rows_of(slurp(out + "/results.csv"))[4], Contains("p0004,4,2,ok,"));
}

TEST_CASE("a point with a bad override fails with the config error and exit status 2", "[cli][sweep]") {
    TempDir dir;
    const std::string sweep = write_tiny_sweep(dir, "bad", "2, 0"), out = dir.path("out");
    const Result r = run_fastsim("sweep " + sweep + " --out " + out);
    CHECK(r.exit_code == 3);
    const auto rows = rows_of(slurp(out + "/results.csv"));
    REQUIRE(rows.size() == 4);
    CHECK_THAT(rows[0], Contains(",ok,"));
    CHECK_THAT(rows[2], Contains("p0002,0,2,failed,") && Contains("exit status 2: fastsim: error: -p node.array.rows"));
}

TEST_CASE("shards merged equal a single-process sweep", "[cli][sweep]") {
    TempDir dir;
    const std::string sweep = write_tiny_sweep(dir);
    REQUIRE(run_fastsim("sweep " + sweep + " --out " + dir.path("all") + " --jobs 1").exit_code == 0);
    for (const char* k : {"1", "2", "3"}) {
        const Result r =
            run_fastsim("sweep " + sweep + " --out " + dir.path(std::string("s") + k) + " --shard " + k + "/3");
        REQUIRE(r.exit_code == 0);
        CHECK(rows_of(slurp(dir.path(std::string("s") + k) + "/results.csv")).size() == (k[0] == '1' ? 4u : 3u));
    }
    const Result r = run_fastsim("sweep-merge " + dir.path("s1") + " " + dir.path("s2") + " " + dir.path("s3") +
                                 " --out " + dir.path("merged"));
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Contains("10 of 10 points (10 ok, 0 failed)"));
    CHECK(slurp(dir.path("merged") + "/results.csv") == slurp(dir.path("all") + "/results.csv"));
    // Two of three shards: merged, with the missing points named.
    const Result partial =
        run_fastsim("sweep-merge " + dir.path("s1") + " " + dir.path("s3") + " --out " + dir.path("partial"));
    CHECK(partial.exit_code == 0);
    CHECK_THAT(partial.err, Contains("3 point(s) missing") && Contains(" 1 4 7"));
}

TEST_CASE("sweep-merge and sweep refuse directories of another sweep", "[cli][sweep]") {
    TempDir dir;
    const std::string a = write_tiny_sweep(dir, "a"), b = write_tiny_sweep(dir, "b", "2, 3, 4, 5, 7");
    REQUIRE(run_fastsim("sweep " + a + " --out " + dir.path("a") + " --shard 1/5").exit_code == 0);
    REQUIRE(run_fastsim("sweep " + b + " --out " + dir.path("b") + " --shard 1/5").exit_code == 0);
    Result r = run_fastsim("sweep-merge " + dir.path("a") + " " + dir.path("b") + " --out " + dir.path("m"));
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains(dir.path("b") + " holds another sweep than " + dir.path("a")));
    CHECK_FALSE(fs::exists(dir.path("m") + "/results.csv"));
    // A shard a sweep is still writing (its lock held) is not merged.
    {
        const std::string lock_path = dir.path("a") + "/.lock-1-of-5";
        const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        REQUIRE(fd >= 0);
        REQUIRE(::flock(fd, LOCK_EX | LOCK_NB) == 0);
        const Result running = run_fastsim("sweep-merge " + dir.path("a") + " --out " + dir.path("m"));
        ::close(fd);
        CHECK(running.exit_code == 2);
        CHECK_THAT(running.err, Contains(dir.path("a") + " is still being written"));
        CHECK_FALSE(fs::exists(dir.path("m") + "/results.csv"));
    }
    r = run_fastsim("sweep " + b + " --out " + dir.path("a"));
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains(dir.path("a") + " holds another sweep ('a'"));
    r = run_fastsim("sweep " + a + " --out " + dir.path("x") + " --shard 4/3");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("--shard: expected k/N"));
    r = run_fastsim("sweep " + dir.write("broken.yaml", "sweep: {base: " + kTinyNode + "}\naxes: 3\n") + " --out " +
                    dir.path("y"));
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("broken.yaml:2:") && Contains("axes"));
}

TEST_CASE("fastsim report of a real sweep directory shows every point and writes its plots", "[cli][sweep][report]") {
    TempDir dir;
    const std::string sweep = write_tiny_sweep(dir), out = dir.path("out");
    REQUIRE(run_fastsim("sweep " + sweep + " --out " + out).exit_code == 0);
    const Result r = run_fastsim("report " + out);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.out, Contains("wrote " + out + "/report.html and 5 plots in " + out + "/plots"));
    const std::string html = slurp(out + "/report.html");
    for (int i = 0; i < 10; ++i) CHECK_THAT(html, Contains("p000" + std::to_string(i)));
    for (const char* plot : {"cycles", "energy_uj", "utilisation_percent", "pj_per_mac", "energy_breakdown"})
        CHECK(fs::file_size(out + "/plots/" + plot + ".svg") > 1000);
}

TEST_CASE("points stopped from outside stay unrecorded, not failed, and a rerun runs them", "[cli][sweep]") {
    TempDir dir;
    const std::string sweep = write_tiny_sweep(dir), out = dir.path("out");
    const std::string wrapper = write_wrapper(dir, "0.5");
    // SIGTERM the running points (as scancel or a job kill would), not the sweep itself.
    CHECK(interrupt_sweep(dir, sweep, out, wrapper, "points/p*", 2, "sleep 0.1; pkill -TERM -P $pid") == 3);
    CHECK_THAT(slurp(dir.path("err")), Contains("point(s) were stopped from outside and not recorded"));
    const auto rows = rows_of(slurp(out + "/results.csv"));
    CHECK(rows.size() < 10);
    for (const auto& row : rows) CHECK_THAT(row, Contains(",ok,"));
    const Result r = run_fastsim("sweep " + sweep + " --out " + out + " --jobs 2");
    CHECK(r.exit_code == 0);
    CHECK_THAT(r.err, Contains("0 failed before (not retried)"));
    CHECK(rows_of(slurp(out + "/results.csv")).size() == 10);
}

TEST_CASE("sweep option and environment errors exit 2 before running anything", "[cli][sweep]") {
    TempDir dir;
    const std::string sweep = write_tiny_sweep(dir);
    Result r = run_fastsim("sweep " + sweep + " --out " + dir.path("a") + " --jobs -1");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("--jobs: expected 1 to 4096"));
    r = run_fastsim("sweep " + sweep + " --out " + dir.path("a") + " --point-timeout-s nan");
    CHECK(r.exit_code == 2);
    r = run_fastsim("sweep " + sweep + " --out " + dir.path("b"), "", "FASTSIM_SWEEP_EXE=no-such-program-here");
    CHECK(r.exit_code == 2);
    CHECK_THAT(r.err, Contains("FASTSIM_SWEEP_EXE=no-such-program-here: not an executable file on PATH"));
    CHECK_FALSE(fs::exists(dir.path("b") + "/points"));
    REQUIRE(run_fastsim("sweep " + sweep + " --out " + dir.path("c") + " --shard 1/5").exit_code == 0);
    fs::create_directories(dir.path("junk"));
    dir.write("junk/results.csv", "mine\n");
    r = run_fastsim("sweep-merge " + dir.path("c") + " --out " + dir.path("junk"));
    CHECK(r.exit_code == 2);
    CHECK(slurp(dir.path("junk") + "/results.csv") == "mine\n");
}
