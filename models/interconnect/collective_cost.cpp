// SPDX-License-Identifier: MIT
#include "interconnect/collective_cost.h"

#include <algorithm>
#include "interconnect/replay.h"

namespace fastsim::interconnect {
namespace {

/// One message of a synchronous step: from, to, and its share of the buffer n.
struct StepMessage {
    std::size_t from = 0, to = 0;
    double fraction = 0;
};

/// The synchronous-step (fluid) model of a collective: a step takes its longest route latency
/// plus its busiest channel's share of n over that channel's bandwidth; steps add up.
class FluidModel {
public:
    explicit FluidModel(const Topology& topology) : m_topology(topology), m_load(topology.channel_count(), 0.0) {}

    void add_step(const std::vector<StepMessage>& step, double repeat, CollectiveCost& cost) {
        std::uint64_t latency_ps = 0;
        for (const StepMessage& m : step) {
            m_topology.route_into(m.from, m.to, m_route);
            std::uint64_t path_ps = 0;
            for (const ChannelId c : m_route) {
                if (m_load[c] == 0) m_used.push_back(c);
                m_load[c] += m.fraction;
                path_ps += m_topology.channel(c).timing.latency_ps;
            }
            latency_ps = std::max(latency_ps, path_ps);
        }
        double per_byte = 0;
        for (const ChannelId c : m_used) {
            per_byte = std::max(per_byte, m_load[c] * 8 / static_cast<double>(m_topology.channel(c).timing.bits_per_s));
            m_load[c] = 0;
        }
        m_used.clear();
        cost.latency_s += repeat * static_cast<double>(latency_ps) * 1e-12;
        cost.seconds_per_byte += repeat * per_byte;
    }

    CollectiveCost all_reduce(const std::vector<std::size_t>& ranks, AllReduceAlgorithm algorithm) {
        const std::size_t p = ranks.size();
        CollectiveCost cost;
        std::vector<StepMessage> step;
        switch (algorithm) {
        case AllReduceAlgorithm::ring:
            for (std::size_t i = 0; i < p; ++i) step.push_back({ranks[i], ranks[(i + 1) % p], 1.0 / static_cast<double>(p)});
            add_step(step, static_cast<double>(2 * (p - 1)), cost);
            break;
        case AllReduceAlgorithm::tree:  // the binomial reduce's rounds, then the broadcast's
            for (std::size_t bit = 1; bit < p; bit <<= 1) {
                step.clear();
                for (std::size_t i = bit; i < p; i += 2 * bit) step.push_back({ranks[i], ranks[i - bit], 1.0});
                add_step(step, 2, cost);
            }
            break;
        case AllReduceAlgorithm::halving_doubling: {
            std::size_t core = 1;
            while (core * 2 <= p) core *= 2;
            for (std::size_t i = 0; core + i < p; ++i) step.push_back({ranks[core + i], ranks[i], 1.0});
            if (!step.empty()) add_step(step, 2, cost);  // fold, and unfold
            double fraction = 1.0;
            for (std::size_t distance = core / 2; distance >= 1; distance /= 2) {
                fraction /= 2;
                step.clear();
                for (std::size_t i = 0; i < core; ++i) step.push_back({ranks[i], ranks[i ^ distance], fraction});
                add_step(step, 2, cost);  // the halving step and its doubling mirror
            }
            break;
        }
        case AllReduceAlgorithm::direct:
            for (std::size_t i = 0; i < p; ++i)
                for (std::size_t j = 0; j < p; ++j)
                    if (i != j) step.push_back({ranks[i], ranks[j], 1.0 / static_cast<double>(p)});
            add_step(step, 2, cost);
            break;
        }
        return cost;
    }

private:
    const Topology& m_topology;
    std::vector<double> m_load;  ///< per channel: the fraction of n the current step puts on it
    std::vector<ChannelId> m_used, m_route;
};

}  // namespace

CollectiveCost all_reduce_cost(Network& network, const std::vector<std::size_t>& ranks, AllReduceAlgorithm algorithm) {
    if (ranks.size() < 2) return {};
    if (ranks.size() > kMaxReplayRanks) return FluidModel(network.topology()).all_reduce(ranks, algorithm);
    // Replay the collective, on the ranks alone, at two buffer sizes (whole bytes per chunk)
    // and fit the line.
    const std::size_t q = ranks.size();
    const auto p = static_cast<std::uint64_t>(q);
    std::vector<std::size_t> compact(q);
    for (std::size_t i = 0; i < q; ++i) compact[i] = i;
    const std::uint64_t small = p * 4096, large = p * (std::uint64_t{1} << 20);
    const auto seconds_at = [&](std::uint64_t bytes) {
        std::vector<NodeProgram> programs(q);
        all_reduce(algorithm, programs, compact, bytes, 0, 0);
        return static_cast<double>(replay_messages(network, programs, ranks)) * 1e-12;
    };
    const double t_small = seconds_at(small), t_large = seconds_at(large);
    CollectiveCost cost;
    cost.seconds_per_byte = (t_large - t_small) / static_cast<double>(large - small);
    cost.latency_s = std::max(0.0, t_small - cost.seconds_per_byte * static_cast<double>(small));
    return cost;
}

CollectiveCost all_reduce_cost(const Topology& topology, const std::vector<std::size_t>& ranks,
                               AllReduceAlgorithm algorithm) {
    Network network(topology);
    return all_reduce_cost(network, ranks, algorithm);
}

const CollectiveCost& AllReduceChooser::cost(const std::vector<std::size_t>& ranks, AllReduceAlgorithm algorithm) {
    const auto key = std::make_pair(ranks, algorithm);
    if (const auto it = m_costs.find(key); it != m_costs.end()) return it->second;
    return m_costs.emplace(key, all_reduce_cost(m_network, ranks, algorithm)).first->second;
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
