// SPDX-License-Identifier: MIT
// A run directory is one run, whole or absent (docs/cli.md, "Output directories"): `run`, `plan`,
// `compare` and `train --out` refuse a folder holding another run unless --force, leave the
// earlier run whole when they fail, take the sweep's lock, and readers refuse a mixed folder.
#include <catch2/catch.hpp>

#include <fcntl.h>
#include <sys/wait.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>
#include <vector>

#include "support/fastsim_process.h"
#include "support/temp_dir.h"

using Catch::Matchers::Contains;
using fastsim::test::Result;
using fastsim::test::run_fastsim;
using fastsim::test::slurp;
using fastsim::test::TempDir;

namespace {

namespace fs = std::filesystem;

const std::string kTinyNode = std::string(FASTSIM_SOURCE_DIR) + "/configs/tests/tiny_node.yaml";
const std::string kTinyCluster = std::string(FASTSIM_SOURCE_DIR) + "/configs/tests/tiny_cluster.yaml";

/// Every file under `dir` (relative path -> contents), the lock file left out.
std::map<std::string, std::string> contents(const std::string& dir) {
    std::map<std::string, std::string> out;
    for (const auto& e : fs::recursive_directory_iterator(dir))
        if (e.is_regular_file() && e.path().filename() != ".lock-1-of-1")
            out[fs::relative(e.path(), dir).string()] = slurp(e.path().string());
    return out;
}

}  // namespace

TEST_CASE("run --out: a folder holding a run is refused, replaced whole with --force, kept when a run fails",
          "[cli][run_dir]") {
    TempDir dir;
    const std::string out = dir.path("r");
    REQUIRE(run_fastsim("run " + kTinyCluster + " --out " + out).exit_code == 0);
    CHECK(fs::exists(out + "/manifest.json"));
    const auto first = contents(out);

    // Refused before any work, the earlier run untouched.
    const Result again = run_fastsim("run " + kTinyCluster + " -p workload.batch=4 --out " + out);
    CHECK(again.exit_code == 2);
    CHECK_THAT(again.err, Contains("--out " + out + " holds another run (") &&
                              Contains("use another folder, or --force to replace that run whole"));
    CHECK(contents(out) == first);

    // A run that fails once its work has started (no plan: batch 1 cannot be split by data
    // parallelism over two nodes) leaves the earlier run whole and no staged files.
    const Result failed =
        run_fastsim("run " + kTinyCluster + " -p workload.batch=1 -p planner.name=data_parallel --force --out " + out);
    CHECK(failed.exit_code == 2);
    CHECK(contents(out) == first);
    // The same failure into a new folder leaves no folder behind.
    const std::string fresh = dir.path("fresh");
    CHECK(run_fastsim("run " + kTinyCluster + " -p workload.batch=1 -p planner.name=data_parallel --out " + fresh)
              .exit_code == 2);
    CHECK_FALSE(fs::exists(fresh));

    // --force replaces it whole: a node run where a cluster run was leaves no nodes.csv or plan.json.
    REQUIRE(run_fastsim("report " + out).exit_code == 0);
    REQUIRE(run_fastsim("run " + kTinyNode + " --force --out " + out).exit_code == 0);
    const auto second = contents(out);
    for (const char* gone : {"nodes.csv", "plan.json", "plan.csv", "report.html"}) CHECK(second.count(gone) == 0);
    for (const char* kept : {"report.json", "layers.csv", "summary.json", "config.yaml", "manifest.json"})
        CHECK(second.count(kept) == 1);
    CHECK(run_fastsim("report " + out).exit_code == 0);

    // Replacing a run removes only files inside its folder, whatever its manifest lists.
    std::ofstream(dir.path("outside.txt")) << "keep";
    std::ofstream(out + "/manifest.json")
        << R"({"files": [{"name": "../outside.txt", "bytes": 4, "fnv1a": "0"}, {"name": ")" + dir.path("outside.txt") +
               R"(", "bytes": 4, "fnv1a": "0"}, {"name": ".", "bytes": 4, "fnv1a": "0"}]})";
    REQUIRE(run_fastsim("run " + kTinyNode + " --force --out " + out).exit_code == 0);
    CHECK(slurp(dir.path("outside.txt")) == "keep");

    // --force without --out is an error.
    const Result lone = run_fastsim("run " + kTinyNode + " --force");
    CHECK(lone.exit_code == 2);
    CHECK_THAT(lone.err, Contains("--force applies with --out DIR"));
}

