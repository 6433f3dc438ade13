// SPDX-License-Identifier: MIT
#include "run/cluster_timeline.h"

#include <string>

#include "planner/schedule.h"

namespace fastsim::run {
namespace {

constexpr std::uint64_t kPsPerSecond = 1'000'000'000'000ull;

}  // namespace

ClusterTimeline::ClusterTimeline(const config::ClusterParams& cluster, const planner::LayerGraph& graph,
                                 const TimelineRequest& request, std::size_t microbatches)
    : m_cluster(cluster),
      m_graph(graph),
      m_microbatches(microbatches),
      m_builder(TickUnit::ps, kPsPerSecond, request,
                "one span per run of consecutive ops or channel reservations with the same schedule label on each "
                "track, from the first's start to the last's end; args: spans, busy_ps, and bytes summed"),
      m_channel_tracks(cluster.topology->channel_count(), kNone),
      m_recv_names(cluster.node_type.size(), kNone),
      m_send_names(cluster.node_type.size(), kNone) {
    const std::size_t nodes = cluster.node_type.size();
    m_node_tracks.reserve(nodes);
    for (std::size_t n = 0; n < nodes; ++n) {
        const std::uint32_t p = m_builder.add_process("node " + std::to_string(n) + " (" +
                                                      cluster.node_types[cluster.node_type[n]].name + ")");
        m_node_tracks.push_back({m_builder.add_track(p, "compute", 0), m_builder.add_track(p, "recv waits", 1),
                                 m_builder.add_track(p, "sends", 2), m_builder.add_track(p, "comm stream waits", 3)});
    }
    m_links_process = m_builder.add_process("links");
}

std::uint32_t ClusterTimeline::label_name(std::uint32_t label) {
    if (label >= m_label_names.size()) m_label_names.resize(label + 1, kNone);
    std::uint32_t& id = m_label_names[label];
    if (id == kNone) {
        static const char* const kParts[planner::kStepParts] = {"forward", "backward", "weight sync", "stage transfer",
                                                                "weight update"};
        const planner::StepLabels labels{m_graph.layers.size()};
        const std::size_t layer = labels.layer(label).value(), microbatch = labels.microbatch(label);
        std::string name = m_graph.layers[layer].name + " " + kParts[static_cast<std::size_t>(labels.part(label))];
        if (m_microbatches > 1) name += " mb " + std::to_string(microbatch);
        id = m_builder.name_id(name);
    }
    return id;
}

std::string ClusterTimeline::vertex_name(std::size_t vertex) const {
    return (vertex < m_cluster.node_type.size() ? "node " : "switch ") + std::to_string(vertex);
}

std::uint32_t ClusterTimeline::channel_track(interconnect::ChannelId channel) {
    std::uint32_t& track = m_channel_tracks[channel];
    if (track == kNone) {
        const interconnect::Channel& c = m_cluster.topology->channel(channel);
        track = m_builder.add_track(
            m_links_process,
            "channel " + std::to_string(channel) + ": " + vertex_name(c.from) + " -> " + vertex_name(c.to), channel);
    }
    return track;
}

std::uint32_t ClusterTimeline::peer_name(std::vector<std::uint32_t>& cache, const char* prefix, NodeId peer) {
    std::uint32_t& id = cache[peer.value()];
    if (id == kNone) id = m_builder.name_id(prefix + std::to_string(peer.value()));
    return id;
}

void ClusterTimeline::op(const cluster::OpSpan& op) {
    const NodeTracks& tracks = m_node_tracks[op.node.value()];
    const std::uint32_t group = label_name(op.label);
    TimelineSpan s;
    s.start = op.start_ps.count();
    s.end = op.end_ps.count();
    switch (op.kind) {
    case cluster::OpKind::compute:
        if (s.end == s.start) return;
        s.track = tracks.compute;
        s.name = group;
        s.category = "compute";
        s.args[1] = {"op", op.op_index};
        break;
    case cluster::OpKind::signal: return;
    case cluster::OpKind::wait:
        if (s.end == s.start) return;
        s.track = op.stream == 0 ? tracks.recv_waits : tracks.comm_waits;
        s.name = group;
        s.category = "wait";
        s.args[0] = {"event", op.tag};
        s.args[1] = {"op", op.op_index};
        break;
    case cluster::OpKind::recv:
        if (s.end == s.start) return;  // the message was already there: no wait to draw
        s.track = op.stream == 0 ? tracks.recv_waits : tracks.comm_waits;
        s.name = peer_name(m_recv_names, "recv from node ", op.peer);
        s.category = "recv";
        s.args[0] = {"bytes", op.bytes};
        s.args[1] = {"from_node", op.peer.value()};
        s.args[2] = {"op", op.op_index};
        break;
    case cluster::OpKind::send:
        s.track = tracks.sends;
        s.name = peer_name(m_send_names, "send to node ", op.peer);
        s.category = "send";
        s.instant = true;
        s.end = s.start;
        s.args[0] = {"bytes", op.bytes};
        s.args[1] = {"to_node", op.peer.value()};
        s.args[2] = {"transfer_ps", (op.end_ps - op.start_ps).count()};
        s.args[3] = {"op", op.op_index};
        break;
    }
    m_builder.add_detail(group, s);
}

void ClusterTimeline::channel(const cluster::ChannelSpan& c) {
    if (c.end_ps == c.start_ps) return;
    const std::uint32_t group = label_name(c.label);
    TimelineSpan s;
    s.track = channel_track(c.channel);
    s.name = group;
    s.category = "transfer";
    s.start = c.start_ps.count();
    s.end = c.end_ps.count();
    s.args[0] = {"bytes", c.bytes};
    s.args[1] = {"from_node", c.src.value()};
    s.args[2] = {"to_node", c.dst.value()};
    m_builder.add_detail(group, s);
}

Timeline ClusterTimeline::finish(Picoseconds end_ps) { return m_builder.finish(end_ps.count()); }

}  // namespace fastsim::run
