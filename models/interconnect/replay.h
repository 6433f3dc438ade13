// SPDX-License-Identifier: MIT
#pragma once

// A plain C++ replay of message-only programs on the network: the cluster
// executor's semantics (nodes run in time order, ties to the lower node id; the network's hops
// booked as heads reach them, after every node at that time has run; Recv waiting for the
// arrival) without SystemC, for timing one collective in isolation.

#include <cstdint>
#include <vector>

#include "common/units.h"
#include "interconnect/network.h"
#include "interconnect/program.h"
#include "interconnect/topology.h"

namespace fastsim::interconnect {

/// The time until the last of `programs`' ops completes, every program starting at 0 on a
/// `network` reset first. Program i (and a peer i in its ops) is node node_of[i] of the
/// network's topology. Only the main streams' Send, Recv and Compute (a delay) ops are allowed
/// (std::invalid_argument otherwise, or for a Recv that never completes). With `program_end`,
/// also each program's own completion time (0 for an empty one). With `reset` false, the
/// network keeps the reservations of earlier replays (programs then start at an absolute 0).
Picoseconds replay_messages(Network& network, const std::vector<NodeProgram>& programs,
                            const std::vector<NodeId>& node_of, std::vector<Picoseconds>* program_end = nullptr,
                            bool reset = true);

}  // namespace fastsim::interconnect
