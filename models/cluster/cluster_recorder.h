// SPDX-License-Identifier: MIT
#pragma once

// The optional timing record of a cluster run, for timelines. Contract: run_cluster calls a
// recorder only when one is given, once per op as it completes (a Send when its message has
// arrived, which may be after the stream's next ops) and once per channel a message holds; per
// node stream in program order but for Sends, per channel in time order (spans never overlap there).

#include <cstddef>
#include <cstdint>

#include "common/units.h"
#include "interconnect/topology.h"

namespace fastsim::cluster {

enum class OpKind : std::uint8_t { compute, send, recv, signal, wait };

/// One op of a node's program as it ran. Compute [start, end]; Send [posted, arrival at the
/// peer]; Recv, WaitFor [posted, completed] (end - start is the wait); Signal [t, t]; a
/// FlowCollective as a `wait` [reached, every member done], its tag the collective's.
struct OpSpan {
    NodeId node;
    std::size_t op_index = 0;  ///< position in its stream of the node's program
    OpKind kind = OpKind::compute;
    std::uint32_t label = 0;  ///< the op's label as the program gave it
    NodeId peer;              ///< Send: destination; Recv: source; otherwise 0
    std::uint64_t bytes = 0;  ///< Send, Recv: the message's bytes
    std::uint64_t tag = 0;    ///< Send, Recv: the message's tag; Signal, WaitFor: the event
    Picoseconds start_ps{0};
    Picoseconds end_ps{0};
    std::uint8_t stream = 0;  ///< 0 = the main stream, 1 = the comm stream (interconnect::Stream)
};

/// A message holding one directed channel of its route during [start_ps, end_ps).
struct ChannelSpan {
    interconnect::ChannelId channel = 0;
    NodeId src, dst;  ///< the message's end nodes
    std::uint64_t bytes = 0;
    std::uint64_t tag = 0;
    std::uint32_t label = 0;  ///< the Send's label
    Picoseconds start_ps{0};
    Picoseconds end_ps{0};
};

class ClusterRecorder {
public:
    virtual ~ClusterRecorder() = default;
    virtual void op(const OpSpan& span) = 0;
    virtual void channel(const ChannelSpan& span) = 0;
};

}  // namespace fastsim::cluster
