// SPDX-License-Identifier: MIT
#include "cluster/cluster.h"

#include <systemc>

#include <algorithm>
#include <exception>
#include <limits>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/units.h"

namespace fastsim::cluster {
namespace {

using interconnect::Compute;
using interconnect::FlowCollective;
using interconnect::kStreams;
using interconnect::MessageKey;
using interconnect::MessageKeyHash;
using interconnect::NodeProgram;
using interconnect::Recv;
using interconnect::Send;
using interconnect::Signal;
using interconnect::WaitFor;

constexpr std::uint32_t kNoSlot = std::numeric_limits<std::uint32_t>::max();

/// One message (src, dst, tag), matched before the run.
struct Message {
    NodeId src, dst;
    std::uint64_t tag = 0;
    std::uint64_t bytes = 0;
    Picoseconds posted_ps{0}, arrival_ps{0};
    bool has_send = false, has_recv = false;
    bool posted = false, arrived = false, consumed = false;
    // The Send's op, for its span once the message arrives.
    std::size_t send_pc = 0;
    std::uint32_t send_label = 0;
    std::uint8_t send_stream = 0;
};

/// One node-local event, matched before the run.
struct Event {
    std::size_t node = 0;
    std::uint32_t event = 0;
    bool has_signal = false;
    bool signalled = false;
    Picoseconds time_ps{0};  ///< when it was signalled
};

/// One FlowCollective (its tag), matched before the run.
struct Gather {
    std::uint64_t tag = 0;
    std::uint32_t ranks = 0;    ///< members expected
    std::uint32_t members = 0;  ///< ops with this tag in the programs
    std::uint32_t arrived = 0;
    Picoseconds duration_ps{0};  ///< every member's
    Picoseconds latest_ps{0};    ///< the latest arrival so far
    bool done = false;
    Picoseconds done_ps{0};            ///< when every member goes on
    std::vector<std::size_t> waiting;  ///< lanes blocked in it
};

enum class Kind : std::uint8_t { compute, send, recv, signal, wait, gather };

/// An op with its message or event slot and dense label index resolved.
struct CompiledOp {
    std::uint64_t value;  ///< duration_ps of a Compute or a FlowCollective
    std::uint32_t slot;   ///< message of a Send or Recv, event of a Signal or WaitFor, gather of a FlowCollective
    std::uint32_t label;  ///< index into the label table
    Kind kind;
};

struct LabelAcc {
    std::uint32_t label = 0;
    LabelStats stats{
        Picoseconds(std::numeric_limits<std::uint64_t>::max()), Picoseconds(0), Picoseconds(0), Picoseconds(0), 0, 0};
    void span(Picoseconds start, Picoseconds end) {
        stats.first_start_ps = std::min(stats.first_start_ps, start);
        stats.last_end_ps = std::max(stats.last_end_ps, end);
        ++stats.op_count;
    }
};

/// A lane is one stream of one node: lane = node * kStreams + stream.
struct LaneState {
    std::size_t pc = 0;
    bool finished = false;
    Picoseconds end_ps{0};
    std::uint32_t waiting_message = kNoSlot;  ///< the message this lane's thread is blocked on
    std::uint32_t waiting_event = kNoSlot;    ///< the event this lane's thread is blocked on
    /// For the network's lookahead: blocked in a Recv or WaitFor (nothing it does comes before
    /// the delivery or Signal that wakes it), else no message it posts from now on is ready
    /// before local_ps.
    bool blocked = false;
    Picoseconds local_ps{0};
};

const char* stream_name(std::size_t lane) { return lane % kStreams == 0 ? "" : " (comm stream)"; }

std::string op_name(const interconnect::Op& op) {
    if (const auto* s = std::get_if<Send>(&op))
        return "Send to node " + std::to_string(s->peer.value()) + ", tag " + std::to_string(s->tag);
    if (const auto* r = std::get_if<Recv>(&op))
        return "Recv from node " + std::to_string(r->peer.value()) + ", tag " + std::to_string(r->tag);
    if (const auto* g = std::get_if<Signal>(&op)) return "Signal event " + std::to_string(g->event);
    if (const auto* w = std::get_if<WaitFor>(&op)) return "WaitFor event " + std::to_string(w->event);
    if (const auto* f = std::get_if<FlowCollective>(&op))
        return "FlowCollective tag " + std::to_string(f->tag) + " of " + std::to_string(f->ranks) + " ranks";
    return "Compute";
}

const std::vector<interconnect::Op>& stream_ops(const NodeProgram& p, std::size_t stream) {
    return stream == 0 ? p.ops : p.comm_ops;
}

/// The programs with messages and events matched and labels made dense; checks peers and duplicates.
struct Compiled {
    std::vector<std::vector<CompiledOp>> ops;  ///< per lane
    std::vector<Message> messages;
    std::vector<Event> events;
    std::vector<Gather> gathers;
    std::vector<LabelAcc> labels;
};

Compiled compile(const std::vector<NodeProgram>& programs) {
    Compiled c;
    c.ops.resize(programs.size() * kStreams);
    std::unordered_map<MessageKey, std::uint32_t, MessageKeyHash> slots;
    std::unordered_map<std::uint32_t, std::uint32_t> label_index;
    std::unordered_map<std::uint64_t, std::uint32_t> gather_index;  // tag -> slot
    const auto label_of = [&](std::uint32_t label) {
        const auto [it, inserted] = label_index.emplace(label, static_cast<std::uint32_t>(c.labels.size()));
        if (inserted) {
            c.labels.emplace_back();
            c.labels.back().label = label;
        }
        return it->second;
    };
    const auto slot_of = [&](const MessageKey& key) {
        const auto [it, inserted] = slots.emplace(key, static_cast<std::uint32_t>(c.messages.size()));
        if (inserted) {
            if (c.messages.size() >= kNoSlot) throw std::length_error("run_cluster: too many messages");
            Message m;
            m.src = key.src;
            m.dst = key.dst;
            m.tag = key.tag;
            c.messages.push_back(m);
        }
        return it->second;
    };
    for (std::size_t n = 0; n < programs.size(); ++n) {
        std::unordered_map<std::uint32_t, std::uint32_t> events;  // this node's event id -> slot
        const auto event_of = [&](std::uint32_t event) {
            const auto [it, inserted] = events.emplace(event, static_cast<std::uint32_t>(c.events.size()));
            if (inserted) {
                if (c.events.size() >= kNoSlot) throw std::length_error("run_cluster: too many events");
                c.events.push_back({n, event});
            }
            return it->second;
        };
        for (std::size_t stream = 0; stream < kStreams; ++stream) {
            const auto& ops = stream_ops(programs[n], stream);
            auto& out = c.ops[n * kStreams + stream];
            out.reserve(ops.size());
            for (std::size_t i = 0; i < ops.size(); ++i) {
                const interconnect::Op& op = ops[i];
                const auto where = [&] {
                    return "run_cluster: node " + std::to_string(n) + stream_name(n * kStreams + stream) + " op " +
                           std::to_string(i) + " (" + op_name(op) + ")";
                };
                if (const auto* compute = std::get_if<Compute>(&op)) {
                    out.push_back({compute->duration_ps.count(), kNoSlot, label_of(compute->label), Kind::compute});
                } else if (const auto* send = std::get_if<Send>(&op)) {
                    if (send->peer.value() >= programs.size())
                        throw std::invalid_argument(where() + ": peer out of range");
                    const std::uint32_t slot = slot_of({NodeId(n), send->peer, send->tag});
                    Message& m = c.messages[slot];
                    if (m.has_send) throw std::invalid_argument(where() + ": a second Send with this (src, dst, tag)");
                    m.has_send = true;
                    m.bytes = send->bytes;
                    out.push_back({send->bytes, slot, label_of(send->label), Kind::send});
                } else if (const auto* recv = std::get_if<Recv>(&op)) {
                    if (recv->peer.value() >= programs.size())
                        throw std::invalid_argument(where() + ": peer out of range");
                    const std::uint32_t slot = slot_of({recv->peer, NodeId(n), recv->tag});
                    Message& m = c.messages[slot];
                    if (m.has_recv) throw std::invalid_argument(where() + ": a second Recv with this (src, dst, tag)");
                    m.has_recv = true;
                    out.push_back({0, slot, label_of(recv->label), Kind::recv});
                } else if (const auto* signal = std::get_if<Signal>(&op)) {
                    const std::uint32_t slot = event_of(signal->event);
                    if (c.events[slot].has_signal)
                        throw std::invalid_argument(where() + ": the event is signalled twice");
                    c.events[slot].has_signal = true;
                    out.push_back({0, slot, label_of(signal->label), Kind::signal});
                } else if (const auto* flow = std::get_if<FlowCollective>(&op)) {
                    const auto [it, inserted] =
                        gather_index.emplace(flow->tag, static_cast<std::uint32_t>(c.gathers.size()));
                    if (inserted) {
                        c.gathers.emplace_back();
                        c.gathers.back().tag = flow->tag;
                        c.gathers.back().ranks = flow->ranks;
                    }
                    Gather& g = c.gathers[it->second];
                    if (g.ranks != flow->ranks)
                        throw std::invalid_argument(where() + ": another member of this collective gives " +
                                                    std::to_string(g.ranks) + " ranks");
                    if (g.members > 0 && g.duration_ps != flow->duration_ps)
                        throw std::invalid_argument(where() +
                                                    ": another member of this collective gives another "
                                                    "duration");
                    g.duration_ps = flow->duration_ps;
                    if (++g.members > g.ranks)
                        throw std::invalid_argument(where() + ": more members than its " + std::to_string(g.ranks) +
                                                    " ranks");
                    out.push_back({flow->duration_ps.count(), it->second, label_of(flow->label), Kind::gather});
                } else {
                    const auto& wait = std::get<WaitFor>(op);
                    out.push_back({0, event_of(wait.event), label_of(wait.label), Kind::wait});
                }
            }
        }
    }
    return c;
}

/// The longest time the simulation can reach: every compute, and every message over every hop
/// of its route (occupancy and latency), one after another. Checked before any thread runs, so
/// the threads' time arithmetic cannot overflow; SizeOverflow beyond 2^62 ps (53 days).
void check_time_bound(const interconnect::Topology& topology, const Compiled& c) {
    constexpr const char* kWhat = "picoseconds of the simulated step";
    Picoseconds bound{0};
    for (const auto& ops : c.ops)
        for (const CompiledOp& op : ops)
            if (op.kind == Kind::compute || op.kind == Kind::gather)
                checked_accumulate(bound, Picoseconds(op.value), kWhat);
    std::vector<interconnect::ChannelId> route;
    for (const Message& m : c.messages) {
        if (!m.has_send) continue;
        topology.route_into(m.src.value(), m.dst.value(), route);
        for (const interconnect::ChannelId id : route) {
            const interconnect::LinkTiming& t = topology.channel(id).timing;
            checked_accumulate(bound, interconnect::occupancy_ps(m.bytes, t.bits_per_s), kWhat);
            checked_accumulate(bound, t.latency_ps, kWhat);
        }
    }
    if (bound > Picoseconds(std::uint64_t{1} << 62)) throw SizeOverflow(kWhat);
}

/// The cluster: one thread per non-empty stream of each node, walking its compiled ops.
class ClusterModule : public sc_core::sc_module {
public:
    ClusterModule(const sc_core::sc_module_name& name, const interconnect::Topology& topology, Compiled& compiled,
                  ClusterRecorder* recorder)
        : sc_core::sc_module(name),
          m_network(topology),
          m_compiled(compiled),
          m_recorder(recorder),
          m_lanes(compiled.ops.size()),
          m_stats(compiled.ops.size() / kStreams),
          m_wakeups(new sc_core::sc_event[compiled.ops.size()]),
          m_ticks_per_ps(sc_core::sc_time(1, sc_core::SC_PS).value()) {
        if (m_ticks_per_ps == 0) throw std::logic_error("run_cluster: SystemC time resolution is coarser than 1 ps");
        for (std::size_t lane = 0; lane < m_lanes.size(); ++lane) {
            if (compiled.ops[lane].empty()) {
                m_lanes[lane].finished = true;  // nothing to run (a node outside a stage's piece): no thread
                continue;
            }
            sc_core::sc_spawn([this, lane] { run_lane_guarded(lane); }, sc_core::sc_gen_unique_name("stream"));
        }
        m_posts_per_lane.assign(m_lanes.size(), 0);
        sc_core::sc_spawn([this] { run_network_guarded(); }, sc_core::sc_gen_unique_name("network"));
    }

