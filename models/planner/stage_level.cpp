// SPDX-License-Identifier: MIT
#include "planner/stage_level.h"

#include <algorithm>
#include <limits>
#include <queue>
#include <stdexcept>
#include <tuple>
#include <unordered_map>
#include <variant>

#include "planner/pipeline.h"

namespace fastsim::planner {
namespace {

/// A send group's messages as one queue, from the group run alone (every message sent at 0):
/// its receivers in the order their last message arrived; each one's service, the time from
/// the previous arrival to its own (the first's, its arrival less the route's latency); the
/// latency after the service. Messages sent all at once arrive as run alone; sent apart, each
/// waits only for those sent before it.
struct TransferQueue {
    std::vector<std::size_t> order;  ///< positions in the receivers given
    std::vector<double> service_s;   ///< by position
    double latency_s = 0;
};

TransferQueue transfer_queue(const std::vector<std::size_t>& receivers, const PieceTiming& alone, double latency_s) {
    if (!(latency_s < std::numeric_limits<double>::infinity())) latency_s = 0;
    TransferQueue q;
    q.service_s.assign(receivers.size(), 0);
    for (std::size_t i = 0; i < receivers.size(); ++i)
        if (alone.node_end_s[receivers[i]] > 0) q.order.push_back(i);
    std::stable_sort(q.order.begin(), q.order.end(), [&](std::size_t a, std::size_t b) {
        return alone.node_end_s[receivers[a]] < alone.node_end_s[receivers[b]];
    });
    if (q.order.empty()) return q;
    q.latency_s = std::min(latency_s, alone.node_end_s[receivers[q.order.front()]]);
    double previous = q.latency_s;
    for (const std::size_t i : q.order) {
        const double arrival = alone.node_end_s[receivers[i]];
        q.service_s[i] = arrival - previous;
        previous = arrival;
    }
    return q;
}

}  // namespace

std::size_t last_backward_microbatch(const PipelinePlan& p, std::size_t stage) {
    return stage_order(p.schedule, p.stages.size(), stage, p.microbatches).back().microbatch;
}

std::vector<interconnect::NodeProgram> stage_piece_programs(const Plan& plan, std::size_t stage, StagePiece piece,
                                                            std::size_t node_count,
                                                            const ComputePicoseconds& compute_ps,
                                                            GradientSync& gradient_sync) {
    const PipelinePlan& p = *plan.pipeline;
    const PipelineStage& s = p.stages.at(stage);
    ScheduleBuilder builder(s.plan, node_count, compute_ps, gradient_sync);
    StageTask task{piece == StagePiece::forward, 0};
    if (piece == StagePiece::last_backward) task.microbatch = last_backward_microbatch(p, stage);
    walk_step(s.graph, s.plan, builder,
              stage_task_walk(p, stage, task, piece == StagePiece::last_backward, gradient_sync.bucket_bytes()));
    if (piece == StagePiece::last_backward) return builder.finish();
    return std::move(builder.programs());
}

std::vector<SendGroup> send_groups(const PipelinePlan& p) {
    std::vector<SendGroup> groups;
    for (const bool forward : {true, false})
        for (std::size_t s = 0; s < p.stages.size(); ++s) {
            SendGroup g;
            g.stage = s;
            g.forward = forward;
            for (std::size_t x = 0; x < p.transfers.size(); ++x) {
                if ((forward ? p.transfers[x].from : p.transfers[x].to) != s) continue;
                g.transfers.push_back(x);
                for (const auto& [sender, receiver] : transfer_pairs(p, p.transfers[x], forward))
                    if (std::find(g.receivers.begin(), g.receivers.end(), receiver) == g.receivers.end())
                        g.receivers.push_back(receiver);
            }
            if (!g.transfers.empty()) groups.push_back(std::move(g));
        }
    return groups;
}

std::vector<interconnect::NodeProgram> send_group_programs(const Plan& plan, const SendGroup& group,
                                                           std::size_t node_count) {
    std::vector<interconnect::NodeProgram> programs(node_count);
    for (const std::size_t x : group.transfers) {
        append_transfer(programs, *plan.pipeline, x, 0, group.forward, true, false);
        append_transfer(programs, *plan.pipeline, x, 0, group.forward, false, false);
    }
    return programs;
}

std::uint64_t pipeline_step_ops(const PipelinePlan& p,
                                const std::vector<std::array<std::uint64_t, kStagePieces>>& stage_ops,
                                const std::vector<std::uint64_t>& group_ops) {
    const std::uint64_t m = p.microbatches;
    std::uint64_t ops = 0;
    for (const auto& s : stage_ops) ops += m * s[0] + (m - 1) * s[1] + s[2];
    for (const std::uint64_t g : group_ops) ops += m * g;
    for (std::size_t x = 0; x < p.transfers.size(); ++x)
        for (const bool forward : {true, false}) ops += m * transfer_conversions(p, p.transfers[x], forward).size();
    return ops;
}

std::vector<std::size_t> piece_components(const std::vector<interconnect::NodeProgram>& programs) {
    std::vector<std::size_t> parent(programs.size());
    for (std::size_t n = 0; n < parent.size(); ++n) parent[n] = n;
    const auto root = [&](std::size_t n) {
        while (parent[n] != n) n = parent[n] = parent[parent[n]];
        return n;
    };
    const auto join = [&](std::size_t a, std::size_t b) {
        a = root(a), b = root(b);
        if (a != b) parent[std::max(a, b)] = std::min(a, b);
    };
    std::unordered_map<std::uint64_t, std::size_t> collective_member;  // flow collective tag -> a member
    for (std::size_t n = 0; n < programs.size(); ++n)
        for (const auto* stream : {&programs[n].ops, &programs[n].comm_ops})
            for (const interconnect::Op& op : *stream) {
                if (const auto* send = std::get_if<interconnect::Send>(&op)) join(n, send->peer.value());
                if (const auto* recv = std::get_if<interconnect::Recv>(&op)) join(n, recv->peer.value());
                if (const auto* flow = std::get_if<interconnect::FlowCollective>(&op))
                    join(n, collective_member.try_emplace(flow->tag, n).first->second);
            }
    for (std::size_t n = 0; n < parent.size(); ++n) parent[n] = root(n);
    return parent;
}

std::vector<std::pair<std::size_t, double>> bottleneck_channels(const std::vector<double>& busy_s) {
    const double most = busy_s.empty() ? 0 : *std::max_element(busy_s.begin(), busy_s.end());
    std::vector<std::pair<std::size_t, double>> out;
    if (most <= 0) return out;
    for (std::size_t c = 0; c < busy_s.size(); ++c)
        if (busy_s[c] >= 0.5 * most) out.emplace_back(c, busy_s[c]);
    return out;
}

StageLevelStep compose_stage_level(const PipelinePlan& p, const StagePieceTimes& times) {
    const std::size_t stages = p.stages.size(), m = p.microbatches, transfers = p.transfers.size();
    const std::vector<SendGroup> groups = send_groups(p);
    if (stages == 0) throw std::invalid_argument("compose_stage_level: a pipeline without stages");
    if (times.stages.size() != stages || times.groups.size() != groups.size())
        throw std::invalid_argument("compose_stage_level: piece times for another plan");
    const std::size_t node_count = times.stages.front()[0].node_end_s.size();
    std::vector<std::size_t> position(node_count, 0);  // a node's place in its stage's nodes
    for (const PipelineStage& stage : p.stages)
        for (std::size_t i = 0; i < stage.nodes.size(); ++i) position.at(stage.nodes[i]) = i;
    // Per transfer and direction: its group, and each receiver's conversion of one micro-batch.
    std::vector<std::array<std::size_t, 2>> group_of(transfers);
    for (std::size_t g = 0; g < groups.size(); ++g)
        for (const std::size_t x : groups[g].transfers) group_of[x][groups[g].forward ? 0 : 1] = g;
    std::vector<std::array<std::vector<double>, 2>> conversion_s(transfers);
    for (std::size_t x = 0; x < transfers; ++x)
        for (const bool forward : {true, false}) {
            const PipelineStage& receiving = p.stages[forward ? p.transfers[x].to : p.transfers[x].from];
            conversion_s[x][forward ? 0 : 1].assign(receiving.nodes.size(), 0);
            for (const auto& [receiver, seconds] : transfer_conversions(p, p.transfers[x], forward))
                conversion_s[x][forward ? 0 : 1][position[receiver]] += seconds;
        }
    // Per group: its receivers as one queue, each receiver's senders, and where each node
    // receives in it (SendGroup::receivers).
    std::vector<TransferQueue> queues;
    std::vector<std::vector<std::vector<std::size_t>>> senders_of(groups.size());
    std::vector<std::unordered_map<std::size_t, std::size_t>> receiver_at(groups.size());
    for (std::size_t g = 0; g < groups.size(); ++g) {
        const SendGroup& group = groups[g];
        double latency_s = std::numeric_limits<double>::infinity();
        for (std::size_t i = 0; i < group.receivers.size(); ++i) receiver_at[g][group.receivers[i]] = i;
        senders_of[g].resize(group.receivers.size());
        for (const std::size_t x : group.transfers) {
            latency_s = std::min(latency_s, p.transfers[x].cost.latency_s);
            for (const auto& [sender, receiver] : transfer_pairs(p, p.transfers[x], group.forward))
                senders_of[g][receiver_at[g][receiver]].push_back(sender);
        }
        queues.push_back(transfer_queue(group.receivers, times.groups[g], latency_s));
    }
    // Per stage and direction (0 forward, 1 backward): the transfers it receives, and the send
    // groups it sends.
    std::vector<std::array<std::vector<std::size_t>, 2>> incoming(stages), sending(stages);
    for (std::size_t x = 0; x < transfers; ++x) {
        incoming[p.transfers[x].to][0].push_back(x);
        incoming[p.transfers[x].from][1].push_back(x);
    }
    for (std::size_t g = 0; g < groups.size(); ++g) sending[groups[g].stage][groups[g].forward ? 0 : 1].push_back(g);
    std::vector<std::vector<StageTask>> order(stages);
    for (std::size_t s = 0; s < stages; ++s) order[s] = stage_order(p.schedule, stages, s, m);
    // sent[s][2j + backward]: when each node of stage s sent its group of micro-batch j (empty: not yet).
    std::vector<std::vector<std::vector<double>>> sent(stages, std::vector<std::vector<double>>(2 * m));
    std::vector<std::vector<double>> first_sent(stages, std::vector<double>(2 * m, 0));
    std::vector<double> group_free(groups.size(), 0);      // its own messages' queue
    std::unordered_map<std::size_t, double> channel_free;  // per bottleneck channel
    std::vector<double> node_free(node_count, 0), component_start(node_count, 0);
    std::vector<double> stage_free(stages, 0);  // the earliest any of its nodes is free
    std::vector<std::size_t> next(stages, 0), backwards_left(stages, m);
    StageLevelStep out;
    out.tasks.reserve(stages * 2 * m);
    // Groups are booked on their channels in the order their first message left (the tasks
    // that receive them are composed in another order).
    constexpr std::size_t kUnbooked = ~std::size_t{0};
    std::vector<std::vector<std::size_t>> booked(groups.size(), std::vector<std::size_t>(m, kUnbooked));
    using Sent = std::tuple<double, std::size_t, std::size_t>;  // first send, group, micro-batch
    std::priority_queue<Sent, std::vector<Sent>, std::greater<>> unbooked;
    const auto book_next = [&] {
        if (unbooked.empty()) throw std::logic_error("compose_stage_level: a transfer received before it was sent");
        const auto [first, g, microbatch] = unbooked.top();
        unbooked.pop();
        const SendGroup& group = groups[g];
        const TransferQueue& queue = queues[g];
        const std::vector<double>& sender_sent = sent[group.stage][2 * microbatch + (group.forward ? 0 : 1)];
        StageLevelSend send{g, microbatch, first, std::vector<double>(group.receivers.size(), 0)};
        std::vector<double> sent_to(group.receivers.size(), 0);  // per receiver: its senders' last send
        for (std::size_t i = 0; i < group.receivers.size(); ++i)
            for (const std::size_t sender : senders_of[g][i])
                sent_to[i] = std::max(sent_to[i], sender_sent[position[sender]]);
        // Receivers served in the order their messages were sent (ties as run alone).
        std::vector<std::size_t> served = queue.order;
        std::stable_sort(served.begin(), served.end(),
                         [&](std::size_t a, std::size_t b) { return sent_to[a] < sent_to[b]; });
        const auto& bottleneck = times.groups[g].bottleneck;
        double server = group_free[g];
        for (const auto& [c, busy] : bottleneck) server = std::max(server, channel_free[c]);
        send.start_s = served.empty() ? first : std::max(sent_to[served.front()], server);
        for (const std::size_t i : served) {
            server = std::max(sent_to[i], server) + queue.service_s[i];
            send.arrival_s[i] = server + queue.latency_s;
        }
        group_free[g] = server;
        for (const auto& [c, busy] : bottleneck) channel_free[c] = send.start_s + busy;
        booked[g][microbatch] = out.sends.size();
        out.sends.push_back(std::move(send));
    };
    // Tasks are composed earliest first (by when the first of their nodes is free and the
    // first message they receive left).
    for (std::size_t done = 0; done < stages * 2 * m; ++done) {
        std::size_t s = stages;
        double earliest = std::numeric_limits<double>::infinity();
        for (std::size_t c = 0; c < stages; ++c) {
            if (next[c] >= order[c].size()) continue;
            const StageTask t = order[c][next[c]];
            const std::size_t slot = 2 * t.microbatch + (t.forward ? 0 : 1);
            double bound = stage_free[c];
            bool waiting = false;
            for (const std::size_t x : incoming[c][t.forward ? 0 : 1]) {
                const std::size_t sender = t.forward ? p.transfers[x].from : p.transfers[x].to;
                waiting = waiting || sent[sender][slot].empty();
                bound = std::max(bound, first_sent[sender][slot]);
            }
            if (!waiting && bound < earliest) earliest = bound, s = c;
        }
        if (s == stages) throw std::logic_error("compose_stage_level: the pipeline schedule deadlocks");
        const StageTask t = order[s][next[s]++];
        const std::size_t slot = 2 * t.microbatch + (t.forward ? 0 : 1), way = t.forward ? 0 : 1;
        const std::vector<std::size_t>& nodes = p.stages[s].nodes;
        StageLevelTask task;
        task.stage = s;
        task.task = t;
        task.piece = t.forward ? StagePiece::forward
                               : (--backwards_left[s] == 0 ? StagePiece::last_backward : StagePiece::backward);
        for (const std::size_t n : nodes) task.free_s.push_back(node_free[n]);
        std::vector<double> ready = task.free_s;
        for (const std::size_t x : incoming[s][way]) {
            const std::size_t g = group_of[x][way];
            while (booked[g][t.microbatch] == kUnbooked) book_next();  // every group sent before it
            const StageLevelSend& send = out.sends[booked[g][t.microbatch]];
            task.received.emplace_back(x, booked[g][t.microbatch]);
            for (std::size_t i = 0; i < nodes.size(); ++i) {
                const auto at = receiver_at[g].find(nodes[i]);
                if (at == receiver_at[g].end()) continue;
                ready[i] = std::max(ready[i], send.arrival_s[at->second]) + conversion_s[x][way][i];
            }
        }
        // The nodes the piece couples start it together.
        const auto& piece = times.stages[s][static_cast<std::size_t>(task.piece)];
        for (std::size_t i = 0; i < nodes.size(); ++i) component_start[piece.component[nodes[i]]] = 0;
        for (std::size_t i = 0; i < nodes.size(); ++i) {
            double& c = component_start[piece.component[nodes[i]]];
            c = std::max(c, ready[i]);
        }
        std::vector<double> send(nodes.size());
        for (std::size_t i = 0; i < nodes.size(); ++i) {
            const std::size_t n = nodes[i];
            const double start = component_start[piece.component[n]];
            task.start_s.push_back(start);
            task.end_s.push_back(start + piece.node_end_s[n]);
            node_free[n] = task.end_s.back();
            // The last backward's transfers leave after its walk, before its all-reduces end.
            send[i] = task.piece == StagePiece::last_backward
                          ? start + std::min(times.stages[s][1].node_end_s[n], piece.node_end_s[n])
                          : task.end_s.back();
            out.step_s = std::max(out.step_s, task.end_s.back());
        }
        first_sent[s][slot] = *std::min_element(send.begin(), send.end());
        sent[s][slot] = std::move(send);
        for (const std::size_t g : sending[s][way]) unbooked.push({first_sent[s][slot], g, t.microbatch});
        stage_free[s] = *std::min_element(task.end_s.begin(), task.end_s.end());
        out.tasks.push_back(std::move(task));
    }
    return out;
}

}  // namespace fastsim::planner
