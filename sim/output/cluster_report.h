// SPDX-License-Identifier: MIT
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "config/params.h"
#include "run/provenance.h"
#include "run/cluster_step.h"
#include "run/compare.h"

namespace fastsim::output {

/// `fastsim plan`: per layer the type at each depth along node 0's path, the root split and
/// the predicted compute and communication; then totals.
void print_plan(std::ostream& out, const config::Params& params, const run::ClusterPlan& planned);
/// plan.json: options, groups, totals, and per group and layer the choice and its costs; with
/// `all_reduces` (fastsim run: the schedule's), its gradient all-reduces by algorithm choice.
std::string plan_json(const config::Params& params, const run::ClusterPlan& planned,
                      const std::vector<interconnect::AllReduceUse>* all_reduces = nullptr);
/// plan.csv: one row per (group, layer), units in the column names.
std::string plan_csv(const config::Params& params, const run::ClusterPlan& planned);

/// `fastsim run` of a cluster config: step time, per node busy/idle/communication, links,
/// energy by component and node, planned vs simulated time per layer.
void print_cluster_step(std::ostream& out, const config::Params& params, const run::ClusterStepResult& result);
/// report.json of a cluster run.
std::string cluster_step_json(const config::Params& params, const run::ClusterStepResult& result,
                              const run::RunProvenance& provenance);
/// layers.csv (planned vs simulated per layer) and nodes.csv (per node time and energy).
std::string cluster_layers_csv(const config::Params& params, const run::ClusterStepResult& result);
std::string cluster_nodes_csv(const config::Params& params, const run::ClusterStepResult& result);

/// AccPar's results table: per network the speedup of every planner over data parallelism and
/// over balanced data parallelism (or, with comm_only, their volume over the planner's); with
/// --simulate also the prediction error; then each note and error.
void print_comparison(std::ostream& out, const std::vector<run::ComparisonRow>& rows, bool comm_only, bool simulated);
/// compare.csv: one row per network and planner (docs/cli.md, "compare").
std::string comparison_csv(const std::vector<run::ComparisonRow>& rows, bool comm_only);

}  // namespace fastsim::output
