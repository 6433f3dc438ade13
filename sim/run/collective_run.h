// SPDX-License-Identifier: MIT
#pragma once

// fastsim collective (docs/cli.md, "fastsim collective"): one collective at a time on the
// SystemC network of a config's cluster section, nccl-tests style.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/params.h"
#include "interconnect/collective.h"
#include "run/work.h"

namespace fastsim::run {

/// What to time: each op with each algorithm at each size, over `ranks`.
struct CollectiveSweep {
    std::vector<interconnect::CollectiveOp> ops;
    /// Each an algorithm per dimension; empty = `best` (chosen per dimension and size).
    std::vector<interconnect::AlgorithmPerDimension> algorithms;
    std::vector<std::uint64_t> bytes;
    std::vector<NodeId> ranks;
};

/// One row of collective.csv.
struct CollectiveRow {
    interconnect::CollectiveOp op = interconnect::CollectiveOp::all_reduce;
    std::string algorithm;   ///< as asked: "ring", "ring/direct", or "best:" and the choice per dimension
    std::string dimensions;  ///< the sizes of the dimensions it went through: "32x32", or the rank count
    std::size_t ranks = 0;
    std::uint64_t bytes = 0;
    double time_s = 0;                    ///< simulated on the SystemC network
    std::optional<double> closed_form_s;  ///< interconnect::closed_form_seconds, where there is one
    std::optional<double> planned_s;      ///< all-reduce: the planner's cost (interconnect::all_reduce_cost)
    double algbw_gb_per_s = 0;            ///< bytes / time_s, in 1e9 B/s
    double busbw_gb_per_s = 0;            ///< algbw x 2(p - 1)/p (all-reduce) or (p - 1)/p (the others)
};

/// The rows' work: their ops at most, on the cluster's topology.
WorkEstimate estimate_collectives(const config::Params& params, const CollectiveSweep& sweep);

/// Every (op, algorithm, bytes) of `sweep` simulated in a kernel of its own, in that order;
/// `progress` hears the fraction of rows done. std::invalid_argument for an op that an
/// algorithm does not define over the ranks (the message says why).
std::vector<CollectiveRow> run_collectives(const config::Params& params, const CollectiveSweep& sweep,
                                           const WorkProgress& progress = {});

}  // namespace fastsim::run
