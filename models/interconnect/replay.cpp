// SPDX-License-Identifier: MIT
#include "interconnect/replay.h"

#include <algorithm>
#include <functional>
#include <map>
#include <queue>
#include <stdexcept>
#include <string>
#include <tuple>

#include "interconnect/network.h"

namespace fastsim::interconnect {

std::uint64_t replay_messages(const Topology& topology, const std::vector<NodeProgram>& programs) {
    Network network(topology);
    struct MessageState {
        bool sent = false;
        std::uint64_t arrival_ps = 0;
        std::size_t waiting = SIZE_MAX;  ///< the node blocked on it
    };
    std::map<std::tuple<std::size_t, std::size_t, std::uint64_t>, MessageState> messages;
    const std::size_t n = programs.size();
    std::vector<std::size_t> pc(n, 0);
    std::vector<std::uint64_t> time(n, 0);
    using Entry = std::pair<std::uint64_t, std::size_t>;  // (time, node): the earliest runs first
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> ready;
    for (std::size_t node = 0; node < n; ++node) {
        if (!programs[node].comm_ops.empty()) throw std::invalid_argument("replay_messages: comm streams are not replayed");
        ready.push({0, node});
    }
    std::uint64_t end_ps = 0;
    while (!ready.empty()) {
        const auto [t, node] = ready.top();
        ready.pop();
        const auto& ops = programs[node].ops;
        bool blocked = false;
        while (pc[node] < ops.size() && !blocked) {
            if (time[node] > t) {  // moved on past other nodes' times: keep the global time order
                ready.push({time[node], node});
                blocked = true;
                break;
            }
            const Op& op = ops[pc[node]];
            if (const auto* send = std::get_if<Send>(&op)) {
                MessageState& m = messages[{node, send->peer, send->tag}];
                m.sent = true;
                m.arrival_ps = network.transfer(node, send->peer, send->bytes, time[node]);
                if (m.waiting != SIZE_MAX) {
                    time[m.waiting] = std::max(time[m.waiting], m.arrival_ps);
                    ++pc[m.waiting];
                    ready.push({std::max(time[m.waiting], time[node]), m.waiting});
                    m.waiting = SIZE_MAX;
                }
                ++pc[node];
            } else if (const auto* recv = std::get_if<Recv>(&op)) {
                MessageState& m = messages[{recv->peer, node, recv->tag}];
                if (m.sent) {
                    time[node] = std::max(time[node], m.arrival_ps);
                    ++pc[node];
                } else {
                    m.waiting = node;
                    blocked = true;
                }
            } else {
                throw std::invalid_argument("replay_messages: node " + std::to_string(node) +
                                            " has an op other than Send or Recv");
            }
        }
        if (pc[node] == ops.size()) end_ps = std::max(end_ps, time[node]);
    }
    for (std::size_t node = 0; node < n; ++node)
        if (pc[node] < programs[node].ops.size())
            throw std::invalid_argument("replay_messages: node " + std::to_string(node) + " never completes op " +
                                        std::to_string(pc[node]));
    return end_ps;
}

}  // namespace fastsim::interconnect
