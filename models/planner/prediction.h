// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <limits>
#include <memory>
#include <utility>
#include <vector>

#include "planner/planner.h"
#include "planner/schedule.h"

namespace fastsim::planner {

/// The planner's prediction of one training step under a plan (docs/planner.md, "Predictions").
struct StepPrediction {
    double step_s = 0;                    ///< the last node's end
    std::vector<double> layer_s;          ///< per layer: the mean node's compute + main-stream waits under its labels
    std::vector<double> sync_s;           ///< per layer: its slowest gradient all-reduce, whole (exposed or not)
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
/// Per-node clocks (seconds) that walks advance: the main stream, the comm stream, the clock
/// when the node last sent, and the all-reduces each node's main stream waits for at the end.
struct NodeClocks {
    explicit NodeClocks(std::size_t nodes);
    std::vector<double> main, comm, sent;
    std::vector<std::vector<std::pair<LayerId, double>>> synced;
    /// Messages (sender, receiver) sent at sent_at[i], queued at the bottleneck as an exchange's
    /// are (predict_step): `busiest_s` for all of them together on a bottleneck carrying the
    /// fraction `share` of them, then `latency_s`; each receiver's main clock waits for its arrival.
    /// `bottleneck_free` (kept by the caller per route and direction) holds when each bottleneck
    /// is next free, so repeated deliveries over the same links queue behind earlier ones.
    void deliver(const std::vector<std::pair<std::size_t, std::size_t>>& pairs, const std::vector<double>& sent_at,
                 double busiest_s, double share, double latency_s, std::vector<double>& bottleneck_free);
};

/// The step under a delayed update of `staleness` D >= 1 (docs/compression.md, "Delayed
/// updates"): a step's synchronisation may end up to D steps later, so in the steady state a
/// step lasts the longest of the main streams' end, the busiest link's busy time, and the last
/// synchronisation's end spread over D + 1 steps.
double stale_step_s(const NodeClocks& clocks, const std::vector<std::size_t>& nodes, std::size_t staleness,
                    double busiest_link_s);

/// predict_step over clocks shared with other plans' walks (a pipeline's stages): each walk
/// advances the plan's nodes' clocks from where they are; finish() applies the final waits for
/// the all-reduces walked.
class ClockedPredictor {
public:
    ClockedPredictor(const LayerGraph& graph, const Plan& plan, const std::vector<std::size_t>& node_type,
                     const ComputeModel& compute, GradientSync& gradient_sync, NodeClocks& clocks);
    ~ClockedPredictor();
    ClockedPredictor(ClockedPredictor&&) noexcept;
    void walk(const StepWalk& walk);
    void finish();

private:
    struct Impl;
    const LayerGraph& m_graph;
    const Plan& m_plan;
    std::uint64_t m_bucket_bytes;  ///< the sync's gradient buckets, for every walk
    std::unique_ptr<Impl> m_impl;
};

/// With `give_up_after_s`, a step whose synchronisations would end after it may be predicted
/// only that far and its step_s reported as +infinity (their replay stops there; not under a
/// delayed update, whose step may end before its synchronisations do).
StepPrediction predict_step(const LayerGraph& graph, const Plan& plan, const std::vector<std::size_t>& node_type,
                            const ComputeModel& compute, GradientSync& gradient_sync, const StepWalk& walk = {},
                            double give_up_after_s = std::numeric_limits<double>::infinity());

}  // namespace fastsim::planner
