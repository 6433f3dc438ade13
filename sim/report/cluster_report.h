// SPDX-License-Identifier: MIT
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "config/params.h"
#include "run/cluster_step.h"

namespace fastsim::report {

/// `fastsim plan`: per layer the type at each depth along node 0's path, the root split and
/// the predicted compute and communication; then totals.
void print_plan(std::ostream& out, const config::Params& params, const run::ClusterPlan& planned);
/// plan.json: options, groups, totals, and per group and layer the choice and its costs.
std::string plan_json(const config::Params& params, const run::ClusterPlan& planned);
/// plan.csv: one row per (group, layer), units in the column names.
std::string plan_csv(const config::Params& params, const run::ClusterPlan& planned);

/// `fastsim run` of a cluster config: step time, per node busy/idle/communication, links,
/// energy by component and node, planned vs simulated time per layer.
void print_cluster_step(std::ostream& out, const config::Params& params, const run::ClusterStepResult& result);
/// report.json of a cluster run.
std::string cluster_step_json(const config::Params& params, const run::ClusterStepResult& result);
/// layers.csv (planned vs simulated per layer) and nodes.csv (per node time and energy).
std::string cluster_layers_csv(const config::Params& params, const run::ClusterStepResult& result);
std::string cluster_nodes_csv(const config::Params& params, const run::ClusterStepResult& result);

/// One network's row of `fastsim compare`.
struct ComparisonRow {
    std::string network;
    std::vector<double> step_s;      ///< per planner in planner::kAllPlanners order (simulated or predicted)
    std::vector<double> comm_bytes;  ///< per planner
    std::vector<std::string> error;  ///< per planner: why it could not plan, or empty
};
/// AccPar's results table: per network the speedup of every planner over data parallelism.
void print_comparison(std::ostream& out, const std::vector<ComparisonRow>& rows, bool comm_only, bool simulated);
std::string comparison_csv(const std::vector<ComparisonRow>& rows);

}  // namespace fastsim::report