TEST_CASE("run --out takes the sweep's lock: a second run into the same folder is refused", "[cli][run_dir]") {
    TempDir dir;
    const std::string out = dir.path("r");
    fs::create_directories(out);
    const std::string lock_path = out + "/.lock-1-of-1";
    const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    REQUIRE(fd >= 0);
    REQUIRE(::flock(fd, LOCK_EX | LOCK_NB) == 0);
    for (const std::string& command : {"run " + kTinyNode, "plan " + kTinyCluster, "compare " + kTinyCluster}) {
        const Result locked = run_fastsim(command + " --out " + out);
        CHECK(locked.exit_code == 2);
        CHECK_THAT(locked.err, Contains("another fastsim command") && Contains("is writing into " + out));
    }
    ::close(fd);
    CHECK(contents(out).empty());
    CHECK(run_fastsim("run " + kTinyNode + " --out " + out).exit_code == 0);
    // A staging folder left by a killed run is removed by the next run into the folder.
    fs::create_directories(out + "/.partial-999999");
    std::ofstream(out + "/.partial-999999/report.json") << "{";
    REQUIRE(run_fastsim("run " + kTinyNode + " --force --out " + out).exit_code == 0);
    CHECK_FALSE(fs::exists(out + "/.partial-999999"));
}

TEST_CASE("A run ended by SIGINT, SIGTERM or SIGHUP removes its staging folder and ends by that signal",
          "[cli][run_dir]") {
    TempDir dir;
    const std::string quickstart = std::string(FASTSIM_SOURCE_DIR) + "/configs/quickstart.yaml";
    for (const int signal : {SIGINT, SIGTERM, SIGHUP}) {
        const std::string out = dir.path("r" + std::to_string(signal));
        // A stepped step of several seconds; SIGINT's default is restored, as a shell without
        // job control would have it ignored in a background command.
        const pid_t pid = ::fork();
        REQUIRE(pid >= 0);
        if (pid == 0) {
            ::signal(SIGINT, SIG_DFL);
            const int null = ::open("/dev/null", O_WRONLY);
            ::dup2(null, STDOUT_FILENO);
            ::dup2(null, STDERR_FILENO);
            ::execl(FASTSIM_BINARY, "fastsim", "run", quickstart.c_str(), "--fidelity", "stepped", "-p",
                    "workload.batch=8", "--max-work", "1000", "--out", out.c_str(), static_cast<char*>(nullptr));
            ::_exit(127);
        }
        bool staged = false;
        for (int waited_ms = 0; waited_ms < 20000 && !staged; waited_ms += 10) {
            ::usleep(10000);
            std::error_code ec;
            for (const auto& e : fs::directory_iterator(out, ec))
                staged = staged || e.path().filename().string().rfind(".partial-", 0) == 0;
        }
        REQUIRE(staged);
        ::usleep(200000);  // well into the simulation
        ::kill(pid, signal);
        int status = 0;
        REQUIRE(::waitpid(pid, &status, 0) == pid);
        CHECK(WIFSIGNALED(status));
        CHECK(WTERMSIG(status) == signal);
        CHECK(contents(out).empty());  // nothing but the lock file: no staging folder, no run
        for (const auto& e : fs::directory_iterator(out)) CHECK(e.path().filename() == ".lock-1-of-1");
    }
}

TEST_CASE("An output path that is a FIFO is written into, never replaced by a file, and a directory is refused",
          "[cli][run_dir]") {
    TempDir dir;
    REQUIRE(run_fastsim("run " + kTinyNode + " --out " + dir.path("r")).exit_code == 0);
    const std::string onnx = std::string(FASTSIM_SOURCE_DIR) + "/tests/data/onnx/features.onnx";
    const std::vector<std::string> commands{"report " + dir.path("r") + " --out ", "run " + kTinyNode + " --trace ",
                                            "import " + onnx + " --force --out "};
    for (const std::string& command : commands) {
        const std::string fifo = dir.path("fifo.yaml");
        fs::remove(fifo);
        REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
        std::string read;
        std::thread reader([&] { read = slurp(fifo); });  // opens the FIFO, as a pipe's reader would
        const Result r = run_fastsim(command + fifo);
        // Had fastsim not opened it, the reader would wait for a writer for ever: give it one.
        if (const int fd = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK); fd >= 0) ::close(fd);
        reader.join();
        CHECK(r.exit_code == 0);
        CHECK(fs::is_fifo(fifo));
        CHECK(read.size() > 100);
    }
    const Result into_dir = run_fastsim("report " + dir.path("r") + " --out " + dir.path("r"));
    CHECK(into_dir.exit_code == 2);
    CHECK_THAT(into_dir.err, Contains("cannot write " + dir.path("r") + ": it is a directory"));
}

