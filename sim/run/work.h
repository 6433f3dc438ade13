// SPDX-License-Identifier: MIT
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "config/params.h"
#include "planner/planner.h"
#include "config/train_config.h"

namespace fastsim::run {

/// What a run will do, counted before it starts (docs/cli.md, "Work limit"): each part is a
/// count of one kind of work (memo tiles, PE-cycles, ops, ...) priced at what it costs on the
/// reference machine (docs/performance.md, "Work estimates"). The price makes the parts
/// comparable and gives an expected wall time; the count is exact or a stated bound. The
/// memory is the estimated peak of the largest structure the run holds.
struct WorkEstimate {
    struct Part {
        std::string what;  ///< plural noun: "memo tiles", "PE-cycles stepped", "cluster ops"
        double count = 0;
        double ns_each = 0;  ///< reference-machine nanoseconds per unit
        std::string where;   ///< what most of this part is, for people: "layer 'conv1' (forward) at t.yaml:4:5"
    };
    std::vector<Part> parts;
    double memory_bytes = 0;
    std::string memory_where;  ///< what takes the memory
    /// What would fit when the memory does not ("fewer nodes: about 300 would fit ..."); may be empty.
    std::string memory_remedy{};

    void add(std::string what, double count, double ns_each, std::string where = "");
    /// Adds another estimate's parts and keeps the larger memory peak.
    void merge(const WorkEstimate& other);
    /// Expected wall seconds on the reference machine.
    [[nodiscard]] double seconds() const;
    /// "2.2e+05 memo tiles + 1.4e+03 cluster ops, about 0.03 s, most of it in <where>".
    [[nodiscard]] std::string describe() const;
};

/// Default work limit in estimated seconds: anything above is refused unless --max-work
/// raises it, so no input runs much longer than this by accident.
inline constexpr double kDefaultMaxWorkSeconds = 20;
/// Above this many estimated seconds a run prints its estimate and shows progress.
inline constexpr double kProgressBudgetSeconds = 2;

/// UserError (exit 2), starting with `source` (the config file), if `estimate` exceeds
/// `max_work_s` (the message gives the estimate, the limit and the --max-work value that admits
/// the run), or if its memory exceeds what this machine has (run_memory_limit_bytes()).
void check_work(const WorkEstimate& estimate, double max_work_s, const std::string& source);

/// The memory a run may take: three quarters of this machine's physical memory.
double run_memory_limit_bytes();

/// `text` as a --max-work value: seconds > 0 (a decimal number); UserError otherwise.
double parse_max_work(const std::string& text);

/// A training step on the configured node (fastsim run, run.mode training_step): memo tiles
/// for the memo fidelity (per GEMM repeat too when `timeline`); for stepped, also its tiles,
/// cycles and PE-cycles, and the synthetic operands it draws. A SizeOverflow becomes a
/// ConfigError naming the layer.
WorkEstimate estimate_training_step(const config::Params& params, bool timeline);

/// A cluster plan (fastsim plan), and with `simulate` its run on the cluster (fastsim run):
/// route trees, the node characterisation, the planner's table and the schedule's ops; one plan
/// per planner in `kinds` (fastsim compare plans with all of them), each counting the plans it
/// makes (plans_made).
WorkEstimate estimate_cluster(const config::Params& params, bool simulate,
                              const std::vector<planner::PlannerKind>& kinds);

/// UserError (exit 2), starting with params.source_file, if simulating `ops` cluster ops (a
/// plan's, as its replay counted them: planner::Plan::replayed_ops) would take more memory than
/// this machine allows a run; the message says what would fit (`pipeline`: the plan is one).
void check_simulation_memory(const config::Params& params, std::uint64_t ops, bool pipeline = false);

/// `ops` cluster ops simulated on params.cluster's topology (`what` says what they are), priced
/// as a cluster run's.
WorkEstimate estimate_network_ops(const config::Params& params, double ops, const std::string& what);

/// How many hierarchies planning with `kind` plans: AccPar its own DP, a calibration round and
/// every other planner's plan (and alpa's where it weighs it: accpar_weighs_alpa); balanced data
/// parallelism a calibration round too.
std::size_t plans_made(planner::PlannerKind kind, bool with_alpa = false);
/// Whether accpar weighs the pipeline planners' plans on params' cluster: the time objective
/// over several groups (alpa's on at most planner::kAccParWeighsAlpaNodes nodes, else the
/// `pipeline` planner's).
bool accpar_weighs_pipelines(const config::Params& params);
/// Whether that plan is alpa's.
bool accpar_weighs_alpa(const config::Params& params);

/// fastsim scalesim: `requests` of SCALE-Sim's demand streams over every layer
/// (scalesim::simulated_requests), `largest` naming the layer of most.
WorkEstimate estimate_scalesim(double requests, const std::string& largest);

/// A BFP error report (run.mode bfp_report): every tensor drawn, then quantised once per
/// mantissa width and rounding.
WorkEstimate estimate_bfp_report(const config::Params& params);

/// fastsim train: iterations of every policy, priced by MACs per iteration and GEMM path.
WorkEstimate estimate_training(const config::TrainConfig& config, std::size_t train_samples, std::size_t test_samples);

/// Fraction of a run's work done so far (0 … 1), reported at checkpoints.
using WorkProgress = std::function<void(double fraction_done)>;

}  // namespace fastsim::run
