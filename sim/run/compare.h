// SPDX-License-Identifier: MIT
#pragma once

#include <functional>
#include <vector>

#include "config/params.h"
#include "planner/planner.h"
#include "run/cluster_report.h"
#include "run/work.h"

namespace fastsim::run {

/// Called as each cell of `fastsim compare` is finished: its network's row so far, the planner
/// and the cell.
using ComparisonCellDone = std::function<void(const ComparisonRow& row, planner::PlannerKind kind, const ComparisonCell& cell)>;

/// `fastsim compare`: for each network config (one Params per trace), every planner of
/// planner::kAllPlanners plans (and with `simulate` runs on the SystemC cluster, each under a
/// fresh kernel); a PlanError becomes the cell's error, and the cell notes what --equal-split
/// means for the planner and whose plan AccPar kept. `progress` gets the fraction of cells
/// done; `on_cell` (may be empty) each cell.
std::vector<ComparisonRow> compare_planners(const std::vector<config::Params>& networks, bool simulate,
                                            const WorkProgress& progress = {}, const ComparisonCellDone& on_cell = {});

}  // namespace fastsim::run