TEST_CASE("report and diff refuse a folder that is not one complete run", "[cli][run_dir]") {
    TempDir dir;
    const std::string a = dir.path("a"), b = dir.path("b");
    REQUIRE(run_fastsim("run " + kTinyNode + " --out " + a).exit_code == 0);
    REQUIRE(run_fastsim("run " + kTinyNode + " -p workload.batch=2 --out " + b).exit_code == 0);
    REQUIRE(run_fastsim("diff " + a + " " + b).exit_code == 0);

    // One file of another run: its manifest says it is not this run's.
    fs::copy_file(b + "/summary.json", a + "/summary.json", fs::copy_options::overwrite_existing);
    for (const std::string& command : {"report " + a, "diff " + a + " " + b}) {
        const Result r = run_fastsim(command);
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Contains(a + " is not one complete run: summary.json is not the file its run wrote"));
    }
    fs::remove(a + "/summary.json");
    CHECK_THAT(run_fastsim("report " + a).err, Contains("summary.json, which its manifest lists, is missing"));

    // A folder of an earlier version (no manifest) is read when its files agree, refused when not.
    fs::remove(b + "/manifest.json");
    CHECK(run_fastsim("report " + b).exit_code == 0);
    fs::copy_file(dir.path("a/report.json"), b + "/report.json", fs::copy_options::overwrite_existing);
    const Result mixed = run_fastsim("report " + b);
    CHECK(mixed.exit_code == 2);
    CHECK_THAT(mixed.err, Contains(b + " mixes two runs") && Contains("summary.json's time_ms is "));

    // layers.csv of another run, row by row against report.json's phases, for report and diff.
    const std::string c = dir.path("c"), d = dir.path("d");
    REQUIRE(run_fastsim("run " + kTinyNode + " --out " + c).exit_code == 0);
    REQUIRE(run_fastsim("run " + kTinyNode + " -p workload.batch=2 --out " + d).exit_code == 0);
    fs::remove(c + "/manifest.json");
    fs::copy_file(d + "/layers.csv", c + "/layers.csv", fs::copy_options::overwrite_existing);
    for (const std::string& command : {"report " + c, "diff " + c + " " + d}) {
        const Result r = run_fastsim(command);
        CHECK(r.exit_code == 2);
        CHECK_THAT(r.err, Contains(c + " mixes two runs") && Contains(c + "/layers.csv:2: column 'm' is "));
    }
}

TEST_CASE("train --out: a finished run is neither truncated nor mixed with a new one", "[cli][run_dir][training]") {
    TempDir dir;
    const std::string slice = std::string(FASTSIM_SOURCE_DIR) + "/tests/data/train/mlp_slice.yaml";
    const std::string out = dir.path("t");
    REQUIRE(run_fastsim("train " + slice + " --policy fast --out " + out).exit_code == 0);
    const auto first = contents(out);
    CHECK(first.count("comparison.csv") == 1);
    const Result again = run_fastsim("train " + slice + " --policy fast --out " + out);
    CHECK(again.exit_code == 2);
    CHECK_THAT(again.err, Contains("holds another run"));
    CHECK(contents(out) == first);
    REQUIRE(run_fastsim("train " + slice + " --policy fast --out " + out + " --force").exit_code == 0);
    CHECK(contents(out).count("manifest.json") == 1);
    CHECK(run_fastsim("report " + out).exit_code == 0);
}

