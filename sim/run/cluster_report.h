// SPDX-License-Identifier: MIT
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "config/params.h"
#include "run/provenance.h"
#include "run/cluster_step.h"

namespace fastsim::run {

/// `fastsim plan`: per layer the type at each depth along node 0's path, the root split and
/// the predicted compute and communication; then totals.
void print_plan(std::ostream& out, const config::Params& params, const ClusterPlan& planned);
/// plan.json: options, groups, totals, and per group and layer the choice and its costs.
std::string plan_json(const config::Params& params, const ClusterPlan& planned);
/// plan.csv: one row per (group, layer), units in the column names.
std::string plan_csv(const config::Params& params, const ClusterPlan& planned);

/// `fastsim run` of a cluster config: step time, per node busy/idle/communication, links,
/// energy by component and node, planned vs simulated time per layer.
void print_cluster_step(std::ostream& out, const config::Params& params, const ClusterStepResult& result);
/// report.json of a cluster run.
std::string cluster_step_json(const config::Params& params, const ClusterStepResult& result,
                                const RunProvenance& provenance);
/// layers.csv (planned vs simulated per layer) and nodes.csv (per node time and energy).
std::string cluster_layers_csv(const config::Params& params, const ClusterStepResult& result);
std::string cluster_nodes_csv(const config::Params& params, const ClusterStepResult& result);

/// One planner's result in `fastsim compare`.
struct ComparisonCell {
    double planned_step_s = 0;                ///< the planner's prediction
    std::optional<double> simulated_step_s;   ///< with --simulate
    double comm_bytes = 0;                    ///< AccPar's accounting (every group's exchanges)
    std::string note;                         ///< e.g. what --equal-split means for this planner
    std::string error;                        ///< why it could not plan, or empty
    /// The step compare ranks by: simulated with --simulate, else planned.
    [[nodiscard]] double step_s() const { return simulated_step_s ? *simulated_step_s : planned_step_s; }
};

/// One network's row of `fastsim compare`: a cell per planner, in planner::kAllPlanners order.
struct ComparisonRow {
    std::string network;
    std::vector<ComparisonCell> cells;
};

/// AccPar's results table: per network the speedup of every planner over data parallelism and
/// over balanced data parallelism (or, with comm_only, their volume over the planner's); with
/// --simulate also the prediction error; then each note and error.
void print_comparison(std::ostream& out, const std::vector<ComparisonRow>& rows, bool comm_only, bool simulated);
/// compare.csv: one row per network and planner (docs/cli.md, "compare").
std::string comparison_csv(const std::vector<ComparisonRow>& rows, bool comm_only);

}  // namespace fastsim::run
