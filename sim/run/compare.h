// SPDX-License-Identifier: MIT
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "config/params.h"
#include "planner/planner.h"
#include "run/cluster_step.h"
#include "run/work.h"

namespace fastsim::run {

/// One planner's result in `fastsim compare`.
struct ComparisonCell {
    double planned_step_s = 0;               ///< the planner's prediction
    std::optional<double> simulated_step_s;  ///< with --simulate
    double comm_bytes = 0;                   ///< AccPar's accounting (every group's exchanges)
    std::string note;                        ///< e.g. what --equal-split means for this planner
    std::string error;                       ///< why it could not plan, or empty
    /// The step compare ranks by: simulated with --simulate, else planned.
    [[nodiscard]] double step_s() const { return simulated_step_s ? *simulated_step_s : planned_step_s; }
};

/// One network's row of `fastsim compare`: a cell per planner, in planner::kAllPlanners order.
struct ComparisonRow {
    std::string network;
    std::vector<ComparisonCell> cells;
};

/// Called as each cell of `fastsim compare` is finished: its network's row so far, the planner
/// and the cell.
using ComparisonCellDone =
    std::function<void(const ComparisonRow& row, planner::PlannerKind kind, const ComparisonCell& cell)>;

/// `fastsim compare`: for each network config (one Params per trace), every planner of
/// planner::kAllPlanners plans (and with `simulate` runs on the SystemC cluster, each under a
/// fresh kernel); a PlanError becomes the cell's error, and the cell notes what --equal-split
/// means for the planner and whose plan AccPar kept. `progress` gets the fraction of cells
/// done; `on_cell` (may be empty) each cell.
std::vector<ComparisonRow> compare_planners(const std::vector<config::Params>& networks, bool simulate,
                                            const WorkProgress& progress = {}, const ComparisonCellDone& on_cell = {});

}  // namespace fastsim::run
