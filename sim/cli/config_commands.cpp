// SPDX-License-Identifier: MIT
// `fastsim validate` and `fastsim run`: commands that take a config file.
#include <iostream>

#include <boost/program_options.hpp>

#include "cli/app.h"
#include "cli/logging.h"
#include "config/errors.h"
#include "config/load.h"
#include "report/cluster_report.h"
#include "report/output_files.h"
#include "report/summary.h"
#include "report/table.h"
#include "report/training_report.h"
#include "run/bfp_error_report.h"
#include "run/cluster_step.h"
#include "run/training_step.h"

#include <chrono>
#include <filesystem>
#include <unistd.h>

namespace fastsim::cli {
namespace {

namespace po = boost::program_options;

struct ConfigInvocation {
    config::Params params;
    bool dump = false;
    std::string out_dir;  ///< run, plan, compare: where the report files go
    std::vector<std::string> traces;  ///< compare: networks to compare
    bool simulate = false;            ///< compare: simulate every plan instead of predicting it
    std::vector<std::string> overrides;
};

/// Which options a command takes beyond CONFIG, -p and --dump-config.
struct CommandOptions {
    bool out = false;
    bool fidelity = false;
    bool planner = false;  ///< --planner, --comm-only, --equal-split
    bool compare = false;  ///< --trace, --simulate
};

/// Parses CONFIG, -p overrides, --dump-config and the common options (and, for `run`,
/// --out and --fidelity). Empty on --help.
std::optional<ConfigInvocation> parse_config_args(const std::vector<std::string>& args, const std::string& usage,
                                                  const CommandOptions& take) {
    po::options_description options(usage + "\n\nOptions");
    std::string config_path, out_dir, fidelity, planner_name;
    std::vector<std::string> overrides, traces;
    if (take.out) options.add_options()("out", po::value(&out_dir), "write the report files (JSON and CSV) into this folder");
    if (take.fidelity)
        options.add_options()("fidelity", po::value(&fidelity), "memo (default: memoised tile timing) or stepped (the SystemC array, cycle by cycle); same as -p run.fidelity=...");
    if (take.planner)
        options.add_options()("planner", po::value(&planner_name), "data_parallel, owt, hypar, accpar or tofu; same as -p planner.name=...")(
            "comm-only", "minimise and report communication volume only (AccPar/HyPar accounting)")(
            "equal-split", "split every dimension in proportion to node counts (1/2 for equal halves), not by speed");
    if (take.compare)
        options.add_options()("trace", po::value(&traces)->composing(), "a network trace to compare on (repeatable; default: the config's)")(
            "simulate", "simulate every plan on the cluster instead of using the planner's prediction");
    options.add_options()("config", po::value(&config_path), "YAML config file")(
        "param,p", po::value(&overrides)->composing(), "override a config key: -p key.path=value (repeatable)")(
        "dump-config", "print the effective config (every default filled in) as YAML");
    po::positional_options_description positional;
    positional.add("config", 1);
    const auto parsed = parse_command_line(args, options, positional);
    if (!parsed) return std::nullopt;
    const po::variables_map& vm = *parsed;
    if (config_path.empty()) throw config::UserError("missing CONFIG: " + usage);
    if (!fidelity.empty()) {
        if (!config::parse_fidelity(fidelity))
            throw config::UserError("--fidelity: expected memo or stepped, got '" + fidelity + "'");
        overrides.push_back("run.fidelity=" + fidelity);
    }
    if (!planner_name.empty()) {
        if (!planner::parse_planner(planner_name))
            throw config::UserError("--planner: expected data_parallel, owt, hypar, accpar or tofu, got '" + planner_name + "'");
        overrides.push_back("planner.name=" + planner_name);
    }
    if (vm.count("comm-only")) overrides.push_back("planner.comm_only=true");
    if (vm.count("equal-split")) overrides.push_back("planner.equal_split=true");
    ConfigInvocation out{config::load(config_path, overrides), vm.count("dump-config") > 0, out_dir, traces,
                         vm.count("simulate") > 0, overrides};
    logger("config")->info("loaded {} with {} override(s)", config_path, overrides.size());
    return out;
}

void print_bfp_error_report(const config::Params& params) {
    const auto rows = run::bfp_error_report(params);
    std::cout << "BFP quantisation error (g=" << params.bfp.group_size << ", e=" << params.bfp.exponent_bits
              << ", stochastic noise " << params.bfp.noise_bits << " bits from a " << params.bfp.lfsr_bits
              << "-bit LFSR, seed " << params.run.seed << ")\n\n";
    report::Table table({"tensor", "distribution", "mantissa_bits", "rounding", "sqnr_db", "mean_rel_error",
                         "max_rel_error", "mean_abs_error"});
    for (const auto& r : rows)
        table.add_row({r.tensor, std::string(config::to_string(r.distribution)), std::to_string(r.mantissa_bits),
                       std::string(bfp::to_string(r.rounding)), report::Table::fixed(r.stats.sqnr_db, 2),
                       report::Table::scientific(r.stats.mean_rel_error), report::Table::scientific(r.stats.max_rel_error),
                       report::Table::scientific(r.stats.mean_abs_error)});
    table.print(std::cout);
}

/// Progress on stderr: a line that rewrites itself on a terminal, a line per 10% otherwise.
run::Progress progress_printer() {
    const bool tty = ::isatty(STDERR_FILENO) != 0;
    return [tty, last_decile = std::size_t{0}](std::size_t done, std::size_t all) mutable {
        if (tty) {
            std::cerr << "\rphases " << done << "/" << all << (done == all ? "\n" : "") << std::flush;
        } else if (done * 10 / all > last_decile || done == all) {
            last_decile = done * 10 / all;
            logger("run")->info("phases {}/{}", done, all);
        }
    };
}

void run_training_step(const config::Params& params, const std::string& out_dir) {
    const auto start = std::chrono::steady_clock::now();
    const run::TrainingStepResult result = run::run_training_step(params, progress_printer());
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    logger("run")->info("{} phases simulated in {:.3f} s ({} distinct tile shapes memoised)", result.phases.size(),
                        seconds, result.distinct_tile_shapes);
    report::print_training_step(std::cout, params, result);
    if (!out_dir.empty()) {
        report::write_file_atomically(out_dir + "/report.json", report::training_step_json(params, result));
        report::write_file_atomically(out_dir + "/layers.csv", report::training_step_csv(params, result));
        report::write_file_atomically(out_dir + "/summary.json", report::summary_json(report::training_step_summary(params, result)));
        std::cout << "wrote report.json, layers.csv and summary.json to " << out_dir << "\n";
    }
}

void require_cluster(const config::Params& params, const std::string& command) {
    if (params.run.mode != config::RunMode::cluster)
        throw config::UserError("fastsim " + command + " needs a config with run.mode cluster (" + params.source_file +
                                " has run.mode " + std::string(config::to_string(params.run.mode)) + ")");
}

run::ClusterPlan plan_or_user_error(const config::Params& params, const planner::PlannerOptions& options,
                                    run::NodeCharacterisation& characterisation) {
    try {
        return run::plan_cluster(params, options, characterisation);
    } catch (const std::invalid_argument& e) {  // planner::PlanError, or a graph the exact DP cannot take
        throw config::UserError(params.source_file + ": " + e.what());
    }
}

void run_cluster(const config::Params& params, const std::string& out_dir) {
    run::ClusterStepResult result;
    try {
        result = run::run_cluster_step(params, params.planner.options());
    } catch (const std::invalid_argument& e) {
        throw config::UserError(params.source_file + ": " + e.what());
    }
    report::print_cluster_step(std::cout, params, result);
    if (!out_dir.empty()) {
        report::write_file_atomically(out_dir + "/report.json", report::cluster_step_json(params, result));
        report::write_file_atomically(out_dir + "/layers.csv", report::cluster_layers_csv(params, result));
        report::write_file_atomically(out_dir + "/nodes.csv", report::cluster_nodes_csv(params, result));
        report::write_file_atomically(out_dir + "/plan.json", report::plan_json(params, result.planned));
        report::write_file_atomically(out_dir + "/plan.csv", report::plan_csv(params, result.planned));
        report::write_file_atomically(out_dir + "/summary.json", report::summary_json(report::cluster_step_summary(result)));
        std::cout << "wrote report.json, layers.csv, nodes.csv, plan.json, plan.csv and summary.json to " << out_dir << "\n";
    }
}

}  // namespace

int validate_command(const std::vector<std::string>& args) {
    const auto invocation = parse_config_args(args, "fastsim validate CONFIG [-p key=value ...] [--dump-config]", {});
    if (!invocation) return kSuccess;
    if (invocation->dump)
        std::cout << config::dump(invocation->params);
    else
        std::cout << invocation->params.source_file << ": ok\n";
    return kSuccess;
}

int run_command(const std::vector<std::string>& args) {
    const auto invocation = parse_config_args(
        args, "fastsim run CONFIG [-p key=value ...] [--out DIR] [--fidelity memo|stepped] [--planner NAME] [--comm-only] [--equal-split] [--dump-config]",
        {true, true, true, false});
    if (!invocation) return kSuccess;
    const config::Params& params = invocation->params;
    if (invocation->dump) std::cout << config::dump(params) << '\n';
    switch (params.run.mode) {
    case config::RunMode::bfp_report:
        if (!invocation->out_dir.empty()) throw config::UserError("--out applies to run.mode training_step or cluster");
        print_bfp_error_report(params);
        break;
    case config::RunMode::training_step:
        run_training_step(params, invocation->out_dir);
        break;
    case config::RunMode::cluster:
        run_cluster(params, invocation->out_dir);
        break;
    }
    return kSuccess;
}

int plan_command(const std::vector<std::string>& args) {
    const auto invocation = parse_config_args(
        args, "fastsim plan CONFIG [-p key=value ...] [--planner NAME] [--comm-only] [--equal-split] [--out DIR]",
        {true, false, true, false});
    if (!invocation) return kSuccess;
    const config::Params& params = invocation->params;
    require_cluster(params, "plan");
    if (invocation->dump) std::cout << config::dump(params) << '\n';
    const planner::LayerGraph graph = planner::build_layer_graph(params.workload.network, params.workload.batch);
    run::NodeCharacterisation characterisation(params, graph);
    const run::ClusterPlan planned = plan_or_user_error(params, params.planner.options(), characterisation);
    report::print_plan(std::cout, params, planned);
    if (!invocation->out_dir.empty()) {
        report::write_file_atomically(invocation->out_dir + "/plan.json", report::plan_json(params, planned));
        report::write_file_atomically(invocation->out_dir + "/plan.csv", report::plan_csv(params, planned));
        std::cout << "wrote " << invocation->out_dir << "/plan.json and " << invocation->out_dir << "/plan.csv\n";
    }
    return kSuccess;
}

int compare_command(const std::vector<std::string>& args) {
    const auto invocation = parse_config_args(
        args, "fastsim compare CONFIG [--trace FILE ...] [--simulate] [--comm-only] [--equal-split] [--out DIR]",
        {true, false, true, true});
    if (!invocation) return kSuccess;
    require_cluster(invocation->params, "compare");
    for (const std::string& o : invocation->overrides)
        if (o.rfind("planner.name=", 0) == 0) throw config::UserError("fastsim compare runs every planner: --planner and -p planner.name do not apply");
    std::vector<std::string> traces = invocation->traces;
    if (traces.empty()) traces.push_back(invocation->params.workload.trace_path);
    std::vector<report::ComparisonRow> rows;
    for (const std::string& trace : traces) {
        std::vector<std::string> overrides = invocation->overrides;
        overrides.push_back("workload.trace=" + std::filesystem::absolute(trace).string());
        const config::Params params = config::load(invocation->params.source_file, overrides);
        report::ComparisonRow row;
        row.network = params.workload.network.name;
        const planner::LayerGraph graph = planner::build_layer_graph(params.workload.network, params.workload.batch);
        run::NodeCharacterisation characterisation(params, graph);
        for (const planner::PlannerKind kind : planner::kAllPlanners) {
            planner::PlannerOptions options = params.planner.options();
            options.kind = kind;
            double step = 0, bytes = 0;
            std::string error;
            try {
                if (invocation->simulate) {
                    const run::ClusterStepResult r = run::run_cluster_step_in_fresh_kernel(params, options);
                    step = r.step_s;
                    bytes = r.planned.plan.comm_bytes;
                } else {
                    const run::ClusterPlan p = run::plan_cluster(params, options, characterisation);
                    step = p.plan.step_s;
                    bytes = p.plan.comm_bytes;
                }
            } catch (const std::invalid_argument& e) {
                error = e.what();
            }
            row.step_s.push_back(step);
            row.comm_bytes.push_back(bytes);
            row.error.push_back(error);
            logger("compare")->info("{} {}: {:.6f} s, {:.3f} MB{}", row.network, planner::to_string(kind), step, bytes / 1e6,
                                    error.empty() ? "" : " (" + error + ")");
        }
        rows.push_back(std::move(row));
    }
    report::print_comparison(std::cout, rows, invocation->params.planner.comm_only, invocation->simulate);
    if (!invocation->out_dir.empty()) {
        report::write_file_atomically(invocation->out_dir + "/compare.csv", report::comparison_csv(rows));
        std::cout << "wrote " << invocation->out_dir << "/compare.csv\n";
    }
    return kSuccess;
}

}  // namespace fastsim::cli
