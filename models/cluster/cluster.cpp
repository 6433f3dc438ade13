// SPDX-License-Identifier: MIT
#include "cluster/cluster.h"

#include <systemc>

#include <algorithm>
#include <exception>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>

#include "common/checked.h"

namespace fastsim::cluster {
namespace {

using interconnect::Compute;
using interconnect::NodeProgram;
using interconnect::Recv;
using interconnect::Send;

constexpr std::uint32_t kNoSlot = std::numeric_limits<std::uint32_t>::max();

/// One message (src, dst, tag), matched before the run.
struct Message {
    std::size_t src = 0, dst = 0;
    std::uint64_t tag = 0;
    std::uint64_t bytes = 0;
    std::uint64_t arrival_ps = 0;
    bool has_send = false, has_recv = false;
    bool posted = false, consumed = false;
};

struct MessageKey {
    std::size_t src, dst;
    std::uint64_t tag;
    bool operator==(const MessageKey& o) const { return src == o.src && dst == o.dst && tag == o.tag; }
};

struct MessageKeyHash {
    std::size_t operator()(const MessageKey& k) const {
        std::uint64_t h = k.tag * 0x9E3779B97F4A7C15ull;
        h ^= (k.src + 0x632BE59BD9B4E019ull + (h << 6) + (h >> 2));
        h ^= (k.dst * 0xC2B2AE3D27D4EB4Full + (h << 6) + (h >> 2));
        return static_cast<std::size_t>(h);
    }
};

enum class Kind : std::uint8_t { compute, send, recv };

/// An op with its message slot and dense label index resolved.
struct CompiledOp {
    std::uint64_t value;  ///< duration_ps of a Compute
    std::uint32_t slot;   ///< message of a Send or Recv
    std::uint32_t label;  ///< index into the label table
    Kind kind;
};

struct LabelAcc {
    std::uint32_t label = 0;
    LabelStats stats{std::numeric_limits<std::uint64_t>::max(), 0, 0, 0, 0, 0};
    void span(std::uint64_t start, std::uint64_t end) {
        stats.first_start_ps = std::min(stats.first_start_ps, start);
        stats.last_end_ps = std::max(stats.last_end_ps, end);
        ++stats.op_count;
    }
};

struct NodeState {
    std::size_t pc = 0;
    bool finished = false;
    std::uint32_t waiting_slot = kNoSlot;  ///< the message this node's thread is blocked on
    NodeStats stats;
};

std::string op_name(const interconnect::Op& op) {
    if (const auto* s = std::get_if<Send>(&op))
        return "Send to node " + std::to_string(s->peer) + ", tag " + std::to_string(s->tag);
    if (const auto* r = std::get_if<Recv>(&op))
        return "Recv from node " + std::to_string(r->peer) + ", tag " + std::to_string(r->tag);
    return "Compute";
}

/// The programs with messages matched and labels made dense; checks peers and duplicates.
struct Compiled {
    std::vector<std::vector<CompiledOp>> ops;
    std::vector<Message> messages;
    std::vector<LabelAcc> labels;
};

Compiled compile(const std::vector<NodeProgram>& programs) {
    Compiled c;
    c.ops.resize(programs.size());
    std::unordered_map<MessageKey, std::uint32_t, MessageKeyHash> slots;
    std::unordered_map<std::uint32_t, std::uint32_t> label_index;
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
        auto& out = c.ops[n];
        out.reserve(programs[n].ops.size());
        for (std::size_t i = 0; i < programs[n].ops.size(); ++i) {
            const interconnect::Op& op = programs[n].ops[i];
            const auto where = [&] { return "run_cluster: node " + std::to_string(n) + " op " + std::to_string(i) + " (" + op_name(op) + ")"; };
            if (const auto* compute = std::get_if<Compute>(&op)) {
                out.push_back({compute->duration_ps, kNoSlot, label_of(compute->label), Kind::compute});
            } else if (const auto* send = std::get_if<Send>(&op)) {
                if (send->peer >= programs.size()) throw std::invalid_argument(where() + ": peer out of range");
                const std::uint32_t slot = slot_of({n, send->peer, send->tag});
                Message& m = c.messages[slot];
                if (m.has_send) throw std::invalid_argument(where() + ": a second Send with this (src, dst, tag)");
                m.has_send = true;
                m.bytes = send->bytes;
                out.push_back({send->bytes, slot, label_of(send->label), Kind::send});
            } else {
                const auto& recv = std::get<Recv>(op);
                if (recv.peer >= programs.size()) throw std::invalid_argument(where() + ": peer out of range");
                const std::uint32_t slot = slot_of({recv.peer, n, recv.tag});
                Message& m = c.messages[slot];
                if (m.has_recv) throw std::invalid_argument(where() + ": a second Recv with this (src, dst, tag)");
                m.has_recv = true;
                out.push_back({0, slot, label_of(recv.label), Kind::recv});
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
    std::uint64_t bound = 0;
    for (const auto& ops : c.ops)
        for (const CompiledOp& op : ops)
            if (op.kind == Kind::compute) checked_accumulate(bound, op.value, kWhat);
    std::vector<interconnect::ChannelId> route;
    for (const Message& m : c.messages) {
        if (!m.has_send) continue;
        topology.route_into(m.src, m.dst, route);
        for (const interconnect::ChannelId id : route) {
            const interconnect::LinkTiming& t = topology.channel(id).timing;
            checked_accumulate(bound, interconnect::occupancy_ps(m.bytes, t.bits_per_s), kWhat);
            checked_accumulate(bound, t.latency_ps, kWhat);
        }
    }
    if (bound > (std::uint64_t{1} << 62)) throw SizeOverflow(kWhat);
}

/// The cluster: one thread per node walking its compiled program.
class ClusterModule : public sc_core::sc_module {
public:
    ClusterModule(const sc_core::sc_module_name& name, const interconnect::Topology& topology, Compiled& compiled,
                  ClusterRecorder* recorder)
        : sc_core::sc_module(name),
          m_network(topology),
          m_compiled(compiled),
          m_recorder(recorder),
          m_nodes(compiled.ops.size()),
          m_events(new sc_core::sc_event[compiled.ops.size()]),
          m_ticks_per_ps(sc_core::sc_time(1, sc_core::SC_PS).value()) {
        if (m_ticks_per_ps == 0) throw std::logic_error("run_cluster: SystemC time resolution is coarser than 1 ps");
        for (std::size_t n = 0; n < m_nodes.size(); ++n)
            sc_core::sc_spawn([this, n] { run_node_guarded(n); }, sc_core::sc_gen_unique_name("node"));
    }

    [[nodiscard]] const interconnect::Network& network() const { return m_network; }
    [[nodiscard]] const std::vector<NodeState>& nodes() const { return m_nodes; }
    [[nodiscard]] const std::exception_ptr& error() const { return m_error; }

private:
    void run_node_guarded(std::size_t n) {
        try {
            run_node(n);
        } catch (...) {
            if (!m_error) m_error = std::current_exception();  // the other threads stop at their next message
        }
    }

    /// Brings SystemC time up to the node's local time `t_ps`.
    void sync(std::uint64_t t_ps) {
        const std::uint64_t now_ps = sc_core::sc_time_stamp().value() / m_ticks_per_ps;
        if (t_ps > now_ps) sc_core::wait(sc_core::sc_time::from_value((t_ps - now_ps) * m_ticks_per_ps));
    }

    /// Walks node n's program. Computes and already-arrived Recvs only advance the local time
    /// `t`; a Send first synchronises so the network sees reservations in time order.
    void run_node(std::size_t n) {
        NodeState& state = m_nodes[n];
        NodeStats& stats = state.stats;
        const std::vector<CompiledOp>& ops = m_compiled.ops[n];
        std::uint64_t t = 0;
        for (std::size_t pc = 0; pc < ops.size(); ++pc) {
            const CompiledOp& op = ops[pc];
            LabelAcc& label = m_compiled.labels[op.label];
            switch (op.kind) {
                case Kind::compute:
                    if (m_recorder) m_recorder->op({n, pc, OpKind::compute, label.label, 0, 0, 0, t, t + op.value});
                    label.span(t, t + op.value);
                    label.stats.compute_ps += op.value;
                    stats.compute_ps += op.value;
                    t += op.value;
                    break;
                case Kind::send: {
                    if (m_error) return;
                    sync(t);
                    Message& m = m_compiled.messages[op.slot];
                    m.arrival_ps = m_network.transfer(n, m.dst, m.bytes, t, m_recorder ? &m_hops : nullptr);
                    m.posted = true;
                    if (m_recorder) {
                        for (const interconnect::HopInterval& hop : m_hops)
                            m_recorder->channel({hop.channel, n, m.dst, m.bytes, m.tag, label.label, hop.start_ps, hop.end_ps});
                        m_recorder->op({n, pc, OpKind::send, label.label, m.dst, m.bytes, m.tag, t, m.arrival_ps});
                    }
                    if (m_nodes[m.dst].waiting_slot == op.slot) m_events[m.dst].notify();
                    label.span(t, m.arrival_ps);
                    label.stats.bytes_sent += m.bytes;
                    ++stats.send_count;
                    stats.bytes_sent += m.bytes;
                    break;
                }
                case Kind::recv: {
                    if (m_error) return;
                    Message& m = m_compiled.messages[op.slot];
                    if (!m.posted) {
                        state.pc = pc;
                        state.waiting_slot = op.slot;
                        while (!m.posted) {
                            sc_core::wait(m_events[n]);
                            if (m_error) return;
                        }
                        state.waiting_slot = kNoSlot;
                    }
                    const std::uint64_t done = std::max(t, m.arrival_ps);
                    if (m_recorder) m_recorder->op({n, pc, OpKind::recv, label.label, m.src, m.bytes, m.tag, t, done});
                    m.consumed = true;
                    label.span(t, done);
                    label.stats.wait_ps += done - t;
                    stats.wait_ps += done - t;
                    ++stats.recv_count;
                    stats.bytes_received += m.bytes;
                    t = done;
                    break;
                }
            }
        }
        state.pc = ops.size();
        state.finished = true;
        stats.finish_ps = t;
    }

    interconnect::Network m_network;
    Compiled& m_compiled;
    ClusterRecorder* m_recorder;                    ///< optional
    std::vector<interconnect::HopInterval> m_hops;  ///< for the recorder: the current Send's route
    std::vector<NodeState> m_nodes;
    std::unique_ptr<sc_core::sc_event[]> m_events;  ///< per node: a message it waits for was posted
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

    // 3. Deadlocks: a node that did not finish is blocked in a Recv. List them all (a few).
    std::string blocked;
    std::size_t blocked_count = 0;
    for (std::size_t n = 0; n < programs.size(); ++n) {
        const NodeState& state = cluster.nodes()[n];
        if (state.finished) continue;
        if (++blocked_count > 8) continue;
        const auto& recv = std::get<Recv>(programs[n].ops[state.pc]);
        const Message& m = compiled.messages[compiled.ops[n][state.pc].slot];
        blocked += (blocked.empty() ? "" : "; ") + ("node " + std::to_string(n) + " blocked at op " +
                   std::to_string(state.pc) + " (Recv from node " + std::to_string(recv.peer) + ", tag " +
                   std::to_string(recv.tag) + (m.has_send ? "; its Send was never reached)" : "; no matching Send)"));
    }
    if (blocked_count > 0)
        throw std::runtime_error("run_cluster: deadlock: " + blocked +
                                 (blocked_count > 8 ? "; ... (" + std::to_string(blocked_count) + " nodes blocked)" : ""));
    // 4. Messages sent but never received.
    for (const Message& m : compiled.messages)
        if (m.posted && !m.consumed)
            throw std::runtime_error("run_cluster: message from node " + std::to_string(m.src) + " to node " +
                                     std::to_string(m.dst) + ", tag " + std::to_string(m.tag) +
                                     " was never received (no matching Recv)");

    // 5. Results.
    ClusterResult result;
    result.nodes.reserve(programs.size());
    for (const NodeState& state : cluster.nodes()) {
        result.nodes.push_back(state.stats);
        result.end_ps = std::max(result.end_ps, state.stats.finish_ps);
    }
    result.channels = cluster.network().stats();
    for (const LabelAcc& acc : compiled.labels) {
        LabelStats s = acc.stats;
        if (s.op_count == 0) s.first_start_ps = 0;
        result.labels.emplace(acc.label, s);
    }
    return result;
}

}  // namespace fastsim::cluster
