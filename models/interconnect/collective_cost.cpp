// SPDX-License-Identifier: MIT
#include "interconnect/collective_cost.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include "interconnect/all_reduce.h"
#include "interconnect/collective.h"
#include "interconnect/replay.h"

namespace fastsim::interconnect {
namespace {

/// One message of a synchronous step: from, to, its step, and its share of the buffer n.
struct StepMessage {
    NodeId from, to;
    std::size_t step = 0;
    double fraction = 0;
};

/// A synchronous step of one algorithm, taken `repeat` times.
struct FluidStep {
    std::size_t algorithm = 0;  ///< index into the algorithms being costed
    double repeat = 0;
    std::optional<Picoseconds> total_latency;  ///< all repeats' latency, if the algorithm gives it
};

}  // namespace

/// The synchronous-step (fluid) model of collectives: a step takes its longest route latency
/// plus its busiest channel's share of n over that channel's bandwidth; steps add up. The
/// messages of every step of every algorithm are routed source by source, so each source's
/// shortest-path tree is built once even when the topology's route cache cannot hold them all.
class FluidModel {
public:
    explicit FluidModel(const Topology& topology) : m_topology(topology) {}

    std::vector<CollectiveCost> all_reduce(const std::vector<NodeId>& ranks,
                                           const std::vector<AlgorithmPerDimension>& algorithms) {
        m_steps.clear();
        m_messages.clear();
        for (std::size_t a = 0; a < algorithms.size(); ++a) add_steps(a, ranks, algorithms[a]);
        std::stable_sort(m_messages.begin(), m_messages.end(),
                         [](const StepMessage& x, const StepMessage& y) { return x.from < y.from; });
        const std::size_t channels = m_topology.channel_count();
        if (m_load.size() < m_steps.size() * channels) m_load.resize(m_steps.size() * channels, 0.0);
        m_used.resize(std::max(m_used.size(), m_steps.size()));
        std::vector<Picoseconds> latency_ps(m_steps.size(), Picoseconds(0));
        for (const StepMessage& m : m_messages) {
            m_topology.route_into(m.from.value(), m.to.value(), m_route);
            Picoseconds path_ps{0};
            double* load = &m_load[m.step * channels];
            for (const ChannelId c : m_route) {
                if (load[c] == 0) m_used[m.step].push_back(c);
                load[c] += m.fraction;
                path_ps += m_topology.channel(c).timing.latency_ps;
            }
            latency_ps[m.step] = std::max(latency_ps[m.step], path_ps);
        }
        std::vector<CollectiveCost> costs(algorithms.size());
        for (std::size_t s = 0; s < m_steps.size(); ++s) {
            double per_byte = 0;
            for (const ChannelId c : m_used[s]) {
                per_byte = std::max(per_byte, m_load[s * channels + c] * 8 /
                                                  static_cast<double>(m_topology.channel(c).timing.bits_per_s));
                m_load[s * channels + c] = 0;  // ready for the next call
            }
            m_used[s].clear();
            CollectiveCost& cost = costs[m_steps[s].algorithm];
            cost.latency_s += m_steps[s].total_latency
                                  ? static_cast<double>(m_steps[s].total_latency->count()) * 1e-12
                                  : m_steps[s].repeat * static_cast<double>(latency_ps[s].count()) * 1e-12;
            cost.seconds_per_byte += m_steps[s].repeat * per_byte;
        }
        return costs;
    }

private:
    /// Algorithm `a`'s steps, as it declares them.
    void add_steps(std::size_t a, const std::vector<NodeId>& ranks, const AlgorithmPerDimension& algorithm) {
        struct Steps final : FluidSteps {
            FluidModel& model;
            std::size_t algorithm;
            Steps(FluidModel& m, std::size_t index) : model(m), algorithm(index) {}
            std::size_t step(double repeat) override {
                model.m_steps.push_back({algorithm, repeat, std::nullopt});
                return model.m_steps.size() - 1;
            }
            void message(NodeId from, NodeId to, std::size_t step, double fraction) override {
                model.m_messages.push_back({from, to, step, fraction});
            }
            const Topology& topology() const override { return model.m_topology; }
            Picoseconds route_latency(NodeId from, NodeId to) const override {
                model.m_topology.route_into(from.value(), to.value(), model.m_route);
                Picoseconds l{0};
                for (const ChannelId c : model.m_route) l += model.m_topology.channel(c).timing.latency_ps;
                return l;
            }
            void total_latency(std::size_t step, Picoseconds latency) override {
                model.m_steps[step].total_latency = latency;
            }
        } steps(*this, a);
        all_reduce_fluid_steps(algorithm, ranks, steps);
    }

