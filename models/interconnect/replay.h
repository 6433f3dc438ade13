// SPDX-License-Identifier: MIT
#pragma once

// A plain C++ replay of message-only programs on the loosely-timed network: the cluster
// executor's semantics (interconnect::Network reservations in time order, Recv waiting for the
// arrival) without SystemC, for timing one collective in isolation. Ties at equal times go to
// the lower node id.

#include <cstdint>
#include <vector>

#include "interconnect/program.h"
#include "interconnect/topology.h"

namespace fastsim::interconnect {

/// Picoseconds until the last of `programs`' ops completes, every node starting at 0. Only the
/// main streams' Send and Recv ops are allowed (std::invalid_argument otherwise, or for a Recv
/// that never completes).
std::uint64_t replay_messages(const Topology& topology, const std::vector<NodeProgram>& programs);

}  // namespace fastsim::interconnect
