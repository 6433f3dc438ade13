// SPDX-License-Identifier: MIT
#include "planner/assignment.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

namespace fastsim::planner {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

double layer_total(const LayerGraph& graph, const AssignmentCosts& costs, std::size_t l,
                   const std::vector<std::size_t>& options) {
    double sum = costs.layer[l][options[l]];
    const auto& producers = graph.layers[l].producers;
    for (std::size_t e = 0; e < producers.size(); ++e)
        sum += costs.edge[l][e].at(options[producers[e].from], options[l]);
    return sum;
}

}  // namespace

double assignment_cost(const LayerGraph& graph, const AssignmentCosts& costs, const std::vector<std::size_t>& options) {
    double sum = 0;
    for (std::size_t l = 0; l < graph.layers.size(); ++l) sum += layer_total(graph, costs, l, options);
    return sum;
}

Assignment solve_exact(const LayerGraph& graph, const AssignmentCosts& costs) {
    const std::size_t n = graph.layers.size();
    if (n == 0) return {};
    // A state is the options of the live layers, in mixed radix: digit i = frontier[i]'s
    // option, radix its option count.
    struct Back {
        std::uint32_t previous = 0;
        std::uint8_t option = 0;
    };
    const auto radix = [&](std::size_t layer) { return costs.layer[layer].size(); };
    std::vector<std::size_t> frontier;
    std::vector<double> cost{0.0};
    std::vector<std::vector<Back>> back(n);
    for (std::size_t l = 0; l < n; ++l) {
        // (1) The next frontier: the live layers that a later layer still reads, and l if it is read.
        std::vector<std::size_t> next;
        for (std::size_t j : frontier)
            if (graph.last_consumer[j] > l) next.push_back(j);
        if (graph.last_consumer[l] > l) next.push_back(l);
        std::size_t states = 1;
        for (std::size_t j : next) {
            states *= radix(j);
            if (states > kMaxAssignmentStates)
                throw PlanError("the layer graph is too wide for the exact planner: " + std::to_string(next.size()) +
                                " layers' outputs are live at layer '" + graph.layers[l].name + "', more than " +
                                std::to_string(kMaxAssignmentStates) + " combinations of their choices");
        }
        // Where each producer and each kept layer sits in the current state.
        const auto position = [&](std::size_t layer) {
            return static_cast<std::size_t>(std::find(frontier.begin(), frontier.end(), layer) - frontier.begin());
        };
        const auto& producers = graph.layers[l].producers;
        std::vector<std::size_t> producer_digit;
        for (const Edge& e : producers) producer_digit.push_back(position(e.from));
        std::vector<std::size_t> kept_digit;  // for next[i]: the digit in the current state, or frontier.size() for l
        for (std::size_t j : next) kept_digit.push_back(j == l ? frontier.size() : position(j));
        std::vector<std::size_t> radices;  // of the current state's digits, then l's
        for (std::size_t j : frontier) radices.push_back(radix(j));
        radices.push_back(radix(l));

        // (2) Relax every (state, option) pair into the next state.
        std::vector<double> next_cost(states, kInfinity);
        std::vector<Back> next_back(states);
        std::vector<std::size_t> digits(frontier.size() + 1);
        for (std::size_t s = 0; s < cost.size(); ++s) {
            if (cost[s] == kInfinity) continue;
            for (std::size_t i = 0, v = s; i < frontier.size(); ++i) {
                digits[i] = v % radices[i];
                v /= radices[i];
            }
            for (std::size_t o = 0; o < radix(l); ++o) {
                double c = cost[s] + costs.layer[l][o];
                if (c == kInfinity) continue;
                for (std::size_t e = 0; e < producers.size(); ++e)
                    c += costs.edge[l][e].at(digits[producer_digit[e]], o);
                digits[frontier.size()] = o;
                std::size_t index = 0;
                for (std::size_t i = next.size(); i-- > 0;)
                    index = index * radices[kept_digit[i]] + digits[kept_digit[i]];
                if (c < next_cost[index]) {
                    next_cost[index] = c;
                    next_back[index] = {static_cast<std::uint32_t>(s), static_cast<std::uint8_t>(o)};
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
    a.options.resize(n);
    auto state = static_cast<std::uint32_t>(best - cost.begin());
    for (std::size_t l = n; l-- > 0;) {
        a.options[l] = back[l][state].option;
        state = back[l][state].previous;
    }
    return a;
}

Assignment solve_brute_force(const LayerGraph& graph, const AssignmentCosts& costs) {
    const std::size_t n = graph.layers.size();
    double all = 1;
    for (const auto& options : costs.layer) all *= static_cast<double>(options.size());
    if (all > 0x1p22) throw std::invalid_argument("brute force is for at most 2^22 assignments");
    Assignment best{{}, kInfinity};
    std::vector<std::size_t> options(n, 0);
    for (;;) {
        const double c = assignment_cost(graph, costs, options);
        if (c < best.cost) best = {options, c};
        std::size_t l = 0;  // the next assignment, layer 0 fastest
        while (l < n && ++options[l] == costs.layer[l].size()) options[l++] = 0;
        if (l == n) break;
    }
    if (best.cost == kInfinity) throw PlanError("no partition is feasible for every layer");
    return best;
}

}  // namespace fastsim::planner
