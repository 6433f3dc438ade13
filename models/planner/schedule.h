// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <vector>

#include "common/units.h"
#include "interconnect/collectives.h"
#include "interconnect/program.h"
#include "planner/planner.h"
#include "planner/replicas.h"

namespace fastsim::planner {

/// The parts of a layer's work that a schedule's ops are labelled with.
enum class StepPart : std::uint8_t {
    forward,     ///< F conversions in, forward compute, Type II partial sums
    backward,    ///< E conversions in, backward-data, Type III partial sums, weight-gradient
    weight_sync  ///< weight-gradient all-reduces (on the comm stream; waited for at the end of the step)
};
inline constexpr std::uint32_t kStepParts = 3;
[[nodiscard]] inline std::uint32_t step_label(LayerId layer, StepPart part) {
    return static_cast<std::uint32_t>(layer.value()) * kStepParts + static_cast<std::uint32_t>(part);
}
/// The layer of a step_label.
[[nodiscard]] inline LayerId step_layer(std::uint32_t label) { return LayerId(label / kStepParts); }

/// Compute time of layer `layer` on node `node`, per phase (forward, backward-data,
/// weight-gradient; 0 for a phase the layer does not have).
using ComputePicoseconds = std::function<std::array<Picoseconds, 3>(NodeId node, LayerId layer)>;

/// Events of the schedule's Signal/WaitFor ops: layer l's weight gradient is ready on the main
/// stream, and its all-reduces are done on the comm stream.
[[nodiscard]] inline std::uint32_t gradient_ready_event(LayerId layer) { return static_cast<std::uint32_t>(2 * layer.value()); }
[[nodiscard]] inline std::uint32_t gradient_synced_event(LayerId layer) {
    return static_cast<std::uint32_t>(2 * layer.value() + 1);
}

/// The order of a training step under a plan (docs/planner.md, "Schedule and cluster run"), as
/// calls to a visitor: build_schedule turns them into programs, predict_step into times. Forward
/// of every layer in order, then backward in reverse, each layer's exchanges at every non-leaf
/// group, root first.
class StepVisitor {
public:
    virtual ~StepVisitor() = default;
    /// An exchange at group g: bytes.to_a into side A, bytes.to_b into side B (never empty).
    virtual void exchange(std::size_t group, const SideVolumes& bytes, std::uint32_t label) = 0;
    /// Every node computes its `phase` (0 forward, 1 backward-data, 2 weight-gradient) of `layer`.
    virtual void compute(LayerId layer, std::size_t phase, std::uint32_t label) = 0;
    /// Layer l's weight gradients are ready: all-reduce each of `sets` (non-empty).
    virtual void all_reduce(LayerId layer, const std::vector<ReplicaSet>& sets, std::uint32_t label) = 0;
};
void walk_step(const LayerGraph& graph, const Plan& plan, StepVisitor& visitor);

/// Bytes of one replica set's all-reduce: its elements at the plan's weight-gradient width.
std::uint64_t gradient_bytes(const Plan& plan, const ReplicaSet& set);

/// The plan as one program per node (docs/planner.md, "Schedule"): forward of every layer in
/// order, then backward in reverse, each layer's exchanges at every group the node belongs
/// to, root first. An exchange at a group pairs side A's i-th node with side B's (i mod |B|)
/// (round robin over the larger side) and splits each side's bytes evenly over the pairs;
/// a pair sends both ways, then receives. Weight gradients are synchronised over their replica
/// sets (weight_replica_sets) on the comm stream, each layer's once its weight-gradient phase
/// is done, as `gradient_sync` lowers them, so they overlap the rest of the backward pass; the
/// main stream waits for them all at the end.
std::vector<interconnect::NodeProgram> build_schedule(const LayerGraph& graph, const Plan& plan, std::size_t node_count,
                                                      const ComputePicoseconds& compute_ps, GradientSync& gradient_sync);

}  // namespace fastsim::planner
