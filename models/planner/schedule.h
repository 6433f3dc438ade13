// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <vector>

#include "interconnect/collectives.h"
#include "interconnect/program.h"
#include "planner/planner.h"

namespace fastsim::planner {

/// The parts of a layer's work that a schedule's ops are labelled with.
enum class StepPart : std::uint8_t {
    forward,     ///< F conversions in, forward compute, Type II partial sums
    backward,    ///< E conversions in, backward-data, Type III partial sums, weight-gradient
    weight_sync  ///< Type I weight-gradient sums (received at the end of the step)
};
inline constexpr std::uint32_t kStepParts = 3;
[[nodiscard]] inline std::uint32_t step_label(std::size_t layer, StepPart part) {
    return static_cast<std::uint32_t>(layer) * kStepParts + static_cast<std::uint32_t>(part);
}

/// Compute picoseconds of layer `layer` on node `node`, per phase (forward, backward-data,
/// weight-gradient; 0 for a phase the layer does not have).
using ComputePicoseconds = std::function<std::array<std::uint64_t, 3>(std::size_t node, std::size_t layer)>;

/// The all-reduce algorithm for `bytes` over `ranks` (ascending node ids).
using ChooseAllReduce =
    std::function<interconnect::AllReduceAlgorithm(const std::vector<std::size_t>& ranks, std::uint64_t bytes)>;

/// Events of the schedule's Signal/WaitFor ops: layer l's weight gradient is ready on the main
/// stream, and its all-reduces are done on the comm stream.
[[nodiscard]] inline std::uint32_t gradient_ready_event(std::size_t layer) { return static_cast<std::uint32_t>(2 * layer); }
[[nodiscard]] inline std::uint32_t gradient_synced_event(std::size_t layer) {
    return static_cast<std::uint32_t>(2 * layer + 1);
}

/// The plan as one program per node (docs/planner.md, "Schedule"): forward of every layer in
/// order, then backward in reverse, each layer's exchanges at every group the node belongs
/// to, root first. An exchange at a group pairs side A's i-th node with side B's (i mod |B|)
/// (round robin over the larger side) and splits each side's bytes evenly over the pairs;
/// a pair sends both ways, then receives. Weight gradients are all-reduced over their replica
/// sets (weight_replica_sets) on the comm stream, each layer's once its weight-gradient phase
/// is done, with `choose`'s algorithm, so they overlap the rest of the backward pass; the main
/// stream waits for them all at the end.
std::vector<interconnect::NodeProgram> build_schedule(const LayerGraph& graph, const Plan& plan, std::size_t node_count,
                                                      const ComputePicoseconds& compute_ps, const ChooseAllReduce& choose);

}  // namespace fastsim::planner
