// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <vector>

#include "interconnect/topology.h"
#include "planner/planner.h"

namespace fastsim::costs {

/// Exchange cost between two node sets on `topology`, from the routes the schedule's pairs
/// take: the longest pair latency, and per direction the busiest channel's share of the bytes
/// over its bandwidth (docs/planner.md, "Communication time").
planner::ExchangeCost exchange_cost(const interconnect::Topology& topology, const std::vector<std::size_t>& side_a,
                                    const std::vector<std::size_t>& side_b);

}  // namespace fastsim::costs
