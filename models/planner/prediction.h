// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <vector>

#include "planner/planner.h"
#include "planner/schedule.h"

namespace fastsim::planner {

/// The planner's prediction of one training step under a plan (docs/planner.md, "Predictions").
struct StepPrediction {
    double step_s = 0;            ///< the last node's end
    std::vector<double> layer_s;  ///< per layer: the mean node's compute + main-stream waits under its labels
    std::vector<double> sync_s;   ///< per layer: its slowest gradient all-reduce, whole (exposed or not)
    std::vector<PhaseSeconds> compute_s;  ///< per layer: the slowest node's seconds of each phase
};

/// Walks the plan's schedule (walk_step) with two clocks per node, as the cluster runs it:
/// computes advance a node's main clock by its characterised seconds at its dims; an exchange
/// at a group delivers each pair's message at the sender's clock + the group's exchange cost
/// (latency + the receiving side's bytes x seconds per byte), and the receiver goes on at the
/// later of its clock and the arrival; a layer's all-reduces start on the comm clocks once
/// every member's weight gradient is ready and its comm clock is free, and take
/// `gradient_sync`'s seconds; each node's main clock finally waits for its comm clock. Every
/// clock starts at 0; `walk` chooses the part of the step (a pipeline stage's forward or
/// backward of one micro-batch). Only the plan's nodes (plan.groups[0].nodes) take part.
StepPrediction predict_step(const LayerGraph& graph, const Plan& plan, const std::vector<std::size_t>& node_type,
                            const ComputeModel& compute, GradientSync& gradient_sync, const StepWalk& walk = {});

}  // namespace fastsim::planner
