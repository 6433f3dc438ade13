// SPDX-License-Identifier: MIT
// `fastsim validate` and `fastsim run`: commands that take a config file.
#include <iostream>

#include <boost/program_options.hpp>

#include "cli/app.h"
#include "cli/logging.h"
#include "cli/numbers.h"
#include "cli/progress.h"
#include "common/errors.h"
#include "config/load.h"
#include "config/plan_file.h"
#include "output/cluster_report.h"
#include "run/compare.h"
#include "common/output_files.h"
#include "output/run_summary.h"
#include "output/table.h"
#include "output/trace_json.h"
#include "output/training_report.h"
#include "run/bfp_error_report.h"
#include "run/cluster_step.h"
#include "run/training_step.h"
#include "run/work.h"
#include "sweep/run_dir.h"

#include <charconv>
#include <chrono>
#include <filesystem>
#include <memory>
#include <optional>
#include <unistd.h>

namespace fastsim::cli {
namespace {

namespace po = boost::program_options;

struct ConfigInvocation {
    config::Params params;
    bool dump = false;
    std::string out_dir;              ///< run, plan, compare: where the report files go
    bool force = false;               ///< run, plan, compare: --force, replace a run already in out_dir
    std::vector<std::string> traces;  ///< compare: networks to compare
    bool simulate = false;            ///< compare: simulate every plan instead of predicting it
    std::vector<std::string> overrides;
    std::string timeline_path;                        ///< run --trace: where the timeline goes
    std::optional<run::TimelineRequest> timeline;     ///< run --trace: set when a timeline is wanted
    double max_work_s = run::kDefaultMaxWorkSeconds;  ///< run, plan, compare: --max-work
    bool per_layer = false;                           ///< run: --per-layer
    std::string plan_path;                            ///< run --plan: a plan to evaluate instead of planning
    std::vector<std::string> planner_overrides;       ///< the -p planner.* keys given (--planner, --comm-only, ... too)
};

/// Which options a command takes beyond CONFIG, -p and --dump-config.
struct CommandOptions {
    bool out = false;
    bool fidelity = false;
    bool planner = false;    ///< --planner, --comm-only, --equal-split
    bool compare = false;    ///< --trace (network traces), --simulate
    bool timeline = false;   ///< --trace FILE (a timeline of the run), --trace-detail-limit
    bool work = false;       ///< --max-work SECONDS
    bool per_layer = false;  ///< --per-layer (run)
    bool plan = false;       ///< --plan FILE (run)
};

/// Parses CONFIG, -p overrides, --dump-config and the common options (and, for `run`,
/// --out and --fidelity). Empty on --help.
std::optional<ConfigInvocation> parse_config_args(const std::vector<std::string>& args, const std::string& usage,
                                                  const CommandOptions& take) {
    po::options_description options(usage + "\n\nOptions");
    std::string config_path, out_dir, fidelity, planner_name, timeline_path, detail_limit, max_work, plan_path;
    std::vector<std::string> overrides, traces;
    if (take.out)
        options.add_options()("out", po::value(&out_dir), "write the report files (JSON and CSV) into this folder")(
            "force", "with --out: replace a run the folder already holds (whole, once this one is complete)");
    if (take.fidelity)
        options.add_options()("fidelity", po::value(&fidelity),
                              "memo (default: memoised tile timing) or stepped (the SystemC array, cycle by cycle); "
                              "same as -p run.fidelity=...");
    if (take.planner)
        options.add_options()("planner", po::value(&planner_name),
                              (name_list<planner::PlannerKind>() + "; same as -p planner.name=...").c_str())(
            "comm-only", "minimise and report communication volume only (AccPar/HyPar accounting)")(
            "equal-split", "split every dimension in proportion to node counts (1/2 for equal halves), not by speed");
    if (take.compare)
        options.add_options()("trace", po::value(&traces)->composing(),
                              "a network trace to compare on (repeatable; default: the config's)")(
            "simulate", "simulate every plan on the cluster instead of using the planner's prediction");
    if (take.timeline)
        options.add_options()("trace", po::value(&timeline_path),
                              "write a timeline of the run to this file as Chrome trace-event JSON (open it in "
                              "Perfetto or chrome://tracing)")(
            "trace-detail-limit", po::value(&detail_limit),
            ("with --trace: the most detailed spans (tile stages, ops, transfers) kept; beyond it they are "
             "aggregated per layer and phase or schedule label (default " +
             std::to_string(run::kDefaultTimelineDetailLimit) + ")")
                .c_str());
    if (take.per_layer)
        options.add_options()("per-layer",
                              "training_step: print every layer and phase, not only the totals, the phases "
                              "and the layers that take the most cycles");
    if (take.plan)
        options.add_options()(
            "plan", po::value(&plan_path),
            "run.mode cluster: evaluate this plan.json (written by fastsim plan or by hand) instead of "
            "planning (docs/planner.md, \"Plans as input\")");
    if (take.work)
        options.add_options()(
            "max-work", po::value(&max_work),
            ("refuse runs estimated above this many seconds of work (default " +
             std::to_string(static_cast<int>(run::kDefaultMaxWorkSeconds)) + "; docs/cli.md, \"Work limit\")")
                .c_str());
    options.add_options()("config", po::value(&config_path), "YAML config file")(
        "param,p", po::value(&overrides)->composing(), "override a config key: -p key.path=value (repeatable)")(
        "dump-config", "print the effective config (every default filled in) as YAML");
    po::positional_options_description positional;
    positional.add("config", 1);
    const auto parsed = parse_command_line(args, options, positional);
    if (!parsed) return std::nullopt;
    const po::variables_map& vm = *parsed;
    if (config_path.empty()) throw UserError("missing CONFIG: " + usage);
    if (vm.count("force") && out_dir.empty()) throw UserError("--force applies with --out DIR");
    const double given_max_work_s = vm.count("max-work") ? run::parse_max_work(max_work) : 0;  // 0: not given
    std::optional<run::TimelineRequest> timeline;
    if (vm.count("trace-detail-limit") && !vm.count("trace"))
        throw UserError("--trace-detail-limit needs --trace FILE");
    if (take.timeline && vm.count("trace")) {
        if (timeline_path.empty()) throw UserError("--trace: expected a file name, got ''");
        sweep::refuse_replacing_result_file(timeline_path, "--trace");
        timeline.emplace();
        if (vm.count("trace-detail-limit"))
            timeline->detail_limit = parse_unsigned_option(detail_limit, "--trace-detail-limit", ~std::uint64_t{0});
    }
    if (!fidelity.empty()) {
        if (!parse_name<config::Fidelity>(fidelity))
            throw UserError("--fidelity: expected memo or stepped, got '" + fidelity + "'");
        overrides.push_back("run.fidelity=" + fidelity);
    }
    if (!planner_name.empty()) {
        if (!planner::parse_planner(planner_name))
            throw UserError("--planner: expected one of " + name_list<planner::PlannerKind>() + ", got '" +
                            planner_name + "'");
        overrides.push_back("planner.name=" + planner_name);
    }
    if (vm.count("comm-only")) overrides.push_back("planner.comm_only=true");
    if (vm.count("equal-split")) overrides.push_back("planner.equal_split=true");
    std::vector<std::string> planner_overrides;
    for (const std::string& o : overrides)
        if (o.rfind("planner.", 0) == 0) planner_overrides.push_back(o);
    config::Params params = config::load(config_path, overrides);
    const double max_work_s =
        given_max_work_s > 0 ? given_max_work_s : params.run.max_work_s.value_or(run::kDefaultMaxWorkSeconds);
    ConfigInvocation out{std::move(params),
                         vm.count("dump-config") > 0,
                         out_dir,
                         vm.count("force") > 0,
                         traces,
                         vm.count("simulate") > 0,
                         overrides,
                         timeline_path,
                         timeline,
                         max_work_s,
                         vm.count("per-layer") > 0,
                         plan_path,
                         planner_overrides};
    logger("config")->info("loaded {} with {} override(s)", config_path, overrides.size());
    for (const std::string& warning : out.params.workload.network.warnings) logger("trace")->warn("{}", warning);
    return out;
}

void print_bfp_error_report(const config::Params& params, double max_work_s) {
    const run::WorkEstimate work = run::estimate_bfp_report(params);
    run::check_work(work, max_work_s, params.source_file);
    ProgressLine progress("BFP error report", work);
    const auto rows = run::bfp_error_report(params, progress.callback());
    std::cout << "BFP quantisation error (g=" << params.bfp.group_size << ", e=" << params.bfp.exponent_bits
              << ", stochastic noise " << params.bfp.noise_bits << " bits from a " << params.bfp.lfsr_bits
              << "-bit LFSR, seed " << params.run.seed << ")\n\n";
    output::Table table({"tensor", "distribution", "mantissa_bits", "rounding", "sqnr_db", "mean_rel_error",
                         "max_rel_error", "mean_abs_error"});
    for (const auto& r : rows)
        table.add_row({r.tensor, std::string(config::to_string(r.distribution)), std::to_string(r.mantissa_bits),
                       std::string(bfp::to_string(r.rounding)), output::Table::fixed(r.stats.sqnr_db, 2),
                       output::Table::scientific(r.stats.mean_rel_error),
                       output::Table::scientific(r.stats.max_rel_error),
                       output::Table::scientific(r.stats.mean_abs_error)});
    table.print(std::cout);
}

/// Writes `timeline` as Chrome trace-event JSON to `path` (atomically) and says so on stdout;
/// an aggregated timeline is also announced on stderr.
void write_timeline(const std::string& path, const run::Timeline& timeline, const config::Params& params) {
    if (timeline.aggregated)
        logger("trace")->warn("{} detailed spans exceed --trace-detail-limit {}: {} shows aggregates ({})",
                              timeline.detailed_spans, timeline.detail_limit, path, timeline.aggregate_rule);
    fastsim::write_file_atomically(
        path, output::trace_json(timeline, {{"generator", "fastsim " FASTSIM_VERSION},
                                            {"config", params.source_file},
                                            {"run_mode", std::string(config::to_string(params.run.mode))},
                                            {"network", params.workload.network.name}}));
    std::cout << "wrote " << path << " (" << timeline.spans.size() << " spans"
              << (timeline.aggregated ? ", aggregated" : "") << ")\n";
}

/// Re-runnable description of this process's command: `fastsim COMMAND ARGS...`.
run::RunProvenance provenance(const std::string& command, const std::vector<std::string>& args) {
    std::vector<std::string> words{"fastsim", command};
    words.insert(words.end(), args.begin(), args.end());
    return {FASTSIM_VERSION, shell_command_line(words)};
}

/// The run directory of `--out`, locked, checked and staged before the work starts; none without --out.
std::unique_ptr<sweep::RunDirWriter> run_dir(const ConfigInvocation& invocation, const std::string& command) {
    if (invocation.out_dir.empty()) return nullptr;
    return std::make_unique<sweep::RunDirWriter>(invocation.out_dir, invocation.force, command);
}

void run_training_step(const ConfigInvocation& invocation, const run::RunProvenance& made_by) {
    const config::Params& params = invocation.params;
    const std::string& out_dir = invocation.out_dir;
    const run::WorkEstimate work = run::estimate_training_step(params, invocation.timeline.has_value());
    run::check_work(work, invocation.max_work_s, params.source_file);
    const std::unique_ptr<sweep::RunDirWriter> out = run_dir(invocation, "run");
    ProgressLine progress("training step", work);
    const auto start = std::chrono::steady_clock::now();
    const run::TrainingStepResult result = run::run_training_step(params, progress.callback(), invocation.timeline);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    logger("run")->info("{} phases simulated in {:.3f} s ({} distinct tile shapes memoised)", result.phases.size(),
                        seconds, result.distinct_tile_shapes);
    if (const std::optional<std::string> note = run::converter_bound_note(params, result))
        logger("run")->warn("{}", *note);
    output::print_training_step(
        std::cout, params, result,
        invocation.per_layer ? output::StepReportDetail::per_layer : output::StepReportDetail::summary);
    // A whole run: workload.steps, or a precision schedule.
    const std::optional<run::WholeRunResult> whole_run = run::whole_training_if_any(params, result);
    if (whole_run) output::print_whole_run(std::cout, params, *whole_run);
    if (out) {
        for (const auto& [name, content] :
             output::training_step_files(params, result, made_by, whole_run ? &*whole_run : nullptr))
            out->write(name, content);
        out->commit(FASTSIM_VERSION);
        std::cout << "wrote report.json, layers.csv, summary.json and config.yaml to " << out_dir << "\n";
    }
    if (result.timeline) write_timeline(invocation.timeline_path, *result.timeline, params);
}

void require_cluster(const config::Params& params, const std::string& command) {
    if (params.run.mode != config::RunMode::cluster)
        throw UserError("fastsim " + command + " needs a config with run.mode cluster (" + params.source_file +
                        " has run.mode " + std::string(config::to_string(params.run.mode)) + ")");
}

/// `work()`, with a planner::PlanError (a plan the input makes impossible) named by the config file.
template <typename Work>
auto naming_config(const config::Params& params, Work&& work) {
    try {
        return work();
    } catch (const planner::PlanError& e) {
        throw UserError(params.source_file + ": " + e.what() + " (workload.batch " +
                        std::to_string(params.workload.batch) + ", planner.name " +
                        std::string(planner::to_string(params.planner.kind)) + ")");
    }
}

/// The plan of `run --plan` read against the config, and the config with the plan's planner
/// options (what the work estimate, the reports and config.yaml describe). UserError when a
/// planner setting is given beside it: planner.name, comm_only and equal_split (or --planner,
/// --comm-only, --equal-split) only if they are the plan's, any other planner key never.
std::pair<planner::PlanDecisions, config::Params> given_plan(const ConfigInvocation& invocation) {
    const config::Params& params = invocation.params;
    const std::string& path = invocation.plan_path;
    const planner::LayerGraph graph = planner::build_layer_graph(params.workload.network, params.workload.batch);
    planner::PlanDecisions decisions = config::read_plan_file(path, graph, params.cluster);
    const planner::PlannerOptions asked = params.planner.options();
    bool label_asked = false;
    for (const std::string& o : invocation.planner_overrides) {
        const std::string key = o.substr(0, o.find('='));
        if (key == "planner.name" || key == "planner.comm_only" || key == "planner.equal_split") {
            label_asked = true;
            continue;
        }
        throw UserError("-p " + key + ": with --plan the plan sets the planner's options (" + path + "); drop -p " +
                        key);
    }
    if (label_asked && (asked.kind != decisions.options.kind || asked.comm_only != decisions.options.comm_only ||
                        asked.equal_split != decisions.options.equal_split))
        throw UserError("--plan " + path + " is a plan of " + std::string(planner::to_string(decisions.options.kind)) +
                        (decisions.options.comm_only ? " (comm_only)" : "") +
                        (decisions.options.equal_split ? " (equal_split)" : "") +
                        ", but the planner asked for beside it is " + std::string(planner::to_string(asked.kind)) +
                        (asked.comm_only ? " (comm_only)" : "") + (asked.equal_split ? " (equal_split)" : "") +
                        ": drop --planner, --comm-only and --equal-split, or make them the plan's");
    config::Params effective = params;
    config::PlannerParams& p = effective.planner;
    p.kind = decisions.options.kind;
    p.comm_only = decisions.options.comm_only;
    p.equal_split = decisions.options.equal_split;
    const auto& stages = decisions.pipeline;  // a stage plan's decisions, if it is one
    if (stages) {
        p.stages = {};
        p.stages.count = stages->stages.size();
        p.microbatches = stages->microbatches;
        p.schedule = stages->schedule;
        p.intra = decisions.options.pipeline.intra;
    }
    return {std::move(decisions), std::move(effective)};
}

/// planner.pipeline keys that mean nothing to the planner `run` or `plan` uses are an error: every
/// key but under `pipeline` and `alpa`; under AccPar where it weighs their plans (several groups,
/// the time objective) all but an intra planner other than accpar, which it forces.
void refuse_unused_pipeline_keys(const config::Params& params) {
    const config::PlannerParams& p = params.planner;
    if (planner::is_pipeline(p.kind)) return;
    const bool accpar_pipelines = p.kind == planner::PlannerKind::accpar && run::accpar_weighs_pipelines(params);
    for (const auto& [key, where] : p.pipeline_keys_given) {
        const bool intra = key == "pipeline.intra";
        if (accpar_pipelines && (!intra || p.intra == planner::PlannerKind::accpar)) continue;
        const std::string also = !intra             ? " (and to accpar on a cluster of several groups, which weighs "
                                                      "their plans)"
                                 : accpar_pipelines ? " (accpar plans their stages with accpar)"
                                                    : "";
        throw ConfigError(where, (key.rfind("cluster.", 0) == 0 ? key : "planner." + key) +
                                     " applies to the pipeline and alpa planners" + also + "; planner.name is " +
                                     std::string(planner::to_string(p.kind)));
    }
}

void run_cluster(const ConfigInvocation& invocation, const run::RunProvenance& made_by) {
    std::optional<std::pair<planner::PlanDecisions, config::Params>> plan_file;
    if (!invocation.plan_path.empty()) plan_file = given_plan(invocation);
    const planner::PlanDecisions* given = plan_file ? &plan_file->first : nullptr;
    const config::Params& params = plan_file ? plan_file->second : invocation.params;
    if (!plan_file) refuse_unused_pipeline_keys(params);
    const std::string& out_dir = invocation.out_dir;
    const run::WorkEstimate work = run::estimate_cluster(params, true, {params.planner.kind});
    run::check_work(work, invocation.max_work_s, params.source_file);
    const std::unique_ptr<sweep::RunDirWriter> out = run_dir(invocation, "run");
    ProgressLine progress("cluster step", work);
    const auto simulate = [&] {
        return run::run_cluster_step(params, params.planner.options(), invocation.timeline, progress.callback(), given);
    };
    const run::ClusterStepResult result = [&] {
        if (!given) return naming_config(params, simulate);
        try {
            return simulate();
        } catch (const planner::PlanError& e) {
            throw UserError(invocation.plan_path + ": " + e.what());
        }
    }();
    output::print_cluster_step(std::cout, params, result);
    if (params.workload.steps > 1)
        std::cout << "whole run: " << params.workload.steps << " steps (workload.steps) of the simulated step: "
                  << output::Table::fixed(result.step_s * static_cast<double>(params.workload.steps), 3) << " s, "
                  << output::Table::fixed(
                         (result.compute_energy.total_pj() + result.link_energy_pj + result.compression_energy_pj) *
                             1e-12 * static_cast<double>(params.workload.steps),
                         3)
                  << " J\n";
    if (out) {
        for (const auto& [name, content] : output::cluster_step_files(params, result, made_by))
            out->write(name, content);
        out->commit(FASTSIM_VERSION);
        std::cout << "wrote report.json, layers.csv, nodes.csv, plan.json, plan.csv, summary.json and config.yaml to "
                  << out_dir << "\n";
    }
    if (result.timeline) write_timeline(invocation.timeline_path, *result.timeline, params);
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
    const auto invocation =
        parse_config_args(args,
                          "fastsim run CONFIG [-p key=value ...] [--out DIR] [--per-layer] [--trace FILE "
                          "[--trace-detail-limit N]] [--fidelity memo|stepped] [--planner NAME] [--comm-only] "
                          "[--equal-split] [--plan PLAN.json] [--max-work SECONDS] [--dump-config]",
                          {true, true, true, false, true, true, true, true});
    if (!invocation) return kSuccess;
    const config::Params& params = invocation->params;
    if (invocation->dump) std::cout << config::dump(params) << '\n';
    switch (params.run.mode) {
    case config::RunMode::bfp_report:
        if (!invocation->plan_path.empty()) throw UserError("--plan applies to run.mode cluster");
        if (!invocation->out_dir.empty()) throw UserError("--out applies to run.mode training_step or cluster");
        if (invocation->per_layer) throw UserError("--per-layer applies to run.mode training_step");
        if (invocation->timeline)
            throw UserError("--trace applies to run.mode training_step or cluster (" + params.source_file +
                            " has run.mode bfp_report, which simulates no time)");
        print_bfp_error_report(params, invocation->max_work_s);
        break;
    case config::RunMode::training_step:
        if (!invocation->plan_path.empty())
            throw UserError("--plan applies to run.mode cluster (" + params.source_file +
                            " has run.mode training_step)");
        run_training_step(*invocation, provenance("run", args));
        break;
    case config::RunMode::cluster:
        if (invocation->per_layer)
            throw UserError(
                "--per-layer applies to run.mode training_step (a cluster run's layers are in layers.csv with --out)");
        run_cluster(*invocation, provenance("run", args));
        break;
    }
    return kSuccess;
}

int plan_command(const std::vector<std::string>& args) {
    const auto invocation = parse_config_args(args,
                                              "fastsim plan CONFIG [-p key=value ...] [--planner NAME] [--comm-only] "
                                              "[--equal-split] [--out DIR] [--max-work SECONDS]",
                                              {true, false, true, false, false, true});
    if (!invocation) return kSuccess;
    const config::Params& params = invocation->params;
    require_cluster(params, "plan");
    refuse_unused_pipeline_keys(params);
    if (invocation->dump) std::cout << config::dump(params) << '\n';
    const run::WorkEstimate work = run::estimate_cluster(params, false, {params.planner.kind});
    run::check_work(work, invocation->max_work_s, params.source_file);
    const std::unique_ptr<sweep::RunDirWriter> out = run_dir(*invocation, "plan");
    ProgressLine progress("plan", work);
    const planner::LayerGraph graph = planner::build_layer_graph(params.workload.network, params.workload.batch);
    run::ClusterCosts costs(params, graph);
    const run::ClusterPlan planned = naming_config(
        params, [&] { return run::plan_cluster(params, params.planner.options(), costs, progress.callback()); });
    logger("plan")->info("characterised {} layer shapes ({} memo tiles)", costs.compute.entries(),
                         costs.compute.tiles_run());
    output::print_plan(std::cout, params, planned);
    if (out) {
        const std::vector<interconnect::AllReduceUse> all_reduces =
            run::planned_all_reduces(planned, costs, params.cluster.node_type.size());
        out->write("plan.json", output::plan_json(params, planned, &all_reduces));
        out->write("plan.csv", output::plan_csv(params, planned));
        out->commit(FASTSIM_VERSION);
        std::cout << "wrote " << invocation->out_dir << "/plan.json and " << invocation->out_dir << "/plan.csv\n";
    }
    return kSuccess;
}

int compare_command(const std::vector<std::string>& args) {
    const auto invocation = parse_config_args(args,
                                              "fastsim compare CONFIG [--trace FILE ...] [--simulate] [--comm-only] "
                                              "[--equal-split] [--out DIR] [--max-work SECONDS]",
                                              {true, false, true, true, false, true});
    if (!invocation) return kSuccess;
    require_cluster(invocation->params, "compare");
    for (const std::string& o : invocation->overrides)
        if (o.rfind("planner.name=", 0) == 0)
            throw UserError("fastsim compare runs every planner: --planner and -p planner.name do not apply");
    std::vector<std::string> traces = invocation->traces;
    if (traces.empty()) traces.push_back("");  // the config's own workload
    // (1) Every network's config, and the work of all of them, before anything runs.
    std::vector<config::Params> networks;
    run::WorkEstimate work;
    for (const std::string& trace : traces) {
        std::vector<std::string> overrides = invocation->overrides;
        if (!trace.empty())
            overrides.push_back(
                (std::filesystem::path(trace).extension() == ".onnx" ? "workload.model=" : "workload.trace=") +
                std::filesystem::absolute(trace).string());
        networks.push_back(config::load(invocation->params.source_file, overrides));
        work.merge(run::estimate_cluster(networks.back(), invocation->simulate,
                                         {planner::kAllPlanners.begin(), planner::kAllPlanners.end()}));
    }
    run::check_work(work, invocation->max_work_s, invocation->params.source_file);
    const std::unique_ptr<sweep::RunDirWriter> out = run_dir(*invocation, "compare");
    ProgressLine progress("compare", work);
    const std::vector<run::ComparisonRow> rows = run::compare_planners(
        networks, invocation->simulate, progress.callback(),
        [](const run::ComparisonRow& row, planner::PlannerKind kind, const run::ComparisonCell& cell) {
            logger("compare")->info("{} {}: {:.6f} s, {:.3f} MB{}", row.network, planner::to_string(kind),
                                    cell.step_s(), cell.comm_bytes / 1e6,
                                    cell.error.empty() ? "" : " (" + cell.error + ")");
        });
    output::print_comparison(std::cout, rows, invocation->params.planner.comm_only, invocation->simulate);
    if (out) {
        out->write("compare.csv", output::comparison_csv(rows, invocation->params.planner.comm_only));
        out->commit(FASTSIM_VERSION);
        std::cout << "wrote " << invocation->out_dir << "/compare.csv\n";
    }
    return kSuccess;
}

}  // namespace fastsim::cli
