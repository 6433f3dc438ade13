// SPDX-License-Identifier: MIT
#pragma once

// plan.json read back as a plan's decisions (docs/planner.md, "Plans as input"), for
// `fastsim run CFG --plan plan.json`.

#include <string>

#include "config/params.h"
#include "planner/layer_graph.h"
#include "planner/plan_decisions.h"

namespace fastsim::config {

/// The decisions of the plan file at `path`, checked against the config's network `graph` and
/// `cluster`: the node count (`nodes`) and each node's type (`node_types`, when given), the layer
/// names in order (`layers[].name`), the planner and its labels, each group's nodes as
/// bisecting the cluster gives them, its types and splits (`split_a`, or `alpha` alone; both
/// given, they must agree), and a pipeline's stages (layer names and node ids).
/// UserError "PATH: ENTRY: what was expected" otherwise. Splits out of range at their group and
/// the memory are checked when the plan is evaluated (planner::evaluate_plan).
planner::PlanDecisions read_plan_file(const std::string& path, const planner::LayerGraph& graph,
                                      const ClusterParams& cluster);
/// read_plan_file of `text`, the contents of a plan file named `source` (for errors).
planner::PlanDecisions read_plan_text(const std::string& text, const std::string& source,
                                      const planner::LayerGraph& graph, const ClusterParams& cluster);

}  // namespace fastsim::config
