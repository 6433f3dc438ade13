// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "cluster/cluster.h"
#include "costs/node_characterisation.h"
#include "costs/storage.h"
#include "interconnect/collective_cost.h"
#include "config/params.h"
#include "energy/energy.h"
#include "node/node_model.h"
#include "planner/layer_graph.h"
#include "planner/plan_decisions.h"
#include "planner/planner.h"
#include "planner/schedule.h"
#include "run/timeline.h"
#include "run/work.h"

namespace fastsim::run {

/// params.cluster.node_types as the cost models (models/costs) take them.
std::vector<costs::NodeType> cost_node_types(const config::Params& params);

/// The cluster as the planner sees it: node ids in order, cut first between the groups.
planner::ClusterView cluster_view(const config::ClusterParams& cluster);

/// The run's BFP storage format (bfp.group_size, bfp.exponent_bits).
costs::BfpStorage bfp_storage(const config::Params& params);

struct ClusterPlan {
    planner::LayerGraph graph;
    planner::Plan plan;
    double planning_s = 0;  ///< wall time of bisection + DP + predictions
};

/// What the planner measures on the cluster's models, memoised across plans: node compute on
/// the node model, and gradient all-reduces on the network model with the configured algorithm.
struct ClusterCosts {
    ClusterCosts(const config::Params& params, const planner::LayerGraph& graph);
    std::vector<costs::NodeType> types;  ///< cost_node_types(params)
    costs::NodeCharacterisation compute;
    interconnect::AllReduceChooser all_reduce;
    std::unique_ptr<planner::GradientSync> gradient_sync;  ///< the scheme the planner and the schedule use
    planner::PlanMemo plans;  ///< every plan plan_cluster made with these costs, by its options
};

/// cluster.gradient_sync as the planner and the schedule use it (docs/compression.md): a
/// SchemeSync (by default the plain all-reduce) whose compression work each node times on its
/// own clock, converter lanes, DRAM and arrays (compression_seconds).
std::unique_ptr<planner::GradientSync> make_gradient_sync(const config::Params& params,
                                                          interconnect::AllReduceChooser& chooser,
                                                          const config::GradientSyncParams& sync);
/// The same with the compression work timed by `work_seconds` (fastsim train's workers).
std::unique_ptr<planner::GradientSync> make_gradient_sync(interconnect::AllReduceChooser& chooser,
                                                          const config::GradientSyncParams& sync,
                                                          planner::CompressionSeconds work_seconds);

/// Plans costs.compute.graph() (params.workload) over params.cluster with `options`; reports
/// the fraction of its plans made (plans_made in run/work.h) to `progress`. With `given`, plans
/// nothing: evaluates the given plan (planner::evaluate_plan) with its own options instead.
ClusterPlan plan_cluster(const config::Params& params, const planner::PlannerOptions& options, ClusterCosts& costs,
                         const WorkProgress& progress = {}, const planner::PlanDecisions* given = nullptr);

/// The gradient all-reduces the schedule of `planned` runs, by algorithm choice and span
/// (AllReduceUse), without building it: each replica set's synchronisation lowered alone, as the
/// schedule lowers it, while the chooser records.
std::vector<interconnect::AllReduceUse> planned_all_reduces(const ClusterPlan& planned, ClusterCosts& costs,
                                                            std::size_t node_count);

struct NodeReport {
    double compute_s = 0, wait_s = 0, idle_s = 0;
    /// Of compute_s, the vector unit's phases: the carried vector-unit layers' passes and the
    /// weight updates (their characterised cycles at the node's clock); the rest is the array's.
    double vector_s = 0;
    node::PhaseCounters counters;    ///< every phase of every layer
    energy::EnergyBreakdown energy;  ///< leakage over the whole step
};

/// A stage's work on one micro-batch one way, or its weight updates, in the simulated step: from
/// the first start to the last end of its ops (computes, waits, sends) on any of its nodes.
struct StageSpan {
    planner::StepPart part = planner::StepPart::forward;  ///< forward, backward or weight_update
    std::size_t microbatch = 0;                           ///< 0 for the weight updates
    double start_s = 0, end_s = 0;
};

/// One pipeline stage in the simulated step (docs/pipeline.md, "Reports").
struct StageReport {
    double busy_s = 0;  ///< the stage's mean node: compute and waits under its layers' forward and backward labels
    double idle_s = 0;  ///< the step minus busy_s: the bubble, transfers and the final all-reduces
    std::vector<StageSpan> spans{};  ///< its timeline, by start time
};

/// Each part's timeline (StageReport::spans) from the simulated step's labels: part_of[l] is
/// the part (0 … parts - 1) of network layer l, and labels.layers the network's layer count.
std::vector<std::vector<StageSpan>> stage_spans(const cluster::ClusterResult& simulated,
                                                const planner::StepLabels& labels,
                                                const std::vector<std::size_t>& part_of, std::size_t parts);

struct ClusterStepResult {
    ClusterPlan planned;
    cluster::ClusterResult simulated;
    double step_s = 0;  ///< simulated end to end
    std::vector<NodeReport> nodes;
    double link_energy_pj = 0;
    energy::EnergyBreakdown compute_energy;  ///< summed over nodes
    std::vector<double> layer_simulated_s;   ///< mean node's compute + waits under each layer's labels
    double simulation_s = 0;                 ///< wall time of building and running the schedule
    std::size_t ops = 0;
    std::optional<Timeline> timeline;  ///< when asked for: ops and channel reservations, in ps
    std::vector<StageReport> stages;   ///< per part of the plan (planner::for_each_part): a pipeline's stages, else one
    double bubble_fraction = 0;        ///< 1 - sum of part busy / (parts x step): a pipeline's bubble
    std::uint64_t sync_bytes = 0;      ///< gradient synchronisation sent, every node (compressed)
    std::uint64_t sync_bytes_uncompressed = 0;  ///< the same algorithm with fp32 gradients
    double exposed_sync_s =
        0;  ///< of the step, the part after every main stream's own work: synchronisation not hidden
    double staleness_overlap_s = 0;    ///< with a delayed update: how much shorter the step is than without
    double compression_energy_pj = 0;  ///< every node's compression work
    /// The schedule's gradient all-reduces by algorithm choice (per dimension) and span.
    std::vector<interconnect::AllReduceUse> all_reduces;
    /// With a sparse scheme (topk, dgc, threshold): the gradient sync jobs (buckets, or layers)
    /// whose all-gather over p ranks would carry more than the dense gradient (p x density > 1),
    /// of sparse_gathers. `best` sends those as a dense all-reduce where that is faster (then
    /// counted in all_reduces).
    std::size_t sparse_gathers_over_dense = 0;
    std::size_t sparse_gathers = 0;
    /// All-reduces over more than cluster.gradient_sync.message_level_max_ranks ranks, timed by
    /// the flow model (interconnect::FlowCollective): no messages, so neither the links' traffic
    /// and energy nor their utilisation count them.
    std::size_t flow_level_all_reduces = 0;
    /// A pipeline's step simulated at stage level (cluster.pipeline_simulation; docs/pipeline.md,
    /// "Stage-level simulation"): its pieces run alone and composed. `ops` still counts the
    /// whole step's; `piece_ops` the ops simulated.
    bool stage_level = false;
    std::uint64_t piece_ops = 0;
};

/// Plans, builds the schedule and runs it on the SystemC cluster (one elaboration: call once
/// per sc_simcontext). With `timeline`, also records the run's timeline (run/cluster_timeline.h).
/// `progress` hears 0.5 once planned, 0.6 once the schedule is built and 1 at the end. With
/// `given`, runs that plan instead of planning (plan_cluster).
ClusterStepResult run_cluster_step(const config::Params& params, const planner::PlannerOptions& options,
                                   const std::optional<TimelineRequest>& timeline = std::nullopt,
                                   const WorkProgress& progress = {}, const planner::PlanDecisions* given = nullptr);
/// The same with `costs` made for these `params` before (ClusterCosts(params, graph)), and kept:
/// several runs of one config share its node characterisation and the plans made. Costs made
/// for other params must not be given: their plans are found again by the options alone.
ClusterStepResult run_cluster_step(const config::Params& params, const planner::PlannerOptions& options,
                                   ClusterCosts& costs, const std::optional<TimelineRequest>& timeline = std::nullopt,
                                   const WorkProgress& progress = {}, const planner::PlanDecisions* given = nullptr);

/// run_cluster_step under a SystemC kernel of its own, created and destroyed around the run,
/// so one process can simulate several plans (fastsim compare --simulate).
ClusterStepResult run_cluster_step_in_fresh_kernel(const config::Params& params,
                                                   const planner::PlannerOptions& options);
ClusterStepResult run_cluster_step_in_fresh_kernel(const config::Params& params, const planner::PlannerOptions& options,
                                                   ClusterCosts& costs);

}  // namespace fastsim::run