    [[nodiscard]] const interconnect::Network& network() const { return m_network; }
    [[nodiscard]] const std::vector<LaneState>& lanes() const { return m_lanes; }
    [[nodiscard]] const std::vector<NodeStats>& stats() const { return m_stats; }
    [[nodiscard]] const std::exception_ptr& error() const { return m_error; }

private:
    void run_lane_guarded(std::size_t lane) {
        try {
            run_lane(lane);
        } catch (...) {
            if (!m_error) m_error = std::current_exception();  // the other threads stop at their next message
        }
    }

    void run_network_guarded() {
        try {
            run_network();
        } catch (...) {
            if (!m_error) m_error = std::current_exception();
        }
    }

    /// The earliest time a message not yet posted can be ready: no stream posts before its local
    /// time, and a blocked one only after what wakes it (a delivery or a Signal, whose times the
    /// wakers pass on). kNever when every stream is blocked or finished.
    [[nodiscard]] Picoseconds post_horizon() const {
        Picoseconds h = kNever;
        for (const LaneState& lane : m_lanes)
            if (!lane.finished && !lane.blocked) h = std::min(h, lane.local_ps);
        return h;
    }

    /// Books the channels as messages' heads reach them (interconnect::Network), in head order,
    /// every head that arrives before the post horizon: no message posted later can reach a
    /// channel before it, so a channel serves heads in the order they arrive, whatever order the
    /// threads run in. A message is delivered when its last hop is booked, which lowers the
    /// horizon to its arrival (its receiver may post from then on); the Recv completes at the
    /// arrival, as the replay's does.
    void run_network() {
        std::vector<interconnect::Delivery> delivered;
        std::vector<interconnect::Reservation> reserved;
        while (!m_error) {
            std::optional<Picoseconds> next = m_network.next_head_ps();
            if (!next) {
                m_network_wake_ps = kNever;
                sc_core::wait(m_posted);
                continue;
            }
            const Picoseconds now(sc_core::sc_time_stamp().value() / m_ticks_per_ps);
            Picoseconds horizon = post_horizon();
            if (*next >= horizon) {  // wait for the streams to move on (they do once SystemC time passes next)
                m_network_wake_ps = std::max(now, *next) + Picoseconds(1);
                sc_core::wait(sc_core::sc_time::from_value((m_network_wake_ps - now).count() * m_ticks_per_ps),
                              m_posted);
                continue;
            }
            for (; next && *next < horizon; next = m_network.next_head_ps()) {
                delivered.clear();
                reserved.clear();
                m_network.advance(*next, delivered, m_recorder ? &reserved : nullptr);
                for (const interconnect::Reservation& r : reserved) {
                    const Message& m = m_compiled.messages[r.cookie];
                    m_recorder->channel({r.hop.channel, m.src, m.dst, m.bytes, m.tag,
                                         m_compiled.labels[m.send_label].label, r.hop.start_ps, r.hop.end_ps});
                }
                for (const interconnect::Delivery& d : delivered) {
                    Message& m = m_compiled.messages[d.cookie];
                    m.arrived = true;
                    m.arrival_ps = d.arrival_ps;
                    LabelAcc& label = m_compiled.labels[m.send_label];
                    if (m_recorder)
                        m_recorder->op({m.src, m.send_pc, OpKind::send, label.label, m.dst, m.bytes, m.tag, m.posted_ps,
                                        m.arrival_ps, m.send_stream});
                    label.span(m.posted_ps, m.arrival_ps);
                    wake(m.dst.value(), static_cast<std::uint32_t>(d.cookie), false, m.arrival_ps);
                    horizon = std::min(horizon, m.arrival_ps);
                }
            }
        }
    }

