// SPDX-License-Identifier: MIT
#pragma once

// Per-node programs of the cluster executor (models/cluster). Plain structs, no SystemC, so the
// planner and the collective generators can build programs without a kernel.

#include <cstddef>
#include <cstdint>
#include <variant>
#include <vector>

namespace fastsim::interconnect {

/// The node computes for `duration_ps`.
struct Compute {
    std::uint64_t duration_ps = 0;
    std::uint32_t label = 0;  ///< caller's attribution key (layer, phase); copied into the stats
};

/// Non-blocking send of `bytes` to node `peer`: the network reserves the route's channels at
/// the node's current time and the message is delivered at its arrival time. The node goes on
/// at once. (this node, peer, tag) must be unique among the Sends of one run.
struct Send {
    std::size_t peer = 0;
    std::uint64_t bytes = 0;
    std::uint64_t tag = 0;
    std::uint32_t label = 0;
};

/// Blocks until the message sent by node `peer` with `tag` to this node has arrived (at once if
/// it already has). A Recv posted before its Send waits for it. (peer, this node, tag) must be
/// unique among the Recvs of one run.
struct Recv {
    std::size_t peer = 0;
    std::uint64_t tag = 0;
    std::uint32_t label = 0;
};

using Op = std::variant<Compute, Send, Recv>;

/// The ops of one node, run in order.
struct NodeProgram {
    std::vector<Op> ops;
};

}  // namespace fastsim::interconnect
