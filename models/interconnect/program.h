// SPDX-License-Identifier: MIT
#pragma once

// Per-node programs of the cluster executor (models/cluster). Plain structs, no SystemC, so the
// planner and the collective generators can build programs without a kernel.

#include <cstddef>
#include <cstdint>
#include <variant>
#include <vector>

#include "common/units.h"

namespace fastsim::interconnect {

/// The node computes for `duration_ps`.
struct Compute {
    Picoseconds duration_ps{0};
    std::uint32_t label = 0;  ///< caller's attribution key (layer, phase); copied into the stats
};

/// Non-blocking send of `bytes` to node `peer`: the network reserves the route's channels at
/// the node's current time and the message is delivered at its arrival time. The node goes on
/// at once. (this node, peer, tag) must be unique among the Sends of one run.
struct Send {
    NodeId peer;
    std::uint64_t bytes = 0;
    std::uint64_t tag = 0;
    std::uint32_t label = 0;
};

/// Blocks until the message sent by node `peer` with `tag` to this node has arrived (at once if
/// it already has). A Recv posted before its Send waits for it. (peer, this node, tag) must be
/// unique among the Recvs of one run.
struct Recv {
    NodeId peer;
    std::uint64_t tag = 0;
    std::uint32_t label = 0;
};

/// Marks the node-local event `event` as happened at the stream's current time (Signal) or
/// blocks the stream until it has (WaitFor; at once if it already has). Orders a node's two
/// streams: e.g. a gradient all-reduce on the comm stream waits for the weight-gradient compute
/// on the main stream. Each event of a node is signalled exactly once.
struct Signal {
    std::uint32_t event = 0;
    std::uint32_t label = 0;
};
struct WaitFor {
    std::uint32_t event = 0;
    std::uint32_t label = 0;
};

/// A collective timed by the flow model instead of by its messages: the member's stream blocks
/// until every one of the `ranks` members (each with an op of this `tag`, the tag unique to the
/// collective) has reached it, and all go on `duration_ps` after the last arrived. It books no
/// channel. For collectives whose message-level replay costs too much (SchemeSync lowers an
/// all-reduce over more than its message_level_max_ranks so).
struct FlowCollective {
    std::uint64_t tag = 0;
    std::uint32_t ranks = 0;
    Picoseconds duration_ps{0};
    std::uint32_t label = 0;
};

using Op = std::variant<Compute, Send, Recv, Signal, WaitFor, FlowCollective>;

/// What identifies a message: (src, dst, tag), whichever streams send and receive it. With its
/// hash, the key of the executor's and the replay's message tables.
struct MessageKey {
    NodeId src, dst;
    std::uint64_t tag;
    bool operator==(const MessageKey& o) const { return src == o.src && dst == o.dst && tag == o.tag; }
};

struct MessageKeyHash {
    std::size_t operator()(const MessageKey& k) const {
        std::uint64_t h = k.tag * 0x9E3779B97F4A7C15ull;
        h ^= k.src.value() + 0x632BE59BD9B4E019ull + (h << 6) + (h >> 2);
        h ^= k.dst.value() * 0xC2B2AE3D27D4EB4Full + (h << 6) + (h >> 2);
        return static_cast<std::size_t>(h);
    }
};

/// The ops of one node: two streams that run concurrently, each in order. `ops` is the main
/// stream (compute and the exchanges on the critical path); `comm_ops` a second stream for
/// communication that overlaps it (gradient all-reduces). Only the main stream's blocking
/// counts as the node waiting, and only its Computes as the node computing: a Compute on the
/// comm stream is a delay of the communication (the latency of merged collective steps).
struct NodeProgram {
    std::vector<Op> ops;
    std::vector<Op> comm_ops;
};

/// Every op of `programs`, both streams.
inline std::uint64_t op_count(const std::vector<NodeProgram>& programs) {
    std::uint64_t ops = 0;
    for (const NodeProgram& p : programs) ops += p.ops.size() + p.comm_ops.size();
    return ops;
}

/// Which of a node's streams an op belongs to.
enum class Stream : std::uint8_t { main = 0, comm = 1 };
inline constexpr std::size_t kStreams = 2;

}  // namespace fastsim::interconnect
