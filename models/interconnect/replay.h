// SPDX-License-Identifier: MIT
#pragma once

// A plain C++ replay of programs on the network: the cluster executor's semantics (each node's
// main and comm streams run in time order, ties to the lower node id, main stream first; the
// network's hops booked as heads reach them, after every stream at that time has run; Recv
// waiting for the arrival, WaitFor for the node's Signal) without SystemC: for timing a
// collective alone, and for the planner's prediction of a whole step.

#include <cstdint>
#include <vector>

#include "common/units.h"
#include "interconnect/network.h"
#include "interconnect/program.h"
#include "interconnect/topology.h"

namespace fastsim::interconnect {

/// The end of a replay that gave up before it (replay_messages' give_up_after).
inline constexpr Picoseconds kNeverPs{~std::uint64_t{0}};

/// The time until the last of `programs`' ops completes, every program starting at 0 on a
/// `network` reset first. Program i (and a peer i in its ops) is node node_of[i] of the
/// network's topology. Both streams run, a Compute on either only a delay (the executor's
/// energy and busy times are not replayed); std::invalid_argument for a Recv or WaitFor that
/// never completes. With `program_end`, also each program's own completion time, the later of
/// its streams' (0 for an empty one). With `reset` false, the network keeps the reservations of
/// earlier replays (programs then start at an absolute 0). With `give_up_after`, the replay
/// stops once nothing is left to happen at or before it while some program is not done: those
/// programs (and the returned time) end at kNeverPs, whether they would wait forever or not, and
/// the network is left mid-replay (reset it before reuse).
Picoseconds replay_messages(Network& network, const std::vector<NodeProgram>& programs,
                            const std::vector<NodeId>& node_of, std::vector<Picoseconds>* program_end = nullptr,
                            bool reset = true, Picoseconds give_up_after = kNeverPs);

}  // namespace fastsim::interconnect
