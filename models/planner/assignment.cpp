// SPDX-License-Identifier: MIT
#include "planner/assignment.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

namespace fastsim::planner {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
constexpr std::size_t kMaxLive = 10;

std::size_t power_of_three(std::size_t n) {
    std::size_t p = 1;
    for (std::size_t i = 0; i < n; ++i) p *= 3;
    return p;
}

double layer_total(const LayerGraph& graph, const AssignmentCosts& costs, std::size_t l,
                   const std::vector<PartitionType>& types) {
    const auto t = static_cast<std::size_t>(types[l]);
    double sum = costs.layer[l][t];
    const auto& producers = graph.layers[l].producers;
    for (std::size_t e = 0; e < producers.size(); ++e)
        sum += costs.edge[l][e][static_cast<std::size_t>(types[producers[e].from])][t];
    return sum;
}

}  // namespace

double assignment_cost(const LayerGraph& graph, const AssignmentCosts& costs, const std::vector<PartitionType>& types) {
    double sum = 0;
    for (std::size_t l = 0; l < graph.layers.size(); ++l) sum += layer_total(graph, costs, l, types);
    return sum;
}

Assignment solve_exact(const LayerGraph& graph, const AssignmentCosts& costs) {
    const std::size_t n = graph.layers.size();
    if (n == 0) return {};
    // A state is the types of the live layers, in base 3, digit i = frontier[i].
    struct Back {
        std::uint32_t previous = 0;
        std::uint8_t type = 0;
    };
    std::vector<std::size_t> frontier;
    std::vector<double> cost{0.0};
    std::vector<std::vector<Back>> back(n);
    for (std::size_t l = 0; l < n; ++l) {
        // (1) The next frontier: the live layers that a later layer still reads, and l if it is read.
        std::vector<std::size_t> next;
        for (std::size_t j : frontier)
            if (graph.last_consumer[j] > l) next.push_back(j);
        if (graph.last_consumer[l] > l) next.push_back(l);
        if (next.size() > kMaxLive)
            throw PlanError("the layer graph is too wide for the exact planner: " + std::to_string(next.size()) +
                            " layers' outputs are live at layer '" + graph.layers[l].name + "' (at most " +
                            std::to_string(kMaxLive) + ")");
        // Where each producer and each kept layer sits in the current state.
        const auto position = [&](std::size_t layer) {
            return static_cast<std::size_t>(std::find(frontier.begin(), frontier.end(), layer) - frontier.begin());
        };
        const auto& producers = graph.layers[l].producers;
        std::vector<std::size_t> producer_digit;
        for (const Edge& e : producers) producer_digit.push_back(position(e.from));
        std::vector<std::size_t> kept_digit;  // for next[i]: the digit in the current state, or frontier.size() for l
        for (std::size_t j : next) kept_digit.push_back(j == l ? frontier.size() : position(j));

        // (2) Relax every (state, type) pair into the next state.
        std::vector<double> next_cost(power_of_three(next.size()), kInfinity);
        std::vector<Back> next_back(next_cost.size());
        std::vector<std::size_t> digits(frontier.size() + 1);
        for (std::size_t s = 0; s < cost.size(); ++s) {
            if (cost[s] == kInfinity) continue;
            for (std::size_t i = 0, v = s; i < frontier.size(); ++i, v /= 3) digits[i] = v % 3;
            for (std::size_t t = 0; t < kPartitionTypes; ++t) {
                double c = cost[s] + costs.layer[l][t];
                if (c == kInfinity) continue;
                for (std::size_t e = 0; e < producers.size(); ++e) c += costs.edge[l][e][digits[producer_digit[e]]][t];
                digits[frontier.size()] = t;
                std::size_t index = 0;
                for (std::size_t i = next.size(); i-- > 0;) index = index * 3 + digits[kept_digit[i]];
                if (c < next_cost[index]) {
                    next_cost[index] = c;
                    next_back[index] = {static_cast<std::uint32_t>(s), static_cast<std::uint8_t>(t)};
                }
            }
        }
        frontier = std::move(next);
        cost = std::move(next_cost);
        back[l] = std::move(next_back);
    }
    // (3) The best final state, then the back-pointers from it.
    const auto best = std::min_element(cost.begin(), cost.end());
    if (best == cost.end() || *best == kInfinity) throw PlanError("no partition is feasible for every layer");
    Assignment a;
    a.cost = *best;
    a.types.resize(n);
    auto state = static_cast<std::uint32_t>(best - cost.begin());
    for (std::size_t l = n; l-- > 0;) {
        a.types[l] = static_cast<PartitionType>(back[l][state].type);
        state = back[l][state].previous;
    }
    return a;
}

Assignment solve_brute_force(const LayerGraph& graph, const AssignmentCosts& costs) {
    const std::size_t n = graph.layers.size();
    if (n > 14) throw std::invalid_argument("brute force is for graphs of at most 14 layers");
    Assignment best{{}, kInfinity};
    std::vector<PartitionType> types(n);
    for (std::size_t code = 0, all = power_of_three(n); code < all; ++code) {
        for (std::size_t l = 0, v = code; l < n; ++l, v /= 3) types[l] = static_cast<PartitionType>(v % 3);
        const double c = assignment_cost(graph, costs, types);
        if (c < best.cost) best = {types, c};
    }
    if (best.cost == kInfinity) throw PlanError("no partition is feasible for every layer");
    return best;
}

}  // namespace fastsim::planner