    /// Brings SystemC time up to the lane's local time `t`.
    void sync(Picoseconds t) {
        const Picoseconds now(sc_core::sc_time_stamp().value() / m_ticks_per_ps);
        if (t > now) sc_core::wait(sc_core::sc_time::from_value((t - now).count() * m_ticks_per_ps));
    }

    /// Wakes the lanes of `node` blocked on message `slot` (or event `slot` with `event`); they
    /// resume at local time `at` or later.
    void wake(std::size_t node, std::uint32_t slot, bool event, Picoseconds at) {
        for (std::size_t s = 0; s < kStreams; ++s) {
            const std::size_t lane = node * kStreams + s;
            LaneState& state = m_lanes[lane];
            if ((event ? state.waiting_event : state.waiting_message) == slot && state.blocked) {
                state.blocked = false;
                state.local_ps = std::max(state.local_ps, at);
                m_wakeups[lane].notify();
            }
        }
    }

    /// Walks one lane's ops. Computes, signals and satisfied waits only advance the local time
    /// `t`; a Send first synchronises, so the network sees each post at its time.
    void run_lane(std::size_t lane) {
        LaneState& state = m_lanes[lane];
        const std::size_t n = lane / kStreams;
        const NodeId node(n);
        const bool main_stream = lane % kStreams == 0;
        const auto stream = static_cast<std::uint8_t>(lane % kStreams);
        NodeStats& stats = m_stats[n];
        const std::vector<CompiledOp>& ops = m_compiled.ops[lane];
        Picoseconds t{0};
        const auto blocked = [&](LabelAcc& label, Picoseconds from, Picoseconds until) {
            label.span(from, until);
            if (main_stream) {  // only the main stream's blocking is the node waiting
                label.stats.wait_ps += until - from;
                stats.wait_ps += until - from;
            }
        };
        for (std::size_t pc = 0; pc < ops.size(); ++pc) {
            const CompiledOp& op = ops[pc];
            LabelAcc& label = m_compiled.labels[op.label];
            switch (op.kind) {
            case Kind::compute: {
                const Picoseconds duration(op.value);
                if (m_recorder)
                    m_recorder->op({node, pc, OpKind::compute, label.label, NodeId(), 0, 0, t, t + duration, stream});
                label.span(t, t + duration);
                if (main_stream) {  // on the comm stream a Compute only delays the communication
                    label.stats.compute_ps += duration;
                    stats.compute_ps += duration;
                }
                t += duration;
                break;
            }
            case Kind::send: {
                if (m_error) return;
                state.local_ps = t;
                sync(t);
                Message& m = m_compiled.messages[op.slot];
                m.posted = true;
                m.posted_ps = t;
                m.send_pc = pc;
                m.send_label = op.label;
                m.send_stream = stream;
                m_network.post(n, m.dst.value(), m.bytes, t, {n, stream, m_posts_per_lane[lane]++}, op.slot);
                if (t + Picoseconds(1) < m_network_wake_ps) m_posted.notify();  // else it wakes in time
                label.stats.bytes_sent += m.bytes;
                ++stats.send_count;
                stats.bytes_sent += m.bytes;
                break;
            }
            case Kind::recv: {
                if (m_error) return;
                Message& m = m_compiled.messages[op.slot];
                if (!m.arrived) {
                    state.pc = pc;
                    state.waiting_message = op.slot;
                    state.local_ps = t;
                    state.blocked = true;
                    while (!m.arrived) {
                        sc_core::wait(m_wakeups[lane]);
                        if (m_error) return;
                    }
                    state.waiting_message = kNoSlot;
                }
                const Picoseconds done = std::max(t, m.arrival_ps);
                if (m_recorder)
                    m_recorder->op({node, pc, OpKind::recv, label.label, m.src, m.bytes, m.tag, t, done, stream});
                m.consumed = true;
                blocked(label, t, done);
                ++stats.recv_count;
                stats.bytes_received += m.bytes;
                t = done;
                break;
            }
            case Kind::signal: {
                Event& e = m_compiled.events[op.slot];
                e.signalled = true;
                e.time_ps = t;
                if (m_recorder)
                    m_recorder->op({node, pc, OpKind::signal, label.label, NodeId(), 0, e.event, t, t, stream});
                label.span(t, t);
                wake(n, op.slot, true, t);
                break;
            }
            case Kind::gather: {
                if (m_error) return;
                Gather& g = m_compiled.gathers[op.slot];
                g.latest_ps = std::max(g.latest_ps, t);
                if (++g.arrived == g.ranks) {  // the last member: every one goes on after the collective
                    g.done = true;
                    g.done_ps = g.latest_ps + Picoseconds(op.value);
                    for (const std::size_t other : g.waiting) {
                        LaneState& o = m_lanes[other];
                        o.blocked = false;
                        o.local_ps = std::max(o.local_ps, g.done_ps);
                        m_wakeups[other].notify();
                    }
                    g.waiting.clear();
                } else {
                    state.pc = pc;
                    state.local_ps = t;
                    state.blocked = true;
                    g.waiting.push_back(lane);
                    while (!g.done) {
                        sc_core::wait(m_wakeups[lane]);
                        if (m_error) return;
                    }
                }
                const Picoseconds done = std::max(t, g.done_ps);
                if (m_recorder)
                    m_recorder->op({node, pc, OpKind::wait, label.label, NodeId(), 0, g.tag, t, done, stream});
                blocked(label, t, done);
                t = done;
                break;
            }
            case Kind::wait: {
                if (m_error) return;
                Event& e = m_compiled.events[op.slot];
                if (!e.signalled) {
                    state.pc = pc;
                    state.waiting_event = op.slot;
                    state.local_ps = t;
                    state.blocked = true;
                    while (!e.signalled) {
                        sc_core::wait(m_wakeups[lane]);
                        if (m_error) return;
                    }
                    state.waiting_event = kNoSlot;
                }
                const Picoseconds done = std::max(t, e.time_ps);
                if (m_recorder)
                    m_recorder->op({node, pc, OpKind::wait, label.label, NodeId(), 0, e.event, t, done, stream});
                blocked(label, t, done);
                (main_stream ? stats.main_event_wait_ps : stats.comm_event_wait_ps) += done - t;
                t = done;
                break;
            }
            }
        }
        state.pc = ops.size();
        state.finished = true;
        state.end_ps = t;
        stats.finish_ps = std::max(stats.finish_ps, t);
        (main_stream ? stats.main_finish_ps : stats.comm_finish_ps) = t;
    }