TEST_CASE("report and diff refuse damaged tables in a folder without a manifest", "[cli][run_dir][report]") {
    TempDir dir;
    const std::string node = dir.path("n"), cluster = dir.path("c"), train = dir.path("t");
    REQUIRE(run_fastsim("run " + kTinyNode + " --out " + node).exit_code == 0);
    REQUIRE(run_fastsim("run " + kTinyCluster + " --out " + cluster).exit_code == 0);
    const std::string slice = std::string(FASTSIM_SOURCE_DIR) + "/tests/data/train/mlp_slice.yaml";
    REQUIRE(run_fastsim("train " + slice + " --policy fast --out " + train).exit_code == 0);
    for (const std::string& d : {node, cluster, train}) fs::remove(d + "/manifest.json");  // an earlier version's
    const auto refused = [&](const std::string& run, const std::string& file, const std::string& content,
                             const std::string& expected) {
        const std::string kept = slurp(run + "/" + file);
        std::ofstream(run + "/" + file, std::ios::trunc) << content;
        std::vector<std::string> commands{"report " + run};
        if (file == "layers.csv") commands.push_back("diff " + run + " " + run);
        for (const std::string& command : commands) {
            const Result r = run_fastsim(command);
            CHECK(r.exit_code == 2);
            CHECK_THAT(r.err, Contains("error: " + run + "/" + file + expected));
        }
        std::ofstream(run + "/" + file, std::ios::trunc) << kept;
    };
    const std::string layers = slurp(node + "/layers.csv");
    const std::string header = layers.substr(0, layers.find('\n') + 1);
    const auto replaced = [](std::string text, const std::string& from, const std::string& to) {
        const std::size_t at = text.find(from);
        REQUIRE(at != std::string::npos);
        return text.replace(at, from.size(), to);
    };
    // The first row's cycles (a node run's 12th column) as -5, then as 1e400.
    const auto with_cycles = [&](const std::string& value) {
        std::string text = layers;
        std::size_t at = header.size();
        for (int c = 0; c < 11; ++c) at = text.find(',', at) + 1;
        return text.replace(at, text.find(',', at) - at, value);
    };
    refused(node, "layers.csv", with_cycles("-5"), ":2: column 'cycles': '-5' is not a finite number of at least 0");
    refused(node, "layers.csv", with_cycles("1e400"), ":2: column 'cycles': '1e400' is not a finite number");
    refused(node, "layers.csv", header, ": a header and no rows (a file cut short?)");
    refused(node, "layers.csv", layers.substr(0, 40) + "\n", "");  // a header cut short: no rows, no cycles
    const std::string nodes = slurp(cluster + "/nodes.csv");
    refused(cluster, "nodes.csv", nodes.substr(0, nodes.find('\n') + 1), ": a header and no rows");
    const std::string cluster_layers = slurp(cluster + "/layers.csv");
    const std::size_t row = cluster_layers.find('\n') + 1, end = cluster_layers.find('\n', row);
    const std::string first = cluster_layers.substr(row, end - row);
    refused(cluster, "layers.csv", replaced(cluster_layers, first, first.substr(0, first.rfind(',') + 1) + "nan"),
            ":2: column 'simulated_s': 'nan' is not a finite number");
    refused(train, "comparison.csv", "policy,final_test_accuracy,tot\n", ": a header and no rows");
    refused(train, "plots/accuracy.svg", "<svg", ": not a whole SVG document");
    CHECK(run_fastsim("report " + train).exit_code == 0);
    CHECK(run_fastsim("report " + cluster).exit_code == 0);
    CHECK(run_fastsim("diff " + node + " " + node).exit_code == 0);
}

TEST_CASE("A commit cut short is put back by the next command into the folder, and other files are kept",
          "[cli][run_dir]") {
    TempDir dir;
    const std::string out = dir.path("r");
    REQUIRE(run_fastsim("run " + kTinyNode + " --out " + out).exit_code == 0);
    std::ofstream(out + "/notes.txt") << "mine";
    const auto first = contents(out);

    // Killed after moving the earlier run aside and one new file in: the marker names it.
    fs::create_directories(out + "/.old-4242");
    for (const char* name : {"manifest.json", "report.json", "layers.csv", "summary.json", "config.yaml"})
        fs::rename(out + "/" + name, out + "/.old-4242/" + name);
    std::ofstream(out + "/report.json") << "{\"half\": true}";
    std::ofstream(out + "/.committing") << "report.json\n";
    const Result refused = run_fastsim("report " + out);
    CHECK(refused.exit_code == 2);
    CHECK_THAT(refused.err, Contains("its command stopped while replacing its files"));
    // The next run into it puts the earlier run back, then refuses to replace it without --force.
    const Result next = run_fastsim("run " + kTinyNode + " -p workload.batch=2 --out " + out);
    CHECK(next.exit_code == 2);
    CHECK_THAT(next.err, Contains("holds another run"));
    CHECK(contents(out) == first);

    // Killed while moving the earlier run aside (no marker yet, no manifest in the folder).
    fs::create_directories(out + "/.old-4243");
    for (const char* name : {"manifest.json", "report.json"}) fs::rename(out + "/" + name, out + "/.old-4243/" + name);
    CHECK(run_fastsim("report " + out).exit_code == 2);
    CHECK(run_fastsim("run " + kTinyNode + " --out " + out).exit_code == 2);
    CHECK(contents(out) == first);

    // --force replaces the run and its page, and leaves a file that is no run's alone.
    REQUIRE(run_fastsim("run " + kTinyNode + " -p workload.batch=2 --force --out " + out).exit_code == 0);
    CHECK(slurp(out + "/notes.txt") == "mine");
    CHECK(contents(out) != first);

    // A folder holding a file of a run's name, but no run, is refused rather than overwritten.
    const std::string mine = dir.path("mine");
    fs::create_directories(mine);
    std::ofstream(mine + "/config.yaml") << "# my notes";
    const Result clash = run_fastsim("run " + kTinyNode + " --out " + mine);
    CHECK(clash.exit_code == 2);
    CHECK_THAT(clash.err, Contains("holds config.yaml, a name a run writes"));
    CHECK(slurp(mine + "/config.yaml") == "# my notes");
}
