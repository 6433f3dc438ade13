// SPDX-License-Identifier: MIT
#pragma once

// Pipeline parallelism (docs/pipeline.md): the network cut into stages of consecutive layers,
// each stage on a contiguous range of nodes (topology order) and planned there by an
// intra-layer planner at the micro-batch; GPipe and 1F1B schedules of the micro-batches; the
// `pipeline` planner (cuts as planner.pipeline gives them) and `alpa` (an inter-operator DP over
// block ranges x sub-meshes).

#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <utility>
#include <vector>

#include "interconnect/program.h"
#include "planner/pipeline_plan.h"
#include "planner/plan_decisions.h"
#include "planner/planner.h"
#include "planner/schedule.h"

namespace fastsim::planner {

/// The order stage `stage` of `stages` runs its 2 x `microbatches` tasks in under `schedule`
/// (docs/pipeline.md, "Schedules"). GPipe: F0 … F(M-1), then B(M-1) … B0. 1F1B: w = min(P - s - 1,
/// M) warm-up forwards, then F(w+i), B(i) for i < M - w, then the remaining backwards in order.
std::vector<StageTask> stage_order(PipelineSchedule schedule, std::size_t stages, std::size_t stage,
                                   std::size_t microbatches);

/// The most micro-batches whose activations a stage holds at once under `order` (a forward
/// stashes them, the backward of the same micro-batch frees them).
std::size_t peak_in_flight(const std::vector<StageTask>& order);

/// The pipeline's step predicted node by node (docs/pipeline.md, "Predictions"): the stages'
/// tasks in stage_order, each a predict_step walk of the stage plan on clocks shared by every
/// node, in an order that respects the transfers; a transfer's pair messages leave at each
/// sender's clock when its task ends and queue at the exchange cost's bottleneck as an
/// exchange's do; every node finally waits for its all-reduces. Returns the last node's end.
double predict_pipeline(const PlanningInputs& inputs, const PipelinePlan& pipeline);

/// Block boundaries of `graph` (docs/pipeline.md, "Blocks"): from the left, each position b
/// (1 … L-1) where every tensor crossing from layers < b to layers >= b is the output of a layer
/// of the block b closes (at or after the boundary before it), so no edge spans two boundaries;
/// 0 and L are included.
std::vector<std::size_t> block_boundaries(const LayerGraph& graph);

/// One candidate stage of Alpa's DP: its latency (forward + backward of one micro-batch, summed
/// over its blocks; infinity if it cannot be planned) and the most micro-batches it can stash
/// and still fit in memory (0: not even one).
struct AlpaStageCost {
    double latency_s = std::numeric_limits<double>::infinity();
    std::size_t max_in_flight = 0;
};

/// The micro-batches a stage `from_end` stages from the end (1 = the last) stashes at most.
std::size_t alpa_in_flight(PipelineSchedule schedule, std::size_t microbatches, std::size_t from_end);

/// A contiguous range of nodes, positions in topology order.
struct MeshRange {
    std::size_t first = 0, end = 0;
};
struct AlpaChoice {
    std::vector<std::pair<std::size_t, std::size_t>> stages;  ///< (end block, mesh index) per stage, in order
    double objective_s = 0;                                   ///< infinity when nothing fits
};
using AlpaStageCostFn = std::function<AlpaStageCost(std::size_t first_block, std::size_t end_block, std::size_t mesh)>;

/// The inter-operator DP of Alpa (docs/pipeline.md, "Automatic search") over `blocks` blocks and
/// `meshes`: minimises the sum of stage latencies + (M - 1) x the largest, over every cut into
/// contiguous block ranges on consecutive sub-meshes covering every node (`stages` of them if
/// non-zero), each stage fitting its in-flight micro-batches (alpa_in_flight, by its place from
/// the end; when the count is free the DP keeps, per state, the Pareto front of stages to the
/// end and sum, so the check is exact). It enumerates t_max over the stage latencies,
/// ascending, solving a DP for each and stopping once (M - 1) x t_max alone exceeds the best.
/// `mesh_class` (empty, or one entry per mesh) groups meshes whose stages cost alike for every
/// block range: `cost` is asked for the first mesh of each class only, and the DP keeps one
/// entry per class, not per mesh.
AlpaChoice alpa_inter_op(std::size_t blocks, const std::vector<MeshRange>& meshes, std::size_t node_count,
                         std::size_t microbatches, std::size_t stages, PipelineSchedule schedule,
                         const AlpaStageCostFn& cost, const std::vector<std::size_t>& mesh_class = {});
/// The same answer by enumerating every cut (for tests; exponential).
AlpaChoice alpa_brute_force(std::size_t blocks, const std::vector<MeshRange>& meshes, std::size_t node_count,
                            std::size_t microbatches, std::size_t stages, PipelineSchedule schedule,
                            const AlpaStageCostFn& cost);

/// Whether no plan of the whole graph over every node of `in` at M = 1 can fit in memory:
/// each node holds at least its share of every layer's weights, their gradients and optimiser
/// state and its stashed input (a replica holds more), so together they are a lower bound on
/// the nodes' footprints summed; above every node's capacity summed, some node is over. False
/// when memory is not counted or some node type's capacity is not checked. alpa then does not
/// weigh the whole cluster as one stage.
bool whole_model_cannot_fit(const PlanningInputs& in);
/// The same bound for any cut into pipeline stages at `microbatch_size`: every stage stashes at
/// least one micro-batch, so every layer's weights, their gradients and optimiser state and its
/// stashed input at the micro-batch must fit in all the nodes together. alpa does not search a
/// micro-batch count this rules out.
bool model_cannot_fit(const PlanningInputs& in, std::uint64_t microbatch_size);

/// The pipeline planners' plans: `pipeline`'s stages as planner.pipeline gives them, and
/// `alpa`'s from its inter-operator DP (docs/pipeline.md); PlanError when planner.pipeline cannot
/// be met (a stage without nodes or layers, micro-batches that do not divide the batch, a stage
/// its intra planner cannot split). Either may not fit in memory (Plan::memory_shortfalls).
Plan plan_given_stages(const PlanningInputs& inputs, const PlannerOptions& options);
Plan plan_alpa(const PlanningInputs& inputs, const PlannerOptions& options);

/// The pipeline plan `given` makes (plan_decisions.h), its stages' splits evaluated by
/// evaluate_hierarchy, predicted as plan_pipeline predicts its own. PlanError naming the entry
/// ("pipeline.stages[1]") when the stages do not cover every layer and node once, in order, or
/// the micro-batches do not divide the batch. The memory is not checked here.
Plan evaluate_pipeline(const PlanningInputs& inputs, const PlannerOptions& options, const PipelineDecisions& given);

/// Appends to `programs` transfer `x`'s messages of micro-batch `microbatch` one way
/// (`forward`: from the earlier stage): its sends on the senders' main streams (`sending`), or
/// its receives on the receivers', then (with `conversions`) each receiver's conversion of
/// what it received (transfer_conversions) as a Compute.
void append_transfer(std::vector<interconnect::NodeProgram>& programs, const PipelinePlan& p, std::size_t x,
                     std::size_t microbatch, bool forward, bool sending, bool conversions);

/// The walk of stage `stage`'s `task` (its forward or backward of one micro-batch, in network
/// layers' labels); with `sync` (a backward only), its weights' all-reduces too.
StepWalk stage_task_walk(const PipelinePlan& p, std::size_t stage, StageTask task, bool sync,
                         std::uint64_t bucket_bytes);

/// The pipeline's step as one program per node: each stage's tasks in stage_order, each task the
/// stage plan's walk of one micro-batch, with the stage transfers before and after it; weights'
/// all-reduces on the last backward of each stage.
std::vector<interconnect::NodeProgram> build_pipeline_schedule(const Plan& plan, std::size_t node_count,
                                                               const ComputePicoseconds& compute_ps,
                                                               GradientSync& gradient_sync);

}  // namespace fastsim::planner
