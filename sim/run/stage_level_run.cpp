// SPDX-License-Identifier: MIT
#include "run/stage_level_run.h"

#include <algorithm>
#include <cmath>

#include "common/checked.h"
#include "interconnect/replay.h"
#include "planner/pipeline_plan.h"
#include "run/fresh_kernel.h"

namespace fastsim::run {
namespace {

/// What running a piece alone gives: each node's end and each channel's busy time, in ps.
struct PieceRun {
    std::vector<Picoseconds> node_end;
    std::vector<Picoseconds> channel_busy;
};

/// Each piece run alone by `run` (its programs -> PieceRun).
template <typename Run>
planner::StagePieceTimes piece_times(const StagePieces& pieces, Run&& run) {
    const auto timing = [&](const std::vector<interconnect::NodeProgram>& programs, bool group) {
        const PieceRun r = run(programs);
        planner::PieceTiming t;
        for (const Picoseconds end : r.node_end) t.node_end_s.push_back(to_seconds(end));
        t.component = planner::piece_components(programs);
        if (group) {
            std::vector<double> busy;
            for (const Picoseconds b : r.channel_busy) busy.push_back(to_seconds(b));
            t.bottleneck = planner::bottleneck_channels(busy);
        }
        return t;
    };
    planner::StagePieceTimes times;
    times.stages.resize(pieces.stages);
    for (std::size_t i = 0; i < pieces.piece_count(); ++i)
        pieces.visit(i, [&](const std::vector<interconnect::NodeProgram>& programs) {
            if (i < pieces.stages * planner::kStagePieces)
                times.stages[i / planner::kStagePieces][i % planner::kStagePieces] = timing(programs, false);
            else
                times.groups.push_back(timing(programs, true));
        });
    return times;
}

Picoseconds picoseconds(double seconds) {
    return Picoseconds(checked_round(seconds * 1e12, "picoseconds of a stage-level step"));
}

void add_node(cluster::NodeStats& into, const cluster::NodeStats& piece, Picoseconds shift, bool with_waits) {
    into.compute_ps += piece.compute_ps;
    if (with_waits) {
        into.wait_ps += piece.wait_ps;
        into.main_event_wait_ps += piece.main_event_wait_ps;
        into.comm_event_wait_ps += piece.comm_event_wait_ps;
    }
    into.send_count += piece.send_count;
    into.recv_count += piece.recv_count;
    into.bytes_sent += piece.bytes_sent;
    into.bytes_received += piece.bytes_received;
    if (piece.finish_ps > Picoseconds(0)) into.finish_ps = std::max(into.finish_ps, shift + piece.finish_ps);
    if (piece.main_finish_ps > Picoseconds(0))
        into.main_finish_ps = std::max(into.main_finish_ps, shift + piece.main_finish_ps);
    if (piece.comm_finish_ps > Picoseconds(0))
        into.comm_finish_ps = std::max(into.comm_finish_ps, shift + piece.comm_finish_ps);
}

/// `piece`'s stats of one label added to `labels`' `label`, its span from the earliest node's
/// start (`first`) to the latest's (`last`).
void add_label(std::map<std::uint32_t, cluster::LabelStats>& labels, std::uint32_t label,
               const cluster::LabelStats& piece, Picoseconds first, Picoseconds last, bool with_waits) {
    auto [it, fresh] = labels.try_emplace(label);
    cluster::LabelStats& into = it->second;
    const Picoseconds start = first + piece.first_start_ps, end = last + piece.last_end_ps;
    into.first_start_ps = fresh ? start : std::min(into.first_start_ps, start);
    into.last_end_ps = fresh ? end : std::max(into.last_end_ps, end);
    into.compute_ps += piece.compute_ps;
    if (with_waits) into.wait_ps += piece.wait_ps;
    into.bytes_sent += piece.bytes_sent;
    into.op_count += piece.op_count;
}

}  // namespace

StagePieces build_stage_pieces(const planner::Plan& plan, std::size_t node_count,
                               const planner::ComputePicoseconds& compute_ps, planner::GradientSync& gradient_sync,
                               std::uint64_t keep_ops) {
    const planner::PipelinePlan& p = *plan.pipeline;
    StagePieces pieces;
    pieces.stages = p.stages.size();
    pieces.groups = planner::send_groups(p);
    pieces.build = [&plan, node_count, compute_ps, &gradient_sync, stages = pieces.stages,
                    groups = pieces.groups](std::size_t index) {
        if (index < stages * planner::kStagePieces)
            return planner::stage_piece_programs(plan, index / planner::kStagePieces,
                                                 static_cast<planner::StagePiece>(index % planner::kStagePieces),
                                                 node_count, compute_ps, gradient_sync);
        return planner::send_group_programs(plan, groups[index - stages * planner::kStagePieces], node_count);
    };
    std::vector<std::array<std::uint64_t, planner::kStagePieces>> stage_ops(pieces.stages);
    std::vector<std::uint64_t> group_ops;
    pieces.kept.resize(pieces.piece_count());
    std::uint64_t kept_ops = 0, largest_built = 0;
    for (std::size_t i = 0; i < pieces.piece_count(); ++i) {
        std::vector<interconnect::NodeProgram> programs = pieces.build(i);
        const std::uint64_t ops = interconnect::op_count(programs);
        if (i < pieces.stages * planner::kStagePieces)
            stage_ops[i / planner::kStagePieces][i % planner::kStagePieces] = ops;
        else
            group_ops.push_back(ops);
        pieces.piece_ops += ops;
        if (kept_ops + ops <= keep_ops) {
            kept_ops += ops;
            pieces.kept[i] = std::move(programs);
        } else {
            largest_built = std::max(largest_built, ops);
        }
    }
    pieces.held_ops = kept_ops + largest_built;
    pieces.step_ops = planner::pipeline_step_ops(p, stage_ops, group_ops);
    return pieces;
}

void StagePieces::visit(std::size_t index,
                        const std::function<void(const std::vector<interconnect::NodeProgram>&)>& use) const {
    if (!kept[index].empty()) {
        use(kept[index]);
        return;
    }
    use(build(index));
}

bool stage_level_chosen(config::PipelineSimulation setting, std::uint64_t step_ops, std::uint64_t piece_ops) {
    switch (setting) {
    case config::PipelineSimulation::message_level: return false;
    case config::PipelineSimulation::stage_level: return true;
    case config::PipelineSimulation::automatic:
        // The message level where it is small enough, or where the pieces would run more ops
        // than the step (few micro-batches: each stage's three pieces are one and a half).
        return step_ops > config::kStageLevelAboveOps && piece_ops < step_ops;
    }
    return false;
}

std::optional<StagePieces> stage_level_pieces(config::PipelineSimulation setting, const planner::Plan& plan,
                                              std::size_t node_count, const planner::ComputePicoseconds& compute_ps,
                                              planner::GradientSync& gradient_sync) {
    if (!plan.pipeline || gradient_sync.staleness() > 0 || setting == config::PipelineSimulation::message_level)
        return std::nullopt;
    StagePieces pieces = build_stage_pieces(plan, node_count, compute_ps, gradient_sync);
    if (!stage_level_chosen(setting, pieces.step_ops, pieces.piece_ops)) return std::nullopt;
    return pieces;
}

double replay_by_stage(const planner::Plan& plan, const StagePieces& pieces, interconnect::Network& network) {
    std::vector<NodeId> identity;
    for (std::size_t n = 0; n < network.topology().node_count(); ++n) identity.emplace_back(n);
    const planner::StagePieceTimes times = piece_times(pieces, [&](const std::vector<interconnect::NodeProgram>& p) {
        PieceRun r;
        interconnect::replay_messages(network, p, identity, &r.node_end);
        for (const interconnect::ChannelStats& c : network.stats()) r.channel_busy.push_back(c.busy_ps);
        return r;
    });
    return planner::compose_stage_level(*plan.pipeline, times).step_s;
}

cluster::ClusterResult simulate_by_stage_on_systemc(const interconnect::Topology& topology, const planner::Plan& plan,
                                                    const StagePieces& pieces) {
    const planner::PipelinePlan& p = *plan.pipeline;
    // Each piece simulated once, under a kernel of its own, in the order piece_times asks.
    std::vector<cluster::ClusterResult> runs;
    const planner::StagePieceTimes times =
        piece_times(pieces, [&](const std::vector<interconnect::NodeProgram>& programs) {
            cluster::ClusterResult& r = runs.emplace_back();
            in_fresh_kernel([&] { r = cluster::run_cluster(topology, programs); });
            PieceRun out;
            for (const cluster::NodeStats& n : r.nodes) out.node_end.push_back(n.finish_ps);
            for (const interconnect::ChannelStats& c : r.channels) out.channel_busy.push_back(c.busy_ps);
            return out;
        });
    const auto stage_run = [&](std::size_t s, planner::StagePiece k) -> const cluster::ClusterResult& {
        return runs[s * planner::kStagePieces + static_cast<std::size_t>(k)];
    };
    const auto group_run = [&](std::size_t g) -> const cluster::ClusterResult& {
        return runs[p.stages.size() * planner::kStagePieces + g];
    };
    const planner::StageLevelStep step = planner::compose_stage_level(p, times);

    const planner::StepLabels labels{p.stages.back().end_layer};
    const auto moved = [&](std::uint32_t label, std::size_t microbatch) {
        return labels.label(labels.layer(label), labels.part(label), microbatch);
    };
    cluster::ClusterResult out;
    out.end_ps = picoseconds(step.step_s);
    out.nodes.resize(topology.node_count());
    out.channels.resize(topology.channels().size());
    // Per piece, the channels and nodes it used: a piece of one stage touches a few of a large
    // cluster's, and it is added once per task or send it stands for.
    std::vector<std::vector<std::size_t>> used_channels(runs.size()), used_nodes(runs.size());
    for (std::size_t r = 0; r < runs.size(); ++r) {
        for (std::size_t c = 0; c < runs[r].channels.size(); ++c)
            if (runs[r].channels[c].transfers > 0) used_channels[r].push_back(c);
        for (std::size_t n = 0; n < runs[r].nodes.size(); ++n) {
            const cluster::NodeStats& node = runs[r].nodes[n];
            if (node.finish_ps > Picoseconds(0) || node.send_count > 0 || node.recv_count > 0 ||
                node.compute_ps > Picoseconds(0))
                used_nodes[r].push_back(n);
        }
    }
    const auto piece_index = [&](const cluster::ClusterResult& piece) {
        return static_cast<std::size_t>(&piece - runs.data());
    };
    const auto add_channels = [&](const cluster::ClusterResult& piece) {
        for (const std::size_t c : used_channels[piece_index(piece)]) {
            out.channels[c].busy_ps += piece.channels[c].busy_ps;
            out.channels[c].bytes += piece.channels[c].bytes;
            out.channels[c].transfers += piece.channels[c].transfers;
            out.channels[c].energy_pj += piece.channels[c].energy_pj;
        }
    };
    // Where each node receives in each group (SendGroup::receivers).
    constexpr std::size_t kNotReceiving = ~std::size_t{0};
    std::vector<std::vector<std::size_t>> receiver_at(pieces.groups.size(),
                                                      std::vector<std::size_t>(topology.node_count(), kNotReceiving));
    for (std::size_t g = 0; g < pieces.groups.size(); ++g)
        for (std::size_t i = 0; i < pieces.groups[g].receivers.size(); ++i)
            receiver_at[g][pieces.groups[g].receivers[i]] = i;
    // Send groups: their messages' stats from when they left; their receivers' waits below.
    for (const planner::StageLevelSend& send : step.sends) {
        const cluster::ClusterResult& piece = group_run(send.group);
        const Picoseconds shift = picoseconds(send.start_s);
        for (const std::size_t n : used_nodes[piece_index(piece)]) add_node(out.nodes[n], piece.nodes[n], shift, false);
        for (const auto& [label, stats] : piece.labels)
            add_label(out.labels, moved(label, send.microbatch), stats, shift, shift, false);
        add_channels(piece);
    }
    // Tasks: each node waits from when it was free for each transfer in turn and converts it;
    // then its part of the task's piece.
    for (const planner::StageLevelTask& task : step.tasks) {
        const planner::PipelineStage& stage = p.stages[task.stage];
        std::vector<double> now = task.free_s;
        const bool forward = task.task.forward;
        for (const auto& [transfer, s] : task.received) {
            const planner::StageLevelSend& send = step.sends[s];
            const planner::StageTransfer& x = p.transfers[transfer];
            if ((forward ? x.forward_bytes : x.backward_bytes) <= 0)
                continue;  // no messages: nothing to wait for, as at the message level
            const LayerId boundary(forward ? p.stages[x.to].first_layer : p.stages[x.from].end_layer - 1);
            const std::uint32_t label = labels.label(boundary, planner::StepPart::stage_transfer, send.microbatch);
            const auto conversions = planner::transfer_conversions(p, x, forward);
            // Its receives are posted when their nodes are free.
            cluster::LabelStats& received = out.labels[label];
            for (const double free_s : task.free_s)
                received.first_start_ps = std::min(received.first_start_ps, picoseconds(free_s));
            for (std::size_t i = 0; i < stage.nodes.size(); ++i) {
                const std::size_t n = stage.nodes[i];
                const std::size_t at = receiver_at[send.group][n];
                if (at == kNotReceiving) continue;
                const double arrival_s = send.arrival_s[at];
                const Picoseconds wait = picoseconds(std::max(0.0, arrival_s - now[i]));
                now[i] = std::max(now[i], arrival_s);
                out.nodes[n].wait_ps += wait;
                received.wait_ps += wait;
                for (const auto& [receiver, seconds] : conversions)
                    if (receiver == n) {
                        const Picoseconds ps = picoseconds(seconds);
                        out.nodes[n].compute_ps += ps;
                        received.compute_ps += ps;
                        ++received.op_count;
                        now[i] += seconds;
                    }
                // A receive completes once posted and arrived; its conversion follows.
                received.last_end_ps = std::max(received.last_end_ps, picoseconds(now[i]));
            }
        }
        const cluster::ClusterResult& piece = stage_run(task.stage, task.piece);
        Picoseconds first{~std::uint64_t{0}}, last{0};
        for (std::size_t i = 0; i < stage.nodes.size(); ++i) {
            const Picoseconds start = picoseconds(task.start_s[i]);
            first = std::min(first, start);
            last = std::max(last, start);
            // Waiting for the nodes it starts the piece with counts as the node's waiting, as a
            // Recv would, under no label.
            out.nodes[stage.nodes[i]].wait_ps += picoseconds(std::max(0.0, task.start_s[i] - now[i]));
            add_node(out.nodes[stage.nodes[i]], piece.nodes[stage.nodes[i]], start, true);
        }
        for (const auto& [label, stats] : piece.labels)
            add_label(out.labels, moved(label, task.task.microbatch), stats, first, last, true);
        add_channels(piece);
    }
    for (cluster::NodeStats& n : out.nodes) n.finish_ps = std::max({n.finish_ps, n.main_finish_ps, n.comm_finish_ps});
    return out;
}

}  // namespace fastsim::run