    const Topology& m_topology;
    std::vector<FluidStep> m_steps;
    std::vector<StepMessage> m_messages;
    std::vector<double> m_load;  ///< per step and channel: the fraction of n the step puts on it (zero between calls)
    std::vector<std::vector<ChannelId>> m_used;  ///< per step: the channels it loads
    std::vector<ChannelId> m_route;
};

namespace {

/// The alpha-beta line through `op` replayed alone at two buffer sizes (whole bytes per chunk).
CollectiveCost replayed_cost(Network& network, CollectiveOp op, const std::vector<NodeId>& ranks,
                             const AlgorithmPerDimension& algorithms) {
    const auto p = static_cast<std::uint64_t>(ranks.size());
    const Topology& topology = network.topology();
    std::vector<NodeId> identity(topology.node_count());
    for (std::size_t i = 0; i < identity.size(); ++i) identity[i] = NodeId(i);
    const std::uint64_t small = p * 4096, large = p * (std::uint64_t{1} << 20);
    const auto seconds_at = [&](std::uint64_t bytes) {
        std::vector<NodeProgram> programs(topology.node_count());
        simulated_collective(topology, op, algorithms, programs, ranks, bytes, 0, 0);
        return to_seconds(replay_messages(network, programs, identity));
    };
    const double t_small = seconds_at(small), t_large = seconds_at(large);
    CollectiveCost cost;
    cost.seconds_per_byte = (t_large - t_small) / static_cast<double>(large - small);
    cost.latency_s = std::max(0.0, t_small - cost.seconds_per_byte * static_cast<double>(small));
    return cost;
}

}  // namespace

CollectiveCost all_reduce_cost(Network& network, const std::vector<NodeId>& ranks,
                               const AlgorithmPerDimension& algorithms) {
    if (ranks.size() < 2) return {};
    if (ranks.size() > kMaxReplayRanks) return FluidModel(network.topology()).all_reduce(ranks, {algorithms}).front();
    // Replay the collective as the cluster runs it, on the ranks alone.
    return replayed_cost(network, CollectiveOp::all_reduce, ranks, algorithms);
}

CollectiveCost all_reduce_cost(const Topology& topology, const std::vector<NodeId>& ranks,
                               const AlgorithmPerDimension& algorithms) {
    Network network(topology);
    return all_reduce_cost(network, ranks, algorithms);
}

std::uint64_t simulated_all_reduce(const Topology& topology, const AlgorithmPerDimension& algorithms,
                                   std::vector<NodeProgram>& programs, const std::vector<NodeId>& ranks,
                                   std::uint64_t bytes, std::uint64_t tag_base, std::uint32_t label) {
    return simulated_collective(topology, CollectiveOp::all_reduce, algorithms, programs, ranks, bytes, tag_base,
                                label);
}

std::uint64_t simulated_all_reduce_ops_per_rank(AllReduceAlgorithm algorithm, std::size_t p) {
    return p < 2 ? 0 : algorithm_of(algorithm).ops_per_rank(p);
}

AllReduceChooser::AllReduceChooser(const Topology& topology, std::optional<AllReduceAlgorithm> forced)
    : m_network(topology), m_fluid(std::make_unique<FluidModel>(topology)), m_forced(forced) {}

AllReduceChooser::~AllReduceChooser() = default;

std::vector<AllReduceAlgorithm> AllReduceChooser::candidates(std::size_t ranks) const {
    if (m_forced) return {*m_forced};
    std::vector<AllReduceAlgorithm> out;
    for (const AllReduceAlgorithm a : kAllReduceAlgorithms)
        if (algorithm_of(a).considered(ranks)) out.push_back(a);
    return out;
}

const CollectiveCost& AllReduceChooser::cost(const std::vector<NodeId>& ranks,
                                             const AlgorithmPerDimension& algorithms) {
    // Rank sets that differ only by interchangeable nodes cost the same: one memo entry.
    auto key = std::make_pair(m_network.topology().canonical_ranks(ranks), algorithms);
    if (const auto it = m_costs.find(key); it != m_costs.end()) return it->second;
    const std::vector<NodeId>& canonical = key.first;
    if (canonical.size() > kMaxReplayRanks) {  // every candidate at once: one pass over the sources
        std::vector<AlgorithmPerDimension> all;
        for (const AllReduceAlgorithm a : candidates(canonical.size())) all.push_back({a});
        if (std::find(all.begin(), all.end(), algorithms) == all.end()) all.push_back(algorithms);
        const std::vector<CollectiveCost> costs = m_fluid->all_reduce(canonical, all);
        for (std::size_t i = 0; i < all.size(); ++i) m_costs.emplace(std::make_pair(canonical, all[i]), costs[i]);
        return m_costs.at(key);
    }
    const CollectiveCost cost = all_reduce_cost(m_network, canonical, algorithms);
    return m_costs.emplace(std::move(key), cost).first->second;
}

AlgorithmPerDimension AllReduceChooser::best_mix(CollectiveOp op, const GridSpan& span, double bytes) {
    if (!span.multi_dimensional()) return {};
    // Each dimension's candidates, and the cost of each on the dimension's first line (every
    // line of a grid dimension has the same links).
    const std::size_t dims = span.dims.size();
    std::vector<std::vector<AllReduceAlgorithm>> options(dims);
    std::vector<std::vector<CollectiveCost>> line_cost(dims);
    for (std::size_t j = 0; j < dims; ++j) {
        std::vector<NodeId> line;
        for (std::size_t c = 0; c < span.dims[j].size; ++c)
            line.emplace_back(span.grid->first_node + c * span.dims[j].stride);
        for (const AllReduceAlgorithm a : candidates(line.size())) {
            if (unsupported(m_network.topology(), op, {a}, line)) continue;
            options[j].push_back(a);
            line_cost[j].push_back(op == CollectiveOp::all_to_all ? replayed_cost(m_network, op, line, {a})
                                                                  : cost(line, {a}));
        }
        if (options[j].empty()) return {};
    }
    // Every mix (at most a few hundred), its dimensions' costs added at the bytes each handles.
    AlgorithmPerDimension best, mix(dims);
    double best_s = -1;
    std::vector<std::size_t> pick(dims, 0);
    for (;;) {
        double s = 0, level = bytes;
        for (std::size_t j = 0; j < dims; ++j) {
            mix[j] = options[j][pick[j]];
            const CollectiveCost& c = line_cost[j][pick[j]];
            const bool halved = op == CollectiveOp::reduce_scatter || op == CollectiveOp::all_gather;
            s += (halved ? 0.5 : 1.0) * c.seconds(op == CollectiveOp::all_to_all ? bytes : level);
            if (algorithm_of(mix[j]).scatters(span.dims[j].size)) level /= static_cast<double>(span.dims[j].size);
        }
        if (best_s < 0 || s < best_s) {
            best_s = s;
            best = mix;
        }
        std::size_t j = 0;
        while (j < dims && ++pick[j] == options[j].size()) pick[j++] = 0;
        if (j == dims) break;
    }
    return best;
}

AlgorithmPerDimension AllReduceChooser::choose_op(CollectiveOp op, const std::vector<NodeId>& ranks, double bytes) {
    if (op == CollectiveOp::all_reduce) return choose(ranks, bytes).algorithms;
    const GridSpan span = grid_span(m_network.topology(), ranks);
    if (const AlgorithmPerDimension mix = best_mix(op, span, bytes); !mix.empty()) return mix;
    AlgorithmPerDimension best;
    double best_s = -1;
    for (const AllReduceAlgorithm a : candidates(ranks.size())) {
        if (unsupported(m_network.topology(), op, {a}, ranks)) continue;
        const double s = op == CollectiveOp::all_to_all ? replayed_cost(m_network, op, ranks, {a}).seconds(bytes)
                                                        : 0.5 * cost(ranks, {a}).seconds(bytes);
        if (best_s < 0 || s < best_s) {
            best_s = s;
            best = {a};
        }
    }
    return best;
}

AllReduceChoice AllReduceChooser::choose_anew(const std::vector<NodeId>& ranks, double bytes) {
    AllReduceChoice best{{AllReduceAlgorithm::ring}, -1};
    const auto weigh = [&](const AlgorithmPerDimension& algorithms) {
        const double s = cost(ranks, algorithms).seconds(bytes);
        if (best.seconds < 0 || s < best.seconds) best = {algorithms, s};
    };
    for (const AllReduceAlgorithm a : candidates(ranks.size())) weigh({a});
    if (!m_forced) {
        const AlgorithmPerDimension mix =
            best_mix(CollectiveOp::all_reduce, grid_span(m_network.topology(), ranks), bytes);
        if (mix.size() > 1 && std::adjacent_find(mix.begin(), mix.end(), std::not_equal_to<>()) != mix.end())
            weigh(mix);
    }
    return best;
}

std::size_t AllReduceChooser::ChoiceKeyHash::operator()(const std::pair<std::vector<NodeId>, double>& k) const {
    std::uint64_t h = std::hash<double>{}(k.second);
    for (const NodeId n : k.first) h = (h ^ n.value()) * 0x100000001B3ull;
    return static_cast<std::size_t>(h ^ (h >> 29));
}

AllReduceChoice AllReduceChooser::cheapest(const std::vector<NodeId>& ranks, double bytes) {
    auto key = std::make_pair(ranks, bytes);
    if (const auto memo = m_choices.find(key); memo != m_choices.end()) return memo->second;
    if (m_choices.size() >= kMaxRememberedChoices) m_choices.clear();
    const AllReduceChoice choice = choose_anew(ranks, bytes);
    m_choices.emplace(std::move(key), choice);
    return choice;
}

double AllReduceChooser::estimated_seconds(const std::vector<NodeId>& ranks, double bytes) {
    if (ranks.size() < 2) return 0;
    std::vector<NodeId> canonical = m_network.topology().canonical_ranks(ranks);
    auto it = m_fluid_costs.find(canonical);
    if (it == m_fluid_costs.end()) {
        std::vector<AlgorithmPerDimension> all;
        for (const AllReduceAlgorithm a : candidates(canonical.size())) all.push_back({a});
        std::vector<CollectiveCost> costs = m_fluid->all_reduce(canonical, all);
        it = m_fluid_costs.emplace(std::move(canonical), std::move(costs)).first;
    }
    double best = std::numeric_limits<double>::infinity();
    for (const CollectiveCost& c : it->second) best = std::min(best, c.seconds(bytes));
    return best;
}

AllReduceChoice AllReduceChooser::choose(const std::vector<NodeId>& ranks, double bytes) {
    const AllReduceChoice best = cheapest(ranks, bytes);
    if (m_recording && ranks.size() >= 2) {
        const GridSpan span = grid_span(m_network.topology(), ranks);
        AllReduceUse use{describe(best.algorithms), describe_span(span, best.algorithms, ranks.size()), ranks.size(), 1,
                         static_cast<std::uint64_t>(std::llround(bytes))};
        const auto same = std::find_if(m_uses.begin(), m_uses.end(), [&](const AllReduceUse& u) {
            return u.algorithms == use.algorithms && u.dimensions == use.dimensions && u.ranks == use.ranks;
        });
        if (same == m_uses.end()) {
            m_uses.push_back(std::move(use));
        } else {
            ++same->count;
            same->bytes += use.bytes;
        }
    }
    return best;
}

}  // namespace fastsim::interconnect
