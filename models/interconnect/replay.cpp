// SPDX-License-Identifier: MIT
#include "interconnect/replay.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <queue>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>

#include "interconnect/network.h"

namespace fastsim::interconnect {
namespace {

constexpr std::uint32_t kNobody = std::numeric_limits<std::uint32_t>::max();

/// An op with what it waits on or completes matched to a slot: a message (Send, and Recv's
/// await) or a node's event (Signal, and WaitFor's await).
struct Step {
    std::uint32_t slot;
    std::uint32_t peer;
    std::uint64_t bytes;
    enum Kind : std::uint8_t { send, await, signal, delay, gather } kind;
    Picoseconds delay_ps{0};  ///< a Compute's duration, a FlowCollective's
};

/// A message's arrival or an event's signal, and the lane blocked on it. Lanes: stream s of
/// program i is lane i * kStreams + s (program.h: 0 main, 1 comm).
struct Awaited {
    bool done = false;  ///< a message booked to its last hop, or an event signalled: at_ps is known
    Picoseconds at_ps{0};
    std::uint32_t waiting = kNobody;
    std::uint32_t arrived = 0;  ///< a FlowCollective: its members so far (at_ps the latest arrival)
};

}  // namespace

Picoseconds replay_messages(Network& network, const std::vector<NodeProgram>& programs,
                            const std::vector<NodeId>& node_of, std::vector<Picoseconds>* program_end, bool reset,
                            Picoseconds give_up_after) {
    if (node_of.size() != programs.size()) throw std::invalid_argument("replay_messages: one node per program");
    // (1) Match every Send and Recv to a message slot, and every Signal and WaitFor to an
    //     event slot, once, so the loop below indexes arrays.
    const std::size_t n = programs.size(), lanes = n * kStreams;
    std::vector<Step> steps;                   // every lane's steps, lane after lane
    std::vector<std::size_t> lane_end(lanes);  // one past lane i's last step in `steps`
    // An open-addressing table of keys: std::unordered_map's allocation per message cost more
    // than the replay itself on large clusters.
    struct Key {
        std::uint64_t pair;  ///< a message: src << 32 | dst; an event: its program << 32 | event
        std::uint64_t tag;   ///< a message: its tag; an event: 0
        bool is_event;
        bool operator==(const Key& o) const { return pair == o.pair && tag == o.tag && is_event == o.is_event; }
    };
    struct TableEntry {
        Key key;
        std::uint32_t slot = kNobody;  ///< kNobody: empty
    };
    const std::uint64_t total_ops = op_count(programs);
    steps.reserve(total_ops);
    int bits = 4;
    while ((std::size_t{1} << bits) < 2 * total_ops) ++bits;
    std::vector<TableEntry> table(std::size_t{1} << bits);
    const std::size_t mask = table.size() - 1;
    std::uint32_t slots = 0;  // messages and events alike
    const auto slot = [&](const Key& key) {
        std::uint64_t h = (key.pair * 0x9E3779B97F4A7C15ull) ^ (key.tag + 0x632BE59BD9B4E019ull + key.is_event);
        h ^= h >> 31;
        h *= 0xC2B2AE3D27D4EB4Full;
        for (std::size_t i = static_cast<std::size_t>(h >> (64 - bits));; i = (i + 1) & mask) {
            TableEntry& e = table[i];
            if (e.slot == kNobody) {
                e = {key, slots++};
                return e.slot;
            }
            if (e.key == key) return e.slot;
        }
    };
    const auto pair_of = [](std::uint64_t a, std::uint64_t b) { return (a << 32) | b; };
    // Each FlowCollective's ranks, duration and members so far, by slot: its members must agree.
    std::unordered_map<std::uint32_t, std::pair<FlowCollective, std::uint32_t>> flows;
    for (std::size_t node = 0; node < n; ++node)
        for (std::size_t stream = 0; stream < kStreams; ++stream) {
            const std::vector<Op>& ops = stream == 0 ? programs[node].ops : programs[node].comm_ops;
            for (const Op& op : ops) {
                if (const auto* s = std::get_if<Send>(&op)) {
                    if (s->peer.value() >= n) throw std::invalid_argument("replay_messages: peer out of range");
                    steps.push_back({slot({pair_of(node, s->peer.value()), s->tag, false}),
                                     static_cast<std::uint32_t>(s->peer.value()), s->bytes, Step::send});
                } else if (const auto* r = std::get_if<Recv>(&op)) {
                    if (r->peer.value() >= n) throw std::invalid_argument("replay_messages: peer out of range");
                    steps.push_back({slot({pair_of(r->peer.value(), node), r->tag, false}),
                                     static_cast<std::uint32_t>(r->peer.value()), 0, Step::await});
                } else if (const auto* c = std::get_if<Compute>(&op)) {
                    steps.push_back({0, kNobody, 0, Step::delay, c->duration_ps});
                } else if (const auto* g = std::get_if<Signal>(&op)) {
                    steps.push_back({slot({pair_of(node, g->event), 0, true}), kNobody, 0, Step::signal});
                } else if (const auto* f = std::get_if<FlowCollective>(&op)) {
                    // Keyed apart from messages and events: pair ~0 is no (src, dst) of nodes.
                    const std::uint32_t flow_slot = slot({~std::uint64_t{0}, f->tag, false});
                    auto& [first, members] = flows.try_emplace(flow_slot, *f, 0).first->second;
                    if (first.ranks != f->ranks || first.duration_ps != f->duration_ps || ++members > f->ranks)
                        throw std::invalid_argument("replay_messages: FlowCollective tag " + std::to_string(f->tag) +
                                                    ": its members disagree on ranks or duration, or exceed ranks");
                    steps.push_back({flow_slot, f->ranks, 0, Step::gather, f->duration_ps});
                } else {
                    steps.push_back(
                        {slot({pair_of(node, std::get<WaitFor>(op).event), 0, true}), kNobody, 0, Step::await});
                }
            }
            lane_end[node * kStreams + stream] = steps.size();
        }
    // The keys are matched: their table (tens of bytes an op) is not held through the run.
    std::vector<TableEntry>().swap(table);
    // (2) Run the lanes in global time order (ties: the lower node, its main stream first), as
    //     the executor does; the network books the heads that reach a channel before the next
    //     lane's time, and those at that time once every lane at it has run (its posts included).
    if (reset) network.reset();
    std::vector<Awaited> awaited(slots);
    std::vector<std::size_t> pc(lanes, 0);  // each lane's next step in `steps`
    for (std::size_t lane = 1; lane < lanes; ++lane) pc[lane] = lane_end[lane - 1];
    std::vector<std::uint64_t> posted(lanes, 0);
    std::vector<Picoseconds> time(lanes, Picoseconds(0));
    using Entry = std::pair<Picoseconds, std::size_t>;
    std::priority_queue<Entry, std::vector<Entry>, std::greater<>> ready;
    for (std::size_t lane = 0; lane < lanes; ++lane)
        if (pc[lane] < lane_end[lane]) ready.push({Picoseconds(0), lane});
    // The lanes blocked in a FlowCollective, chained from its Awaited::waiting.
    std::vector<std::uint32_t> next_waiting(lanes, kNobody);
    // A message arrives or an event is signalled at `at`: the lane blocked on it goes on.
    const auto complete = [&](Awaited& a, Picoseconds at) {
        a.done = true;
        a.at_ps = at;
        if (a.waiting == kNobody) return;
        const std::uint32_t lane = a.waiting;
        a.waiting = kNobody;
        time[lane] = std::max(time[lane], at);
        ++pc[lane];
        ready.push({time[lane], lane});
    };
    std::vector<Delivery> delivered;
    Picoseconds end_ps{0};
    std::size_t lanes_left = ready.size();  // lanes with ops not yet done
    bool gave_up = false;
    while (true) {
        const std::optional<Picoseconds> head = network.next_head_ps();
        if (head && (ready.empty() || *head < ready.top().first)) {
            if (*head > give_up_after && lanes_left > 0) {
                gave_up = true;
                break;
            }
            delivered.clear();
            network.advance(*head, delivered);
            for (const Delivery& d : delivered) complete(awaited[d.cookie], d.arrival_ps);
            continue;
        }
        if (ready.empty()) break;
        if (ready.top().first > give_up_after && lanes_left > 0) {
            gave_up = true;
            break;
        }
        const std::size_t lane = ready.top().second;
        ready.pop();
        const std::size_t node = lane / kStreams;
        const Picoseconds start = time[lane];
        while (pc[lane] < lane_end[lane]) {
            if (time[lane] > start) {  // moved past other lanes' times: keep the global order
                ready.push({time[lane], lane});
                break;
            }
            const Step& s = steps[pc[lane]];
            if (s.kind == Step::delay) {
                time[lane] += s.delay_ps;
                ++pc[lane];
                continue;
            }
            if (s.kind == Step::signal) {
                ++pc[lane];
                complete(awaited[s.slot], time[lane]);
                continue;
            }
            if (s.kind == Step::gather) {  // s.peer: the member count
                Awaited& g = awaited[s.slot];
                g.at_ps = std::max(g.at_ps, time[lane]);
                if (++g.arrived < s.peer) {
                    next_waiting[lane] = g.waiting;
                    g.waiting = static_cast<std::uint32_t>(lane);
                    break;
                }
                const Picoseconds done = g.at_ps + s.delay_ps;
                for (std::uint32_t w = g.waiting; w != kNobody;) {
                    const std::uint32_t next = next_waiting[w];
                    time[w] = done;
                    ++pc[w];
                    ready.push({done, w});
                    w = next;
                }
                g.waiting = kNobody;
                g.done = true;
                time[lane] = done;
                ++pc[lane];
                continue;
            }
            if (s.kind == Step::send) {
                network.post(node_of[node].value(), node_of[s.peer].value(), s.bytes, time[lane],
                             PostKey{node_of[node].value(), lane % kStreams, posted[lane]++}, s.slot);
                ++pc[lane];
                continue;
            }
            Awaited& a = awaited[s.slot];  // a Recv or a WaitFor
            if (!a.done) {
                a.waiting = static_cast<std::uint32_t>(lane);
                break;
            }
            time[lane] = std::max(time[lane], a.at_ps);
            ++pc[lane];
        }
        if (pc[lane] == lane_end[lane]) {
            end_ps = std::max(end_ps, time[lane]);
            --lanes_left;
        }
    }
    if (gave_up) end_ps = kNeverPs;  // some lane, queued or blocked, ends past the bound
    for (std::size_t lane = 0; lane < lanes; ++lane)
        if (pc[lane] < lane_end[lane] && gave_up)
            time[lane] = end_ps = kNeverPs;  // a lane done after giving up keeps its own end
        else if (pc[lane] < lane_end[lane])
            throw std::invalid_argument("replay_messages: node " + std::to_string(lane / kStreams) +
                                        (lane % kStreams ? " (comm stream)" : "") + " never completes op " +
                                        std::to_string(pc[lane] - (lane == 0 ? 0 : lane_end[lane - 1])));
    if (program_end) {
        program_end->assign(n, Picoseconds(0));
        for (std::size_t lane = 0; lane < lanes; ++lane)
            (*program_end)[lane / kStreams] = std::max((*program_end)[lane / kStreams], time[lane]);
    }
    return end_ps;
}

}  // namespace fastsim::interconnect
