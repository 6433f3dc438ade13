// SPDX-License-Identifier: MIT
// `fastsim sweep` and `fastsim sweep-merge` (docs/sweeps.md).
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <iostream>
#include <optional>
#include <thread>

#include <boost/program_options.hpp>

#include "cli/app.h"
#include "cli/logging.h"
#include "common/machine.h"
#include "common/errors.h"
#include "common/output_files.h"
#include "run/work.h"
#include "sweep/mpi_runner.h"
#include "sweep/point_process.h"
#include "sweep/runner.h"
#include "sweep/sweep_dir.h"
#include "sweep/sweep_spec.h"

namespace fastsim::cli {
namespace {

namespace po = boost::program_options;
namespace fs = std::filesystem;

void print_points(const std::vector<sweep::SweepPoint>& points, const sweep::Shard& shard) {
    for (const auto& p : points) {
        if (!shard.contains(p.index)) continue;
        std::cout << p.id;
        for (const auto& [key, value] : p.values) std::cout << "  " << key << "=" << value;
        std::cout << '\n';
    }
}

}  // namespace

int sweep_command(const std::vector<std::string>& args) {
    po::options_description options(
        "fastsim sweep SWEEP.yaml --out DIR [--jobs N] [--shard k/N] [--retry-failed] [--point-timeout-s S] "
        "[--max-work S] [--list]\n\n"
        "Runs every design point of a sweep as its own `fastsim run` process; rerun the same command to\n"
        "resume. Writes DIR/points/<id>/ per point and DIR/results.csv (docs/sweeps.md).\n\nOptions");
    std::string sweep_path, out_dir, shard_text = "1/1", max_work;
    long jobs = usable_cores();
    double timeout_s = 0;
    options.add_options()("sweep", po::value(&sweep_path), "sweep YAML file")(
        "out", po::value(&out_dir), "output directory (created; reused to resume the same sweep)")(
        "jobs,j", po::value(&jobs)->default_value(jobs),
        "points run at a time (default: the cores this process may use)")(
        "shard", po::value(&shard_text), "run only shard k of N: the points with index % N == k-1 (k = 1..N)")(
        "retry-failed", "rerun points recorded as failed (finished points are always skipped)")(
        "point-timeout-s", po::value(&timeout_s), "kill and record as failed a point running longer than this")(
        "max-work", po::value(&max_work),
        "each point's work limit in estimated seconds (fastsim run --max-work; default 20, docs/cli.md)")(
        "list", "print the points (of the shard) and exit")(
        "mpi",
        "under mpirun -n K (K >= 2): rank 0 hands out points, ranks 1..K-1 run them (needs -DFASTSIM_WITH_MPI=ON)");
    po::positional_options_description positional;
    positional.add("sweep", 1);
    const auto parsed = parse_command_line(args, options, positional);
    if (!parsed) return kSuccess;
    const po::variables_map& vm = *parsed;
    if (sweep_path.empty()) throw UserError("missing SWEEP.yaml: fastsim sweep SWEEP.yaml --out DIR");
    if (jobs < 1 || jobs > sweep::kMaxJobs)
        throw UserError("--jobs: expected 1 to " + std::to_string(sweep::kMaxJobs) + ", got " + std::to_string(jobs));
    // 0 = no limit; else 1 ms … 10^7 s (116 days), which a steady_clock duration holds exactly.
    if (!(timeout_s == 0 || (timeout_s >= 1e-3 && timeout_s <= 1e7)))
        throw UserError("--point-timeout-s: expected 0 (no limit) or seconds from 0.001 to 10000000, got " +
                        fastsim::format_number(timeout_s));
    const sweep::Shard shard = sweep::parse_shard(shard_text);

    const sweep::SweepSpec spec = sweep::load_sweep(sweep_path);
    const std::vector<sweep::SweepPoint> points = sweep::enumerate_points(spec);
    if (vm.count("list")) {
        print_points(points, shard);
        return kSuccess;
    }
    if (out_dir.empty()) throw UserError("missing --out DIR: where the sweep's results go");
    const bool use_mpi = vm.count("mpi") > 0;
    sweep::LocalRunOptions run_options{
        out_dir, sweep::point_executable(), static_cast<std::size_t>(jobs), timeout_s, {}};
    if (vm.count("max-work"))
        run_options.point_args = {"--max-work", fastsim::format_number(run::parse_max_work(max_work))};
    if (use_mpi && sweep::mpi_rank() != 0) {  // a worker: runs what rank 0 hands out, reports nothing
        sweep::run_points_mpi(points, {}, run_options, nullptr);
        sweep::mpi_finalize();
        return kSuccess;
    }
    const sweep::SweepIdentity identity = sweep::identity_of(spec, points);
    sweep::PointSelection selection;
    std::optional<sweep::SweepDirLock> lock;
    try {
        sweep::claim_sweep_dir(out_dir, identity);
        lock.emplace(out_dir, shard);
        selection = sweep::select_points(points, shard, sweep::read_point_records(out_dir, identity),
                                         vm.count("retry-failed") > 0);
    } catch (...) {
        if (use_mpi) {  // release the workers before reporting the error
            sweep::run_points_mpi(points, {}, run_options, nullptr);
            sweep::mpi_finalize();
        }
        throw;
    }
    std::cerr << "sweep " << spec.name << ": " << points.size() << " points";
    if (shard.count > 1) std::cerr << ", shard " << shard.k << "/" << shard.count << " has " << selection.in_shard;
    std::cerr << "; " << selection.already_ok << " already done, " << selection.failed_skipped
              << " failed before (not retried), " << selection.to_run.size() << " to run, ";
    if (use_mpi)
        std::cerr << "on the MPI ranks\n";
    else
        std::cerr << jobs << " at a time\n";

    sweep::ProgressMeter progress(selection.in_shard, selection.already_ok, selection.failed_skipped,
                                  selection.to_run.size(), ::isatty(STDERR_FILENO) != 0);
    int interrupted_by = 0;
    if (use_mpi) {
        sweep::run_points_mpi(points, selection.to_run, run_options, &progress);
        sweep::mpi_finalize();
    } else {
        interrupted_by = sweep::run_points_locally(points, selection.to_run, run_options, progress);
    }
    progress.done();
    const auto records = sweep::read_point_records(out_dir, identity);
    fastsim::write_file_atomically((fs::path(out_dir) / "results.csv").string(), sweep::results_csv(identity, records));
    std::size_t ok = 0, failed = 0;
    for (const auto& [index, r] : records)
        if (shard.contains(index)) ++(r.ok ? ok : failed);
    std::cout << "sweep " << spec.name << ": " << ok << " ok, " << failed << " failed, "
              << selection.in_shard - ok - failed << " not run, of " << selection.in_shard << " points"
              << (shard.count > 1 ? " in shard " + shard_text : "") << "; results in " << out_dir << "/results.csv\n";
    if (interrupted_by != 0) {
        std::cerr << "sweep interrupted by " << sweep::signal_name(interrupted_by)
                  << ": finished points are kept; run the same command again to resume\n";
        return 128 + interrupted_by;
    }
    if (failed > 0) {
        std::cerr << "sweep: " << failed
                  << " point(s) failed; their errors are in results.csv and points/<id>/stderr.txt;"
                  << " rerun with --retry-failed to run them again\n";
        return kPointsFailed;
    }
    if (ok < selection.in_shard) {
        std::cerr << "sweep: " << selection.in_shard - ok << " point(s) were stopped from outside and not recorded;"
                  << " run the same command again to run them\n";
        return kPointsFailed;
    }
    return kSuccess;
}

int sweep_merge_command(const std::vector<std::string>& args) {
    po::options_description options(
        "fastsim sweep-merge DIR... --out DIR\n\n"
        "Joins the output directories of one sweep's shards into DIR/results.csv (and DIR/sweep.json,\n"
        "so `fastsim report DIR` works on it). Refuses directories of different sweeps.\n\nOptions");
    std::vector<std::string> dirs;
    std::string out_dir;
    options.add_options()("dirs", po::value(&dirs)->composing(), "shard output directories")(
        "out", po::value(&out_dir), "directory for the merged results.csv and sweep.json");
    po::positional_options_description positional;
    positional.add("dirs", -1);
    const auto parsed = parse_command_line(args, options, positional);
    if (!parsed) return kSuccess;
    if (dirs.empty() || out_dir.empty()) throw UserError("usage: fastsim sweep-merge DIR... --out DIR");

    for (const std::string& dir : dirs) sweep::refuse_while_written(dir);  // a shard still running
    const sweep::SweepIdentity identity = sweep::read_sweep_json(dirs.front());
    std::map<std::size_t, sweep::PointRecord> merged;
    for (const std::string& dir : dirs) {
        const sweep::SweepIdentity other = sweep::read_sweep_json(dir);
        if (!other.same_sweep(identity))
            throw UserError(dir + " holds another sweep than " + dirs.front() + " ('" + other.name + "', fingerprint " +
                            other.fingerprint + ", " + std::to_string(other.points) + " points vs '" + identity.name +
                            "', " + identity.fingerprint + ", " + std::to_string(identity.points) + " points)");
        // Axes come from the sweep file alone; paths may differ between the shards' machines, so
        // each shard's records are read against its own sweep.json.
        const auto axes_of = [](const sweep::SweepIdentity& id) {
            std::vector<std::pair<std::string, std::vector<std::string>>> axes;
            for (const auto& a : id.axes) axes.emplace_back(a.name, a.keys);
            return axes;
        };
        if (axes_of(other) != axes_of(identity))
            throw UserError(dir + "/sweep.json: axes: not those of " + dirs.front() +
                            "/sweep.json, though the fingerprints agree: the file was edited");
        for (auto& [index, record] : sweep::read_point_records(dir, other)) {
            const auto it = merged.find(index);
            if (it == merged.end() || (!it->second.ok && record.ok)) {  // a point retried elsewhere keeps its success
                merged[index] = std::move(record);
            } else if (it->second.ok && record.ok && !sweep::same_outcome(it->second, record)) {
                throw UserError(dir + "/points/" + record.id + "/point.json: point " + record.id +
                                " is recorded as ok in two directories with different results; keep one of them");
            }
        }
    }
    // Every record's index is below identity.points (read_point_records), so the missing
    // points are counted without listing them all; the first 20 are named.
    const std::size_t missing = identity.points > merged.size() ? identity.points - merged.size() : 0;
    std::vector<std::string> first_missing;
    for (std::size_t i = 0; i < identity.points && first_missing.size() < 20; ++i)
        if (!merged.count(i)) first_missing.push_back(std::to_string(i));
    sweep::claim_sweep_dir(out_dir, identity);
    const sweep::SweepDirLock lock(out_dir, sweep::Shard{}, "sweep-merge");
    fastsim::write_file_atomically((fs::path(out_dir) / "results.csv").string(), sweep::results_csv(identity, merged));
    std::size_t ok = 0;
    for (const auto& [index, r] : merged) ok += r.ok ? 1 : 0;
    std::cout << "merged " << dirs.size() << " director" << (dirs.size() == 1 ? "y" : "ies") << " of sweep "
              << identity.name << ": " << merged.size() << " of " << identity.points << " points (" << ok << " ok, "
              << merged.size() - ok << " failed) into " << out_dir << "/results.csv\n";
    if (missing > 0) {
        std::cerr << "sweep-merge: " << missing << " point(s) missing (not run in any directory), indices:";
        for (const std::string& i : first_missing) std::cerr << ' ' << i;
        std::cerr << (missing > first_missing.size() ? " ..." : "") << "\n";
    }
    return kSuccess;
}

}  // namespace fastsim::cli
