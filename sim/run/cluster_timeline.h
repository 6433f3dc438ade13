// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <cstdint>
#include <vector>

#include "cluster/cluster_recorder.h"
#include "common/units.h"
#include "config/params.h"
#include "planner/layer_graph.h"
#include "run/timeline.h"

namespace fastsim::run {

/// The timeline of a cluster run, ticks in ps, recorded as the executor runs: per node a
/// process "node N (TYPE)" with tracks compute (Compute ops, named by schedule label), recv
/// waits (Recvs that blocked) and sends (instants); a process "links" with a track per directed
/// channel that carried a message, each reservation a span with its bytes. Detailed spans are
/// grouped by schedule label (layer and forward / backward / weight sync / stage transfer, and
/// the micro-batch of a pipeline: "fc3 forward mb 2").
class ClusterTimeline : public cluster::ClusterRecorder {
public:
    /// Keeps references to `cluster` and `graph`; `microbatches` > 1 names each span's micro-batch.
    ClusterTimeline(const config::ClusterParams& cluster, const planner::LayerGraph& graph,
                    const TimelineRequest& request, std::size_t microbatches = 1);

    void op(const cluster::OpSpan& span) override;
    void channel(const cluster::ChannelSpan& span) override;

    /// The timeline of a run that ended at `end_ps`. The ClusterTimeline is spent afterwards.
    Timeline finish(Picoseconds end_ps);

private:
    std::uint32_t label_name(std::uint32_t label);
    std::uint32_t channel_track(interconnect::ChannelId channel);
    std::uint32_t peer_name(std::vector<std::uint32_t>& cache, const char* prefix, NodeId peer);
    [[nodiscard]] std::string vertex_name(std::size_t vertex) const;

    static constexpr std::uint32_t kNone = 0xffffffffu;
    struct NodeTracks {
        std::uint32_t compute = 0, recv_waits = 0, sends = 0, comm_waits = 0;
    };

    const config::ClusterParams& m_cluster;
    const planner::LayerGraph& m_graph;
    std::size_t m_microbatches = 1;
    TimelineBuilder m_builder;
    std::vector<NodeTracks> m_node_tracks;
    std::uint32_t m_links_process = 0;
    std::vector<std::uint32_t> m_channel_tracks;            ///< by channel id, kNone until used
    std::vector<std::uint32_t> m_label_names;               ///< by label, kNone until used
    std::vector<std::uint32_t> m_recv_names, m_send_names;  ///< by peer, kNone until used
};

}  // namespace fastsim::run
