// SPDX-License-Identifier: MIT
#pragma once

// A pipeline plan's figures (docs/pipeline.md, "Plan"): its stages, their transfers and its
// predictions, as the pipeline planners make them and reports read them (planner::describe).

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "planner/layer_graph.h"
#include "planner/planner.h"

namespace fastsim::planner {

/// One pass of one micro-batch through a stage.
struct StageTask {
    bool forward = true;
    std::size_t microbatch = 0;
};

/// One pipeline stage: network layers [first_layer, end_layer) on `nodes`.
struct PipelineStage {
    std::size_t first_layer = 0, end_layer = 0;
    std::vector<std::size_t> nodes;  ///< node ids, topology order
    LayerGraph graph;                ///< the stage's layers at the micro-batch; edges from earlier stages dropped
    Plan plan;                       ///< the intra planner's plan of `graph` over `nodes` (node ids of the cluster)
    double forward_s = 0;            ///< one micro-batch's forward on the stage, predicted (predict_step)
    double backward_s = 0;           ///< one micro-batch's backward, its all-reduces left out
    double sync_tail_s = 0;          ///< the all-reduces' time exposed after the last backward
    std::size_t in_flight = 0;       ///< micro-batches stashed at once, at most (peak_in_flight)
    double memory_bytes = 0;         ///< the stage's fullest node: its footprint with in_flight stashes
    double busy_s = 0;               ///< predicted: microbatches x (forward_s + backward_s)
};

/// Boundary tensors of one micro-batch from stage `from` to a later stage `to`: activations
/// forward, their errors back (docs/pipeline.md, "Stage transfers").
struct StageTransfer {
    std::size_t from = 0, to = 0;
    double forward_bytes = 0, backward_bytes = 0;
    ExchangeCost cost;  ///< between the two stages' nodes (side A = from, side B = to)
};

struct PipelinePlan {
    PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
    std::size_t microbatches = 1;
    std::uint64_t microbatch_size = 0;  ///< samples per micro-batch
    std::vector<PipelineStage> stages;
    std::vector<StageTransfer> transfers;
    double step_s = 0;           ///< predicted (predict_pipeline, then replay_step's where replayed)
    double bubble_fraction = 0;  ///< 1 - sum of stage busy time / (stages x step): set_step's
    double objective_s = 0;      ///< alpa: its DP's objective, sum of stage latencies + (M - 1) x the slowest

    /// Sets step_s and the bubble fraction it leaves (stages' busy_s set first).
    void set_step(double seconds) {
        step_s = seconds;
        double busy = 0;
        for (const PipelineStage& s : stages) busy += s.busy_s;
        bubble_fraction = step_s > 0 ? 1 - busy / (static_cast<double>(stages.size()) * step_s) : 0;
    }
};

/// A transfer's messages (sender, receiver) one way (`forward`: from the earlier stage), round
/// robin over the larger stage: the schedule sends them and the prediction times them.
std::vector<std::pair<std::size_t, std::size_t>> transfer_pairs(const PipelinePlan& plan, const StageTransfer& transfer,
                                                                bool forward);

/// Seconds each receiver of `transfer`'s one micro-batch (`forward`, or its gradients back)
/// spends converting what it received into its own format (StageTransfer::cost's into_b[0]
/// forward, into_a[1] backward; docs/planner.md, "Element widths"), per receiving node id, summed
/// over its pairs, in first-seen order; empty where no receiver converts. The schedule computes
/// them after the transfer's receives, and predict_pipeline charges the same.
std::vector<std::pair<std::size_t, double>> transfer_conversions(const PipelinePlan& plan,
                                                                 const StageTransfer& transfer, bool forward);

}  // namespace fastsim::planner
