// SPDX-License-Identifier: MIT
#include "run/compare.h"

#include <string>

#include "run/cluster_step.h"

namespace fastsim::run {

std::vector<ComparisonRow> compare_planners(const std::vector<config::Params>& networks, bool simulate,
                                            const WorkProgress& progress, const ComparisonCellDone& on_cell) {
    std::vector<ComparisonRow> rows;
    const double cells = static_cast<double>(networks.size() * planner::kAllPlanners.size());
    std::size_t done = 0;
    for (const config::Params& params : networks) {
        ComparisonRow row;
        row.network = params.workload.network.name;
        const planner::LayerGraph graph = planner::build_layer_graph(params.workload.network, params.workload.batch);
        ClusterCosts costs(params, graph);
        for (const planner::PlannerKind kind : planner::kAllPlanners) {
            planner::PlannerOptions options = params.planner.options();
            options.kind = kind;
            ComparisonCell cell;
            try {
                const auto note = [&](const planner::Plan& plan) {
                    if (options.equal_split && kind == planner::PlannerKind::data_parallel_balanced)
                        cell.note = "with --equal-split this is data_parallel";
                    else if (options.equal_split && !planner::equal_split_matters(kind))
                        cell.note = "splits by node count already; --equal-split changes nothing";
                    if (plan.chosen_from != kind)
                        cell.note = "kept " + std::string(planner::to_string(plan.chosen_from)) +
                                    "'s plan, which does better on AccPar's objective than its own DP's";
                    cell.planned_step_s = plan.step_s;
                    cell.comm_bytes = plan.comm_bytes;
                };
                if (simulate) {
                    const ClusterStepResult r = run_cluster_step_in_fresh_kernel(params, options, costs);
                    note(r.planned.plan);
                    cell.simulated_step_s = r.step_s;
                } else {
                    note(plan_cluster(params, options, costs).plan);
                }
            } catch (const planner::PlanError& e) {
                cell.error = e.what();
            }
            if (progress) progress(static_cast<double>(++done) / cells);
            if (on_cell) on_cell(row, kind, cell);
            row.cells.push_back(std::move(cell));
        }
        rows.push_back(std::move(row));
    }
    return rows;
}

}  // namespace fastsim::run
