// SPDX-License-Identifier: MIT
#include "interconnect/replay.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <queue>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "interconnect/network.h"

namespace fastsim::interconnect {
namespace {

constexpr std::uint32_t kNobody = std::numeric_limits<std::uint32_t>::max();

/// An op with its message matched: slot into the message table.
struct Step {
    std::uint32_t slot;
    std::uint32_t peer;
    std::uint64_t bytes;
    enum Kind : std::uint8_t { send, recv, delay } kind;
    Picoseconds delay_ps{0};  ///< a Compute's duration
};

struct Message {
    bool arrived = false;  ///< booked to its last hop: arrival_ps is known
    Picoseconds arrival_ps{0};
    std::uint32_t waiting = kNobody;  ///< the node blocked on it
};

}  // namespace

Picoseconds replay_messages(Network& network, const std::vector<NodeProgram>& programs,
                            const std::vector<NodeId>& node_of, std::vector<Picoseconds>* program_end, bool reset) {
    if (node_of.size() != programs.size()) throw std::invalid_argument("replay_messages: one node per program");
    // (1) Match every Send and Recv to a message slot once, so the loop below indexes arrays.
    const std::size_t n = programs.size();
    std::vector<std::vector<Step>> steps(n);
    std::unordered_map<MessageKey, std::uint32_t, MessageKeyHash> slot_of;
    std::size_t op_count = 0;
    for (const NodeProgram& p : programs) op_count += p.ops.size();
    slot_of.reserve(op_count / 2 + 1);
    const auto slot = [&](NodeId src, NodeId dst, std::uint64_t tag) {
        return slot_of.emplace(MessageKey{src, dst, tag}, static_cast<std::uint32_t>(slot_of.size())).first->second;
    };
    for (std::size_t node = 0; node < n; ++node) {
        if (!programs[node].comm_ops.empty())
            throw std::invalid_argument("replay_messages: comm streams are not replayed");
        steps[node].reserve(programs[node].ops.size());
        for (const Op& op : programs[node].ops) {
            if (const auto* s = std::get_if<Send>(&op); s && s->peer.value() >= n)
                throw std::invalid_argument("replay_messages: peer out of range");
            if (const auto* r = std::get_if<Recv>(&op); r && r->peer.value() >= n)
                throw std::invalid_argument("replay_messages: peer out of range");
            if (const auto* s = std::get_if<Send>(&op))
                steps[node].push_back({slot(NodeId(node), s->peer, s->tag), static_cast<std::uint32_t>(s->peer.value()),
                                       s->bytes, Step::send});
            else if (const auto* r = std::get_if<Recv>(&op))
                steps[node].push_back(
                    {slot(r->peer, NodeId(node), r->tag), static_cast<std::uint32_t>(r->peer.value()), 0, Step::recv});
            else if (const auto* c = std::get_if<Compute>(&op))
                steps[node].push_back({0, kNobody, 0, Step::delay, c->duration_ps});
            else
                throw std::invalid_argument("replay_messages: node " + std::to_string(node) +
                                            " has an op other than Send, Recv or Compute");
        }
    }
    // (2) Run the nodes in global time order (ties: the lower node), as the executor does; the
    //     network books the heads that reach a channel before the next node's time, and those
    //     at that time once every node at it has run (its posts included).
    if (reset) network.reset();
    std::vector<Message> messages(slot_of.size());
    std::vector<std::size_t> pc(n, 0);
    std::vector<std::uint64_t> posted(n, 0);
    std::vector<Picoseconds> time(n, Picoseconds(0));
    using Entry = std::pair<Picoseconds, std::size_t>;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> ready;
    for (std::size_t node = 0; node < n; ++node)
        if (!steps[node].empty()) ready.push({Picoseconds(0), node});
    std::vector<Delivery> delivered;
    Picoseconds end_ps{0};
    while (true) {
        const std::optional<Picoseconds> head = network.next_head_ps();
        if (head && (ready.empty() || *head < ready.top().first)) {
            delivered.clear();
            network.advance(*head, delivered);
            for (const Delivery& d : delivered) {
                Message& m = messages[d.cookie];
                m.arrived = true;
                m.arrival_ps = d.arrival_ps;
                if (m.waiting != kNobody) {
                    const std::uint32_t w = m.waiting;
                    time[w] = std::max(time[w], m.arrival_ps);
                    ++pc[w];
                    ready.push({time[w], w});
                    m.waiting = kNobody;
                }
            }
            continue;
        }
        if (ready.empty()) break;
        const std::size_t node = ready.top().second;
        ready.pop();
        const Picoseconds start = time[node];
        while (pc[node] < steps[node].size()) {
            if (time[node] > start) {  // moved past other nodes' times: keep the global order
                ready.push({time[node], node});
                break;
            }
            const Step& s = steps[node][pc[node]];
            if (s.kind == Step::delay) {
                time[node] += s.delay_ps;
                ++pc[node];
                continue;
            }
            Message& m = messages[s.slot];
            if (s.kind == Step::send) {
                network.post(node_of[node].value(), node_of[s.peer].value(), s.bytes, time[node],
                             PostKey{node_of[node].value(), 0, posted[node]++}, s.slot);
                ++pc[node];
            } else if (m.arrived) {
                time[node] = std::max(time[node], m.arrival_ps);
                ++pc[node];
            } else {
                m.waiting = static_cast<std::uint32_t>(node);
                break;
            }
        }
        if (pc[node] == steps[node].size()) end_ps = std::max(end_ps, time[node]);
    }
    for (std::size_t node = 0; node < n; ++node)
        if (pc[node] < steps[node].size())
            throw std::invalid_argument("replay_messages: node " + std::to_string(node) + " never completes op " +
                                        std::to_string(pc[node]));
    if (program_end) *program_end = time;
    return end_ps;
}

}  // namespace fastsim::interconnect
