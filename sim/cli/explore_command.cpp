// SPDX-License-Identifier: MIT
// `fastsim explore` (docs/explore.md): the Pareto front of a design space for a training job.
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <boost/program_options.hpp>

#include "cli/app.h"
#include "cli/logging.h"
#include "common/csv_reader.h"
#include "common/csv_writer.h"
#include "common/errors.h"
#include "common/input_file.h"
#include "common/json_reader.h"
#include "common/json_writer.h"
#include "common/machine.h"
#include "common/output_files.h"
#include "common/summary.h"
#include "config/load.h"
#include "node/phase_counters.h"
#include "output/run_summary.h"
#include "run/cluster_step.h"
#include "run/training_step.h"
#include "run/work.h"
#include "report/results_dir.h"
#include "sweep/explore.h"
#include "sweep/mpi_runner.h"
#include "sweep/run_dir.h"
#include "sweep/runner.h"
#include "sweep/sweep_dir.h"
#include "sweep/worker_pool.h"

namespace fastsim::cli {
namespace {

namespace po = boost::program_options;
namespace fs = std::filesystem;

/// The files a loaded config reads besides itself: its trace or ONNX model, its energy table,
/// a precision schedule log.
std::vector<std::string> files_read(const config::Params& params) {
    std::vector<std::string> files;
    for (const config::FilePath* f :
         {&params.workload.trace, &params.workload.model, &params.energy.table, &params.precision.schedule_log})
        if (!f->resolved.empty()) files.push_back(f->resolved);
    return files;
}

/// The first design's config, which tells the space's run mode and the files its designs read:
/// loaded with its keys, or (a design that does not fit, say) its base config alone. A key no
/// config has (a typo in an axis) makes every design invalid: UserError naming the space file.
config::Params first_design_config(const sweep::ExploreSpec& spec) {
    const sweep::SweepPoint first = sweep::point_at(spec.space, 0);
    try {
        return config::load(first.base_config, first.overrides);
    } catch (const UserError& e) {
        const std::string located = sweep::locate_in_sweep_file(spec.space, first, e.what());
        if (located.find("unknown key") != std::string::npos) throw UserError(located);
        return config::load(first.base_config);
    }
}

/// A 16-hex-digit FNV-1a of the explore file, every base config its points start from, and the
/// traces, models, energy tables and schedule logs they read (the first design's, and each value
/// of an axis that names such a file): a directory holding another exploration, or one of edited
/// inputs, is refused rather than mixed.
std::string explore_fingerprint(const sweep::ExploreSpec& spec) {
    static constexpr std::array<std::string_view, 5> kFileKeys{sweep::kBaseKey, "workload.trace", "workload.model",
                                                               "energy.table", "precision.schedule_log"};
    const sweep::SweepPoint first = sweep::point_at(spec.space, 0);
    std::set<std::string> files{spec.space.file, first.base_config};
    for (const std::string& f : files_read(first_design_config(spec))) files.insert(f);
    for (std::size_t a = 0; a < spec.space.axes.size(); ++a) {  // an axis naming files: each of its values
        const sweep::Axis& axis = spec.space.axes[a];
        if (std::none_of(axis.keys.begin(), axis.keys.end(), [](const std::string& k) {
                return std::find(kFileKeys.begin(), kFileKeys.end(), k) != kFileKeys.end();
            }))
            continue;
        std::vector<std::size_t> choices(spec.space.axes.size(), 0);
        for (choices[a] = 0; choices[a] < axis.values.size(); ++choices[a]) {
            const sweep::SweepPoint p = sweep::point_at(spec.space, sweep::point_index(spec.space, choices), choices);
            files.insert(p.base_config);
            try {
                for (const std::string& f : files_read(config::load(p.base_config, p.overrides))) files.insert(f);
            } catch (const UserError&) {
                // a design whose config is invalid is infeasible, not a reason to refuse the space
            }
        }
    }
    std::uint64_t h = sweep::kFnvOffset;
    for (const std::string& f : files) {
        sweep::fnv1a(h, f);
        sweep::fnv1a(h, read_input_file(f, "an input of the exploration"));
    }
    return sweep::hex_digest(h);
}

/// The fingerprint of the exploration whose explore.json is `path`; UserError naming the file
/// (and line and column) for one that is not an explore.json fastsim wrote.
std::string fingerprint_in(const std::string& path) {
    const JsonValue json = read_json_file(path);
    const JsonValue* fingerprint = json.is_object() ? json.find("fingerprint") : nullptr;
    if (!fingerprint || !fingerprint->is_string())
        throw UserError(path + ": expected an exploration's explore.json, an object with a \"fingerprint\" string");
    return fingerprint->as_string();
}

/// A design's value of `key` in point `p`.
const std::string& value_of(const sweep::SweepPoint& p, const std::string& key) {
    for (const auto& [k, v] : p.values)
        if (k == key) return v;
    throw std::logic_error("value_of: no key " + key);
}

/// designs.csv's columns after the keys: the objectives, then the constraints' other fields.
std::vector<std::string> result_columns(const sweep::ExploreSpec& spec) {
    std::vector<std::string> columns = spec.objectives;
    for (const sweep::Constraint& c : spec.constraints)
        if (std::find(columns.begin(), columns.end(), c.field) == columns.end()) columns.push_back(c.field);
    return columns;
}

std::string header_line(const sweep::ExploreSpec& spec) {
    std::string line = "design";
    for (const sweep::Axis& axis : spec.space.axes)
        for (const std::string& key : axis.keys) CsvCell::text(key).append_csv(line += ",");
    line += ",feasible";
    for (const std::string& c : result_columns(spec)) line += "," + c;
    return line + ",error";
}

std::string row_line(const sweep::ExploreSpec& spec, const sweep::Design& d) {
    const sweep::SweepPoint p = sweep::point_at(spec.space, d.index);
    std::string line = d.id;
    for (const sweep::Axis& axis : spec.space.axes)
        for (const std::string& key : axis.keys) CsvCell::text(value_of(p, key)).append_csv(line += ",");
    line += d.feasible ? ",1" : ",0";
    for (const std::string& column : result_columns(spec)) {
        line += ",";
        for (const auto& [name, value] : d.fields)
            if (name == column) {
                line += format_number(value);
                break;
            }
    }
    line += ",";
    if (!d.error.empty()) CsvCell::text(d.error).append_csv(line);  // RFC 4180: read back on resume
    return line;
}

/// The summary fields a design's configuration alone decides (its area; a cluster's node count),
/// checked against the constraints before it is simulated: a broken one makes it infeasible
/// without running it.
bool pruned_before_running(const sweep::ExploreSpec& spec, const Summary& known, sweep::Evaluation& e) {
    for (const sweep::Constraint& c : spec.constraints)
        for (const auto& [name, value] : known)
            if (name == c.field && !c.holds(value)) {
                e.fields = known;
                e.error = "breaks " + c.text + " (" + format_number(value) + "), not simulated";
                e.pruned = true;
                return true;
            }
    return false;
}

Summary area_fields(const std::optional<energy::AreaBreakdown>& area) {
    return area ? output::area_summary(*area) : Summary{};
}

/// One design: the point's config loaded in this process and run, a node on the memo path, a
/// cluster planned and simulated as `fastsim run` does. A config error (the design does not fit:
/// a layer cannot be tiled, a size out of range) or a plan that cannot be made (nothing fits in
/// the nodes' memory) makes it infeasible; a broken constraint on its area is found before it is
/// simulated, as is a cluster's broken bound on its node count. A design whose run is estimated
/// above `max_work_s` (or above this machine's memory) is infeasible with the estimate, not run.
sweep::Evaluation evaluate(const sweep::ExploreSpec& spec, const sweep::SweepPoint& point, double max_work_s) {
    sweep::Evaluation e;
    try {
        config::Params params = config::load(point.base_config, point.overrides);
        if (params.run.mode == config::RunMode::cluster) {
            Summary known = area_fields(run::cluster_area(params));
            known.emplace_back("nodes", static_cast<double>(params.cluster.node_type.size()));
            if (pruned_before_running(spec, known, e)) return e;
            // As `fastsim run` would: its work and memory within the limits, or infeasible.
            run::check_work(run::estimate_cluster(params, true, {params.planner.kind}), max_work_s, params.source_file);
            e.fields = output::cluster_step_summary(
                params, run::run_cluster_step_in_fresh_kernel(params, params.planner.options()));
            return e;
        }
        if (params.run.mode != config::RunMode::training_step)
            throw UserError(
                "fastsim explore evaluates node and cluster designs: the base config's run.mode must be "
                "training_step or cluster, not " +
                std::string(config::to_string(params.run.mode)));
        params.run.fidelity = config::Fidelity::memo;
        if (pruned_before_running(spec, area_fields(run::node_area(params)), e)) return e;
        run::check_work(run::estimate_training_step(params, false), max_work_s, params.source_file);
        const run::TrainingStepResult step = run::run_training_step(params);
        const std::optional<run::WholeRunResult> whole = run::whole_training_if_any(params, step);
        e.fields = output::training_step_summary(params, step, whole ? &*whole : nullptr);
    } catch (const UserError& error) {  // a config error, no plan that fits, a base axis swapping modes
        e.error = sweep::locate_in_sweep_file(spec.space, point, error.what());
    } catch (const std::exception& error) {  // a bug: recorded with the design, the search goes on
        e.error = std::string("internal error (please report it): ") + error.what();
    }
    return e;
}

/// Every field a run's summary.json can have in `mode` (a node or a cluster run): the ones an
/// objective or constraint may name.
std::vector<std::string> summary_names(config::RunMode mode) {
    const bool cluster = mode == config::RunMode::cluster;
    const SummaryScope other = cluster ? SummaryScope::node_run : SummaryScope::cluster_run;
    std::vector<std::string> names;
    for (const SummaryField& f : kSummaryFields)
        if (f.scope != other) names.emplace_back(f.name);
    if (!cluster)
        for (const CounterInfo& c : node::counter_infos()) names.emplace_back(c.name);
    for (const energy::EnergyComponent& c : energy::kEnergyComponents)
        names.push_back("energy_" + std::string(c.name) + "_uj");
    if (cluster) names.emplace_back("energy_links_uj");
    for (const energy::AreaComponent& c : energy::kAreaComponents)
        names.push_back("area_" + std::string(c.name) + "_mm2");
    std::vector<std::string> once;  // a counter may share a summary field's name (cycles, macs)
    for (std::string& n : names)
        if (std::find(once.begin(), once.end(), n) == once.end()) once.push_back(std::move(n));
    return once;
}

/// Objectives and constraints name summary fields of the space's runs (the first design's mode:
/// a node or a cluster), and an objective is one better when lower.
void check_fields(const sweep::ExploreSpec& spec) {
    // The first design's mode; one whose keys make it invalid (an infeasible design, not a bad
    // space) is told by its base config alone.
    const config::RunMode mode = first_design_config(spec).run.mode;
    // Every design of a space whose mode no axis changes has the first design's.
    bool mode_varies = false;
    for (const sweep::Axis& axis : spec.space.axes)
        for (const std::string& key : axis.keys)
            mode_varies = mode_varies || key == "run.mode" || key == sweep::kBaseKey;
    if (mode == config::RunMode::bfp_report && !mode_varies)
        throw UserError(spec.space.file +
                        ": sweep.base: its run.mode is bfp_report, which simulates no node; fastsim explore "
                        "evaluates node and cluster designs (run.mode training_step or cluster)");
    const std::string run = mode == config::RunMode::cluster ? "a cluster run" : "a node run";
    const std::vector<std::string> names = summary_names(mode);
    const auto known = [&](const std::string& n) { return std::find(names.begin(), names.end(), n) != names.end(); };
    std::string list;
    for (const std::string& n : names) list += (list.empty() ? "" : ", ") + n;
    for (const std::string& o : spec.objectives) {
        if (!known(o))
            throw UserError(spec.space.file + ": explore.objectives: '" + o + "' is not a summary field of " + run +
                            " (one of " + list + ")");
        if (const SummaryField* f = summary_field(o); f && f->higher_is_better)
            throw UserError(spec.space.file + ": explore.objectives: '" + o +
                            "' is better when higher, and explore minimises every objective: minimise the "
                            "energy or the energy-delay product for efficiency, the step time for throughput");
    }
    for (const sweep::Constraint& c : spec.constraints)
        if (!known(c.field))
            throw UserError(spec.space.file + ": explore.constraints: '" + c.text + "': '" + c.field +
                            "' is not a summary field of " + run + " (one of " + list + ")");
}

/// What read_designs does with a row cut by an interrupted write: drop it from the file (a run
/// resuming into its own directory), or only from what is read (a shard's, read to merge it).
enum class CutRows { drop_from_file, leave_in_file };

/// The designs a previous run of this exploration wrote to designs.csv, for resuming: each row's
/// design (index, feasibility, objectives) and, in `rows`, its text. A row cut by an interrupted
/// write is dropped from the file, to be redone. UserError names designs.csv:LINE for a row that
/// is not this space's.
std::vector<sweep::Design> read_designs(const sweep::ExploreSpec& spec, const std::string& designs_path,
                                        const std::string& header, std::map<std::size_t, std::string>& rows,
                                        CutRows cut_rows = CutRows::drop_from_file) {
    std::vector<sweep::Design> done;
    std::string text = read_input_file(designs_path, "designs.csv");
    const std::size_t whole = text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1;
    if (whole < text.size()) {
        text.erase(whole);
        if (cut_rows == CutRows::drop_from_file) fs::resize_file(designs_path, whole);
    }
    if (text.empty()) return done;
    if (text.compare(0, header.size() + 1, header + "\n") != 0)
        throw UserError(designs_path + ":1: not this exploration's header (expected " + header + ")");
    const CsvTable table = parse_csv(text, designs_path);
    // Each row's own text, from its first line to the next row's (rows are one line each as
    // written; a blank line between them is left out).
    std::vector<std::string> lines;
    for (std::size_t at = 0; at < text.size();) {
        const std::size_t end = text.find('\n', at);
        lines.push_back(text.substr(at, end - at));
        at = end + 1;
    }
    const std::size_t objectives_at = table.header.size() - 1 - result_columns(spec).size();
    const std::size_t points = sweep::point_count(spec.space);
    for (std::size_t r = 0; r < table.rows.size(); ++r) {
        const auto& row = table.rows[r];
        const std::string where = designs_path + ":" + std::to_string(table.row_lines[r]);
        sweep::Design d;
        d.id = row[0];
        const bool id_ok = d.id.size() > 1 && d.id[0] == 'p' && d.id.size() <= 12 &&
                           d.id.find_first_not_of("0123456789", 1) == std::string::npos;
        d.index = id_ok ? std::stoul(d.id.substr(1)) : points;
        if (d.index >= points || d.id != sweep::point_id(d.index, points))
            throw UserError(where + ": design '" + d.id + "' is not a design of this space");
        if (rows.count(d.index))
            throw UserError(where + ": design '" + d.id + "' is listed twice (each design has one row)");
        // The keys' values are the design's own (what its id stands for in this space).
        const sweep::SweepPoint point = sweep::point_at(spec.space, d.index);
        std::size_t column = 1;
        for (const sweep::Axis& axis : spec.space.axes)
            for (const std::string& key : axis.keys) {
                if (row[column] != value_of(point, key))
                    throw UserError(where + ": column '" + key + "' is '" + row[column] + "', but design '" + d.id +
                                    "' has " + key + " = " + value_of(point, key));
                ++column;
            }
        const std::string& feasible = row[objectives_at - 1];
        const std::string& error = row.back();
        if (feasible != "0" && feasible != "1")
            throw UserError(where + ": column 'feasible': expected 1 or 0, got '" + feasible + "'");
        d.feasible = feasible == "1";
        if (d.feasible != error.empty())
            throw UserError(where + ": design '" + d.id + "' is " + (d.feasible ? "feasible" : "infeasible") +
                            (d.feasible ? " but has an error" : " but gives no reason in column 'error'"));
        if (d.feasible)
            for (std::size_t o = 0; o < spec.objectives.size(); ++o) {
                const std::optional<double> v = parse_number(row[objectives_at + o]);
                // Every summary field is a count, time, energy, area or a ratio of them.
                if (!v || !std::isfinite(*v) || *v < 0)
                    throw UserError(where + ": column '" + spec.objectives[o] + "': '" + row[objectives_at + o] +
                                    "' is not a finite number of at least 0");
                d.objectives.push_back(*v);
            }
        std::string own;
        const std::size_t first = static_cast<std::size_t>(table.row_lines[r]) - 1;
        const std::size_t last =
            r + 1 < table.rows.size() ? static_cast<std::size_t>(table.row_lines[r + 1]) - 1 : lines.size();
        for (std::size_t l = first; l < last; ++l)
            if (!lines[l].empty() || l == first) own += (l == first ? "" : "\n") + lines[l];
        rows[d.index] = own;
        done.push_back(std::move(d));
    }
    return done;
}

/// Every design the explorations in `shard_dirs` evaluated (`--merge`: the shards of this space),
/// each once, in design order, with its designs.csv row in `rows`. UserError naming the directory
/// for one still being written or holding another exploration.
std::vector<sweep::Design> merged_designs(const sweep::ExploreSpec& spec, const std::string& fingerprint,
                                          const std::vector<std::string>& shard_dirs, const std::string& header,
                                          std::map<std::size_t, std::string>& rows) {
    std::map<std::size_t, sweep::Design> by_index;
    for (const std::string& shard : shard_dirs) {
        const fs::path d(shard);
        if (!fs::is_directory(d))
            throw UserError("--merge " + shard + ": not a directory (an exploration's --out, one per shard)");
        sweep::refuse_while_written(shard);
        const std::string identity = (d / "explore.json").string(), designs = (d / "designs.csv").string();
        if (!fs::exists(identity) || !fs::exists(designs))
            throw UserError("--merge " + shard + ": holds no exploration (no explore.json and designs.csv)");
        if (fingerprint_in(identity) != fingerprint)
            throw UserError("--merge " + shard + ": " + identity +
                            " is another exploration's (another explore file, or one of edited inputs), not a "
                            "shard of " +
                            spec.space.file);
        std::map<std::size_t, std::string> shard_rows;
        for (sweep::Design& design : read_designs(spec, designs, header, shard_rows, CutRows::leave_in_file)) {
            const std::size_t index = design.index;
            if (by_index.emplace(index, std::move(design)).second) rows[index] = shard_rows[index];
        }
    }
    std::vector<sweep::Design> out;
    out.reserve(by_index.size());
    for (auto& [index, design] : by_index) out.push_back(std::move(design));
    return out;
}

/// The front's knee (report::knee_of over the members' objectives) run in full, as `fastsim run`
/// runs its config, into DIR/knee (replaced each time): the best design's own report. Its id, or
/// nothing for an empty front.
std::optional<std::string> run_knee(const sweep::ExploreSpec& spec, const std::vector<sweep::Design>& all,
                                    const std::vector<std::size_t>& members, const fs::path& dir) {
    std::vector<std::vector<double>> front;
    for (const std::size_t m : members) front.push_back(all[m].objectives);
    const std::optional<std::size_t> knee = report::knee_of(front);
    if (!knee) return std::nullopt;
    const sweep::Design& design = all[members[*knee]];
    const sweep::SweepPoint point = sweep::point_at(spec.space, design.index);
    config::Params params = config::load(point.base_config, point.overrides);
    std::vector<std::string> words{"fastsim", "run", point.base_config};
    for (const std::string& o : point.overrides) words.insert(words.end(), {"-p", o});
    sweep::RunDirWriter out((dir / "knee").string(), true, "explore");
    output::RunFiles files;
    if (params.run.mode == config::RunMode::cluster) {
        const run::RunProvenance made_by{FASTSIM_VERSION, shell_command_line(words)};
        files = output::cluster_step_files(
            params, run::run_cluster_step_in_fresh_kernel(params, params.planner.options()), made_by);
    } else {
        params.run.fidelity = config::Fidelity::memo;
        words.insert(words.end(), {"-p", "run.fidelity=memo"});
        const run::RunProvenance made_by{FASTSIM_VERSION, shell_command_line(words)};
        const run::TrainingStepResult step = run::run_training_step(params);
        const std::optional<run::WholeRunResult> whole = run::whole_training_if_any(params, step);
        files = output::training_step_files(params, step, made_by, whole ? &*whole : nullptr);
    }
    for (const auto& [name, content] : files) out.write(name, content);
    out.commit(FASTSIM_VERSION);
    return design.id;
}

/// A design whose evaluation killed its worker process (`--jobs` above 1): infeasible, with why.
sweep::Evaluation died_evaluating(int status) {
    sweep::Evaluation e;
    e.error = "internal error (please report it): its evaluation " +
              (WIFSIGNALED(status) ? "was killed by signal " + std::to_string(WTERMSIG(status))
                                   : "ended with exit status " + std::to_string(WEXITSTATUS(status)));
    return e;
}

std::string clock_text(double seconds) {
    const long s = static_cast<long>(seconds);
    char text[32];
    std::snprintf(text, sizeof text, "%ld:%02ld", s / 60, s % 60);
    return text;
}

}  // namespace

int explore_command(const std::vector<std::string>& args) {
    po::options_description options(
        "fastsim explore SPACE.yaml --out DIR [--jobs N | --mpi] [--shard k/N | --merge SHARD_DIR...] "
        "[--max-work S]\n\n"
        "Searches a design space (a sweep file's axes, with an explore: section of objectives,\n"
        "constraints and budget) on the memo path for the designs no other beats on every objective.\n"
        "Writes DIR/designs.csv (every design evaluated), DIR/pareto.csv (the front) and\n"
        "DIR/explore.json; rerun the same command to resume (docs/explore.md).\n\nOptions");
    std::string space_path, out_dir, shard_text = "1/1";
    std::vector<std::string> merge_dirs;
    std::string max_work;
    long jobs = usable_cores();
    options.add_options()("space", po::value(&space_path), "explore YAML file")(
        "out", po::value(&out_dir), "output directory (created; reused to resume the same exploration)")(
        "jobs,j", po::value(&jobs)->default_value(jobs),
        "designs evaluated at a time, each in a worker process (default: the cores this process may use; "
        "the designs and the front do not depend on it)")(
        "shard", po::value(&shard_text),
        "evaluate only shard k of N of a space searched whole: the designs with index % N == k-1")(
        "max-work", po::value(&max_work),
        "each design's work limit in estimated seconds, as fastsim run's (default 20, docs/cli.md): a design "
        "above it is infeasible, not run")(
        "mpi",
        "under mpirun -n K (K >= 2): rank 0 searches, ranks 1..K-1 evaluate the designs (needs "
        "-DFASTSIM_WITH_MPI=ON)")(
        "merge", po::value(&merge_dirs)->multitoken(),
        "the --out directories of this space's shards: their designs are this run's, and the front is "
        "theirs together (any design no shard evaluated is evaluated now)");
    po::positional_options_description positional;
    positional.add("space", 1);
    const auto parsed = parse_command_line(args, options, positional);
    if (!parsed) return kSuccess;
    if (space_path.empty()) throw UserError("missing SPACE.yaml: fastsim explore SPACE.yaml --out DIR");
    if (out_dir.empty()) throw UserError("missing --out DIR: where the designs and the front go");
    const po::variables_map& vm = *parsed;
    const bool use_mpi = vm.count("mpi") > 0;
    if (use_mpi && !vm["jobs"].defaulted())
        throw UserError("--jobs and --mpi: under MPI each rank evaluates one design at a time; give one of them");
    if (jobs < 1 || jobs > sweep::kMaxJobs)
        throw UserError("--jobs: expected 1 to " + std::to_string(sweep::kMaxJobs) + ", got " + std::to_string(jobs));
    const double max_work_s = max_work.empty() ? run::kDefaultMaxWorkSeconds : run::parse_max_work(max_work);
    const sweep::Shard shard = sweep::parse_shard(shard_text);
    if (!merge_dirs.empty() && shard.count > 1)
        throw UserError("--merge gathers the shards into one exploration: it takes no --shard");
    const sweep::ExploreSpec spec = sweep::load_explore(space_path);
    check_fields(spec);
    if (spec.method == sweep::SearchMethod::exhaustive && sweep::point_count(spec.space) > spec.budget)
        throw UserError(space_path + ": explore.method: exhaustive evaluates all " +
                        std::to_string(sweep::point_count(spec.space)) + " designs, more than explore.budget (" +
                        std::to_string(spec.budget) + "): raise the budget to that, or use method auto or sampled");

    const auto evaluate_to_bytes = [&spec, max_work_s](std::size_t index) {
        return sweep::encode_evaluation(evaluate(spec, sweep::point_at(spec.space, index), max_work_s));
    };
    if (use_mpi && sweep::mpi_rank() != 0) {  // a worker: evaluates what rank 0 hands out, writes nothing
        sweep::serve_tasks_mpi(evaluate_to_bytes);
        sweep::mpi_finalize();
        return kSuccess;
    }
    // Rank 0 releases the workers however it ends.
    struct StopMpiWorkers {
        bool active;
        ~StopMpiWorkers() {
            if (!active) return;
            sweep::stop_tasks_mpi();
            sweep::mpi_finalize();
        }
    } const stop_mpi_workers{use_mpi};
    if (use_mpi) jobs = static_cast<long>(sweep::mpi_task_workers());

    const std::string fingerprint = explore_fingerprint(spec);
    const fs::path dir(out_dir);
    const std::string designs_path = (dir / "designs.csv").string(), identity_path = (dir / "explore.json").string();
    const std::string header = header_line(spec);
    std::map<std::size_t, std::string> rows;  // index -> designs.csv line
    std::vector<sweep::Design> done;
    // Locked before anything in it is read, whatever the shard: every shard of an exploration
    // writes the directory's one designs.csv, pareto.csv and explore.json.
    if (std::error_code ec; fs::exists(dir, ec) && !fs::is_directory(dir, ec))
        throw UserError("--out " + out_dir + " exists and is not a directory: an exploration writes a folder");
    if (sweep::holds_run(out_dir) || fs::exists(dir / "sweep.json"))
        throw UserError("--out " + out_dir + " holds " +
                        (fs::exists(dir / "sweep.json") ? std::string("a sweep (sweep.json)") : std::string("a run")) +
                        ": an exploration writes a folder of its own; use another folder");
    if (std::error_code ec; !fs::create_directories(dir, ec) && ec)
        throw UserError("--out " + out_dir + ": cannot create the folder: " + ec.message());
    const sweep::SweepDirLock lock(out_dir, sweep::Shard{}, "explore");
    if (fs::exists(identity_path)) {
        if (fingerprint_in(identity_path) != fingerprint)
            throw UserError(out_dir +
                            " holds another exploration (or one of an edited file): use another --out, "
                            "or delete it to start over");
        if (fs::exists(designs_path)) done = read_designs(spec, designs_path, header, rows);
    }
    std::vector<sweep::Design> merged;  // the shards' designs this directory does not hold yet
    if (!merge_dirs.empty()) {
        for (const std::string& m : merge_dirs)
            if (fs::exists(m) && fs::equivalent(m, dir))
                throw UserError("--merge " + m + ": is --out itself; merge the shards into a directory of its own");
        std::map<std::size_t, std::string> merged_rows;
        for (sweep::Design& d : merged_designs(spec, fingerprint, merge_dirs, header, merged_rows))
            if (!rows.count(d.index)) {
                rows[d.index] = merged_rows[d.index];
                merged.push_back(std::move(d));
            }
    }
    std::ofstream designs_out;
    const auto start = std::chrono::steady_clock::now();
    auto last_print = start;
    std::size_t planned = 0, evaluated = 0, pruned = 0, infeasible = 0;
    const std::size_t resumed = done.size() + merged.size();
    const bool tty = ::isatty(STDERR_FILENO) != 0;
    // Workers forked now, before designs.csv is opened: each is this process with the space
    // loaded, evaluating the designs it is handed by index.
    std::optional<sweep::WorkerPool> workers;
    if (jobs > 1 && !use_mpi)
        workers.emplace(static_cast<std::size_t>(jobs), evaluate_to_bytes,
                        [](std::size_t, int status) { return sweep::encode_evaluation(died_evaluating(status)); });
    const auto evaluate_batch = [&](const std::vector<sweep::SweepPoint>& points) {
        std::vector<sweep::Evaluation> out;
        if (workers || use_mpi) {
            std::vector<std::size_t> indices;
            for (const sweep::SweepPoint& p : points) indices.push_back(p.index);
            for (const std::string& bytes : use_mpi ? sweep::run_tasks_mpi(indices) : workers->run(indices))
                out.push_back(sweep::decode_evaluation(bytes));
        } else {
            for (const sweep::SweepPoint& p : points) out.push_back(evaluate(spec, p, max_work_s));
        }
        for (const sweep::Evaluation& e : out) pruned += e.pruned ? 1 : 0;
        return out;
    };
    sweep::Explorer explorer(
        spec, sweep::Explorer::EvaluateBatch(evaluate_batch),
        [&](const sweep::Design& d) {
            rows[d.index] = row_line(spec, d);
            designs_out << rows[d.index] << '\n' << std::flush;
            if (!designs_out) throw UserError(designs_path + ": write failed (disk full?)");
            ++evaluated;
            infeasible += d.feasible ? 0 : 1;
            const auto now = std::chrono::steady_clock::now();
            if (now - last_print >= std::chrono::seconds(tty ? 1 : 10)) {
                last_print = now;
                const double elapsed = std::chrono::duration<double>(now - start).count();
                const std::size_t left = planned > resumed + evaluated ? planned - resumed - evaluated : 0;
                std::cerr << (tty ? "\r" : "") << "explore: " << resumed + evaluated << "/" << planned << " designs ("
                          << infeasible << " infeasible, " << pruned << " pruned), elapsed " << clock_text(elapsed)
                          << ", ETA "
                          << clock_text(elapsed / static_cast<double>(evaluated) * static_cast<double>(left))
                          << (tty ? "   " : "\n") << std::flush;
            }
        },
        shard, std::max<std::size_t>(sweep::Explorer::kDefaultBatch, 8 * static_cast<std::size_t>(jobs)));
    if (shard.count > 1 && explorer.method() != sweep::SearchMethod::exhaustive)
        throw UserError("--shard splits a space searched whole; this one (" +
                        std::to_string(sweep::point_count(spec.space)) + " designs, budget " +
                        std::to_string(spec.budget) + ") is sampled: run it unsharded");
    planned = explorer.planned();
    {
        JsonWriter json;
        json.begin_object(JsonLayout::one_per_line);
        json.key("name").string(spec.space.name).key("fingerprint").string(fingerprint);
        json.key("designs_in_space").integer(sweep::point_count(spec.space));
        json.key("method").string(name_of(explorer.method()).data());
        json.key("budget").integer(spec.budget).key("seed").integer(spec.seed);
        json.key("objectives").begin_array();
        for (const std::string& o : spec.objectives) json.string(o);
        json.end_array().key("constraints").begin_array();
        for (const sweep::Constraint& c : spec.constraints) json.string(c.text);
        json.end_array().end_object();
        write_file_atomically(identity_path, json.take());
    }
    const bool fresh = !fs::exists(designs_path) || fs::file_size(designs_path) == 0;
    designs_out.open(designs_path, std::ios::app);
    if (!designs_out) throw UserError(designs_path + ": cannot be written");
    if (fresh) designs_out << header << '\n' << std::flush;
    // The shards' designs join designs.csv as a resumed run's do (in design order), before any
    // design no shard evaluated.
    for (sweep::Design& d : merged) {
        designs_out << rows[d.index] << '\n';
        done.push_back(std::move(d));
    }
    designs_out << std::flush;
    if (!designs_out) throw UserError(designs_path + ": write failed (disk full?)");
    std::cerr << "explore " << spec.space.name << ": " << sweep::point_count(spec.space) << " designs in the space, "
              << (explorer.method() == sweep::SearchMethod::exhaustive ? "searched whole"
                                                                       : name_of(explorer.method()).data())
              << (shard.count > 1 ? ", shard " + shard_text : "") << "; " << resumed << " already evaluated"
              << (merge_dirs.empty() ? "" : " (" + std::to_string(merged.size()) + " from the shards merged)")
              << ", up to " << (planned > resumed ? planned - resumed : 0) << " to go, " << jobs
              << (use_mpi ? " at a time on the MPI ranks\n" : " at a time\n");
    const std::vector<sweep::Design> all = explorer.run(std::move(done));
    if (tty && evaluated > 0) std::cerr << '\n';

    sweep::ParetoFront front;
    std::size_t feasible = 0;
    for (std::size_t i = 0; i < all.size(); ++i)
        if (all[i].feasible) {
            ++feasible;
            front.add(i, all[i].objectives);
        }
    std::vector<std::size_t> members = front.members();
    std::sort(members.begin(), members.end(),
              [&](std::size_t a, std::size_t b) { return all[a].index < all[b].index; });
    std::string pareto = header + '\n';
    for (const std::size_t m : members) pareto += rows.at(all[m].index) + '\n';
    write_file_atomically((dir / "pareto.csv").string(), pareto);
    std::cout << "explore " << spec.space.name << ": " << all.size() << " designs evaluated (" << evaluated << " now), "
              << feasible << " feasible, " << members.size() << " on the Pareto front of";
    for (const std::string& o : spec.objectives) std::cout << " " << o;
    std::cout << "; " << designs_path << ", " << (dir / "pareto.csv").string() << "\n";
    if (const std::optional<std::string> knee = run_knee(spec, all, members, dir))
        std::cout << "the front's knee, " << *knee << ", run in full: " << (dir / "knee").string()
                  << " (fastsim report " << out_dir << " draws both)\n";
    return kSuccess;
}

}  // namespace fastsim::cli
