// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "cluster/cluster_recorder.h"
#include "common/units.h"
#include "interconnect/network.h"
#include "interconnect/program.h"
#include "interconnect/topology.h"

namespace fastsim::cluster {

/// What one compute node did.
struct NodeStats {
    Picoseconds compute_ps{
        0};                    ///< sum of its main stream's Compute durations (on the comm stream a Compute is a delay)
    Picoseconds wait_ps{0};    ///< main stream blocked in Recv or WaitFor (from posting to arrival)
    Picoseconds finish_ps{0};  ///< when its last op finished, on either stream
    Picoseconds main_finish_ps{0};  ///< when its main stream finished
    Picoseconds comm_finish_ps{0};  ///< when its comm stream finished (0 if it has no ops)
    Picoseconds main_event_wait_ps{
        0};  ///< its main stream blocked in WaitFor (the step's final waits for its all-reduces)
    Picoseconds comm_event_wait_ps{0};  ///< its comm stream blocked in WaitFor (for gradients to be ready)
    std::uint64_t send_count = 0;
    std::uint64_t recv_count = 0;
    std::uint64_t bytes_sent = 0;
    std::uint64_t bytes_received = 0;
};

/// The ops carrying one label, over all nodes and streams. An op's span: Compute [start, end];
/// Send [posted, arrival at the peer]; Recv, WaitFor [posted, completed]; Signal [t, t].
struct LabelStats {
    Picoseconds first_start_ps{0};  ///< earliest span start
    Picoseconds last_end_ps{0};     ///< latest span end
    Picoseconds compute_ps{0};      ///< main-stream Compute durations summed over nodes
    Picoseconds wait_ps{0};         ///< main-stream Recv and WaitFor blocking summed over nodes
    std::uint64_t bytes_sent = 0;
    std::uint64_t op_count = 0;
};

struct ClusterResult {
    Picoseconds end_ps{0};                             ///< the last op finished anywhere
    std::vector<NodeStats> nodes;                      ///< by node id
    std::vector<interconnect::ChannelStats> channels;  ///< by channel id (Topology::channels())
    std::map<std::uint32_t, LabelStats> labels;        ///< by label, for the labels used
};

/// Runs one program per compute node (programs.size() == topology.node_count()) on the
/// topology, every stream starting at t = 0, and returns the stats. One SystemC module with an
/// SC_THREAD per node stream (the comm stream only if it has ops); messages travel over an
/// interconnect::Network (see network.h), whose hops one network thread books in head order up
/// to the earliest time a stream could still post (docs/interconnect.md, "The executor"). Consecutive Computes of a stream are
/// accumulated locally and the thread synchronises with SystemC time before each Send (posted at
/// that time); a WaitFor resumes at the Signal's time.
///
/// Caller contract: elaborates and calls sc_start(), so call it once per sc_simcontext (once
/// per process, or under a fresh context as tests/support/systemc_fixture.h does), and not from
/// inside a running simulation. The time resolution must be 1 ps or finer.
///
/// Throws std::invalid_argument for a bad program (peer out of range, two Sends or two Recvs
/// with the same (src, dst, tag), an event signalled twice), and std::runtime_error after the
/// run if a stream did not finish (deadlock: names node, stream, op index and the message or
/// event) or a message was never received.
///
/// With `recorder`, also reports every op and every channel reservation to it as they happen
/// (cluster_recorder.h), spans of zero length included.
ClusterResult run_cluster(const interconnect::Topology& topology,
                          const std::vector<interconnect::NodeProgram>& programs, ClusterRecorder* recorder = nullptr);

}  // namespace fastsim::cluster