    interconnect::Network m_network;
    Compiled& m_compiled;
    ClusterRecorder* m_recorder;  ///< optional
    sc_core::sc_event m_posted;   ///< a Send posted a message the network would book late
    static constexpr Picoseconds kNever{std::numeric_limits<std::uint64_t>::max()};
    Picoseconds m_network_wake_ps = kNever;       ///< when the network thread next books heads
    std::vector<std::uint64_t> m_posts_per_lane;  ///< each lane's posts so far (PostKey.seq)
    std::vector<LaneState> m_lanes;
    std::vector<NodeStats> m_stats;  ///< per node
    std::unique_ptr<sc_core::sc_event[]>
        m_wakeups;  ///< per lane: a message it waits for arrived, or an event signalled
    std::uint64_t m_ticks_per_ps;
    std::exception_ptr m_error;
};

}  // namespace

ClusterResult run_cluster(const interconnect::Topology& topology, const std::vector<NodeProgram>& programs,
                          ClusterRecorder* recorder) {
    // 1. Check and compile the programs.
    if (programs.size() != topology.node_count())
        throw std::invalid_argument("run_cluster: " + std::to_string(programs.size()) + " programs for " +
                                    std::to_string(topology.node_count()) + " nodes");
    Compiled compiled = compile(programs);
    check_time_bound(topology, compiled);

    // 2. Elaborate and run.
    ClusterModule cluster("cluster", topology, compiled, recorder);
    sc_core::sc_start();
    if (cluster.error()) std::rethrow_exception(cluster.error());

    // 3. Deadlocks: a stream that did not finish is blocked in a Recv or a WaitFor. List a few.
    std::string blocked;
    std::size_t blocked_count = 0;
    for (std::size_t lane = 0; lane < cluster.lanes().size(); ++lane) {
        const LaneState& state = cluster.lanes()[lane];
        if (state.finished) continue;
        if (++blocked_count > 8) continue;
        const std::size_t n = lane / kStreams;
        const interconnect::Op& op = stream_ops(programs[n], lane % kStreams)[state.pc];
        const CompiledOp& compiled_op = compiled.ops[lane][state.pc];
        std::string why;
        if (compiled_op.kind == Kind::gather) {
            const Gather& g = compiled.gathers[compiled_op.slot];
            why = op_name(op) + "; " + std::to_string(g.members) + " of them in the programs, " +
                  std::to_string(g.arrived) + " reached it)";
        } else if (compiled_op.kind == Kind::wait) {
            why = "WaitFor event " + std::to_string(std::get<WaitFor>(op).event) +
                  (compiled.events[compiled_op.slot].has_signal ? "; its Signal was never reached)" : "; no Signal)");
        } else {
            const auto& recv = std::get<Recv>(op);
            why = "Recv from node " + std::to_string(recv.peer.value()) + ", tag " + std::to_string(recv.tag) +
                  (compiled.messages[compiled_op.slot].has_send ? "; its Send was never reached)"
                                                                : "; no matching Send)");
        }
        blocked += (blocked.empty() ? "" : "; ") + ("node " + std::to_string(n) + stream_name(lane) +
                                                    " blocked at op " + std::to_string(state.pc) + " (" + why);
    }
    if (blocked_count > 0)
        throw std::runtime_error(
            "run_cluster: deadlock: " + blocked +
            (blocked_count > 8 ? "; ... (" + std::to_string(blocked_count) + " streams blocked)" : ""));
    // 4. Messages sent but never received.
    for (const Message& m : compiled.messages)
        if (m.posted && !m.consumed)
            throw std::runtime_error("run_cluster: message from node " + std::to_string(m.src.value()) + " to node " +
                                     std::to_string(m.dst.value()) + ", tag " + std::to_string(m.tag) +
                                     " was never received (no matching Recv)");

    // 5. Results.
    ClusterResult result;
    result.nodes = cluster.stats();
    for (const NodeStats& stats : result.nodes) result.end_ps = std::max(result.end_ps, stats.finish_ps);
    result.channels = cluster.network().stats();
    for (const LabelAcc& acc : compiled.labels) {
        LabelStats s = acc.stats;
        if (s.op_count == 0) s.first_start_ps = Picoseconds(0);
        result.labels.emplace(acc.label, s);
    }
    return result;
}

}  // namespace fastsim::cluster
