// SPDX-License-Identifier: MIT
#include "run/collective_run.h"

#include <algorithm>
#include <functional>
#include <stdexcept>

#include "cluster/cluster.h"
#include "common/checked.h"
#include "common/errors.h"
#include "interconnect/closed_form.h"
#include "interconnect/collective_cost.h"
#include "run/fresh_kernel.h"

namespace fastsim::run {
namespace {

/// Per op of a direct collective and rank of it: its all-reduce of 1 KiB over the first 300,
/// 600 and all 1,200 nodes of configs/collective/reference.yaml took 1.7, 11 and 100 s
/// (docs/performance.md, "Work estimates").
constexpr double kNsPerDirectMessageInFlight = 12;

/// nccl-tests' bus-bandwidth factor.
double bus_factor(interconnect::CollectiveOp op, std::size_t p) {
    const double pd = static_cast<double>(p);
    return op == interconnect::CollectiveOp::all_reduce ? 2 * (pd - 1) / pd : (pd - 1) / pd;
}

}  // namespace

WorkEstimate estimate_collectives(const config::Params& params, const CollectiveSweep& sweep) {
    const interconnect::Topology& topology = *params.cluster.topology;
    double ops = 0, direct_ops = 0;
    const auto has_direct = [](const interconnect::AlgorithmPerDimension& a) {
        return std::find(a.begin(), a.end(), interconnect::AllReduceAlgorithm::direct) != a.end();
    };
    for (const interconnect::CollectiveOp op : sweep.ops)
        for (const auto& algorithms :
             sweep.algorithms.empty() ? std::vector<interconnect::AlgorithmPerDimension>{{}} : sweep.algorithms) {
            std::uint64_t most = 0;  // best: the candidate of most ops
            if (algorithms.empty()) {
                for (const interconnect::AllReduceAlgorithm a : interconnect::kAllReduceAlgorithms)
                    if (!interconnect::unsupported(topology, op, {a}, sweep.ranks))
                        most = std::max(most, interconnect::collective_ops_per_rank(topology, op, {a}, sweep.ranks));
            } else {
                most = interconnect::collective_ops_per_rank(topology, op, algorithms, sweep.ranks);
                if (has_direct(algorithms))
                    direct_ops += static_cast<double>(most * sweep.ranks.size() * sweep.bytes.size());
            }
            ops += static_cast<double>(most * sweep.ranks.size() * sweep.bytes.size());
        }
    const std::string what = "timing collectives over " + std::to_string(sweep.ranks.size()) + " ranks";
    WorkEstimate e = estimate_network_ops(params, ops, what);
    // A direct collective posts every rank's messages at once: each op then waits among the
    // others in flight, about p of them per channel.
    e.add("direct messages in flight", direct_ops * static_cast<double>(sweep.ranks.size()),
          kNsPerDirectMessageInFlight, what);
    return e;
}

std::vector<CollectiveRow> run_collectives(const config::Params& params, const CollectiveSweep& sweep,
                                           const WorkProgress& progress) {
    const interconnect::Topology& topology = *params.cluster.topology;
    const std::size_t p = sweep.ranks.size();
    std::optional<interconnect::AllReduceChooser> chooser;
    const std::vector<interconnect::AlgorithmPerDimension> asked =
        sweep.algorithms.empty() ? std::vector<interconnect::AlgorithmPerDimension>{{}} : sweep.algorithms;
    std::vector<CollectiveRow> rows;
    const double total = static_cast<double>(sweep.ops.size() * asked.size() * sweep.bytes.size());
    for (const interconnect::CollectiveOp op : sweep.ops)
        for (const interconnect::AlgorithmPerDimension& algorithms : asked) {
            if (!algorithms.empty())
                if (const auto why = interconnect::unsupported(topology, op, algorithms, sweep.ranks))
                    throw std::invalid_argument(std::string(to_string(op)) + " with " +
                                                interconnect::describe(algorithms) + ": " + *why);
            for (const std::uint64_t bytes : sweep.bytes) {
                CollectiveRow row;
                row.op = op;
                row.ranks = p;
                row.bytes = bytes;
                interconnect::AlgorithmPerDimension used = algorithms;
                if (algorithms.empty()) {
                    if (!chooser) chooser.emplace(topology, std::nullopt);
                    used = chooser->choose_op(op, sweep.ranks, static_cast<double>(bytes));
                    if (used.empty())
                        throw std::invalid_argument(std::string(to_string(op)) +
                                                    ": no algorithm defines it over these ranks");
                    if (std::adjacent_find(used.begin(), used.end(), std::not_equal_to<>()) == used.end())
                        used.resize(1);  // the same algorithm in every dimension
                    row.algorithm = "best:" + interconnect::describe(used);
                } else {
                    row.algorithm = interconnect::describe(algorithms);
                }
                row.dimensions = interconnect::describe_span(interconnect::grid_span(topology, sweep.ranks), used, p);
                std::vector<interconnect::NodeProgram> programs(topology.node_count());
                interconnect::simulated_collective(topology, op, used, programs, sweep.ranks, bytes, 0, 0);
                try {
                    in_fresh_kernel([&] { row.time_s = to_seconds(cluster::run_cluster(topology, programs).end_ps); });
                } catch (const SizeOverflow& e) {
                    throw UserError(params.source_file + ": " + std::string(to_string(op)) + " of " +
                                    std::to_string(bytes) + " bytes (--bytes) over these links takes longer than " +
                                    "the 2^64 ps (213 days) a simulation counts (" + e.what() +
                                    "): fewer bytes, or faster links (link.bandwidth_gb_per_s)");
                }
                row.closed_form_s = interconnect::closed_form_seconds(topology, op, used, sweep.ranks, bytes);
                if (op == interconnect::CollectiveOp::all_reduce)
                    row.planned_s =
                        interconnect::all_reduce_cost(topology, sweep.ranks, used).seconds(static_cast<double>(bytes));
                row.algbw_gb_per_s = row.time_s > 0 ? static_cast<double>(bytes) / row.time_s / 1e9 : 0;
                row.busbw_gb_per_s = row.algbw_gb_per_s * bus_factor(op, p);
                rows.push_back(std::move(row));
                if (progress) progress(static_cast<double>(rows.size()) / total);
            }
        }
    return rows;
}

}  // namespace fastsim::run
