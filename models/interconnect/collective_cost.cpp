// SPDX-License-Identifier: MIT
#include "interconnect/collective_cost.h"

#include <algorithm>
#include "interconnect/replay.h"

namespace fastsim::interconnect {
CollectiveCost all_reduce_cost(const Topology& topology, const std::vector<std::size_t>& ranks,
                               AllReduceAlgorithm algorithm) {
    if (ranks.size() < 2) return {};
    // Replay the collective at two buffer sizes (whole bytes per chunk) and fit the line.
    const auto p = static_cast<std::uint64_t>(ranks.size());
    const std::uint64_t small = p * 4096, large = p * (std::uint64_t{1} << 20);
    const auto seconds_at = [&](std::uint64_t bytes) {
        std::vector<NodeProgram> programs(topology.node_count());
        all_reduce(algorithm, programs, ranks, bytes, 0, 0);
        return static_cast<double>(replay_messages(topology, programs)) * 1e-12;
    };
    const double t_small = seconds_at(small), t_large = seconds_at(large);
    CollectiveCost cost;
    cost.seconds_per_byte = (t_large - t_small) / static_cast<double>(large - small);
    cost.latency_s = std::max(0.0, t_small - cost.seconds_per_byte * static_cast<double>(small));
    return cost;
}

const CollectiveCost& AllReduceChooser::cost(const std::vector<std::size_t>& ranks, AllReduceAlgorithm algorithm) {
    const auto key = std::make_pair(ranks, algorithm);
    if (const auto it = m_costs.find(key); it != m_costs.end()) return it->second;
    return m_costs.emplace(key, all_reduce_cost(m_topology, ranks, algorithm)).first->second;
}

std::pair<AllReduceAlgorithm, double> AllReduceChooser::choose(const std::vector<std::size_t>& ranks, double bytes) {
    if (m_forced) return {*m_forced, cost(ranks, *m_forced).seconds(bytes)};
    std::pair<AllReduceAlgorithm, double> best{AllReduceAlgorithm::ring, -1};
    for (const AllReduceAlgorithm a : kAllReduceAlgorithms) {
        if (a == AllReduceAlgorithm::direct && ranks.size() > kMaxDirectRanks) continue;
        const double s = cost(ranks, a).seconds(bytes);
        if (best.second < 0 || s < best.second) best = {a, s};
    }
    return best;
}

}  // namespace fastsim::interconnect
