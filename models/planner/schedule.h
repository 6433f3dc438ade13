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
    forward,         ///< F conversions in, forward compute, Type II partial sums, statistics
    backward,        ///< E conversions in, backward-data, Type III partial sums, statistics, weight-gradient
    weight_sync,     ///< weight-gradient all-reduces (on the comm stream; waited for at the end of the step)
    stage_transfer,  ///< a pipeline stage's boundary tensors to or from the next stage (receives and sends)
    weight_update    ///< the optimiser's update of the layer's weights, at the end of the step
};
inline constexpr std::uint32_t kStepParts = 5;

/// The labels of a step's ops: one per (micro-batch, layer of the network, part),
/// label = (microbatch x layers + layer) x kStepParts + part. A step without micro-batches is
/// micro-batch 0, whose labels need no layer count.
struct StepLabels {
    std::size_t layers = 0;  ///< layers of the whole network
    [[nodiscard]] std::uint32_t label(LayerId layer, StepPart part, std::size_t microbatch = 0) const {
        return static_cast<std::uint32_t>((microbatch * layers + layer.value()) * kStepParts +
                                          static_cast<std::uint32_t>(part));
    }
    [[nodiscard]] LayerId layer(std::uint32_t label) const { return LayerId(label / kStepParts % layers); }
    [[nodiscard]] StepPart part(std::uint32_t label) const { return static_cast<StepPart>(label % kStepParts); }
    [[nodiscard]] std::size_t microbatch(std::uint32_t label) const { return label / kStepParts / layers; }
};
[[nodiscard]] inline std::uint32_t step_label(LayerId layer, StepPart part) { return StepLabels{}.label(layer, part); }

/// Compute time of network layer `layer` on node `node`, per phase (forward, backward-data,
/// weight-gradient, and [kWeightUpdate] the optimiser's update; 0 for a phase the layer does not have).
using PhasePicoseconds = std::array<Picoseconds, 4>;
using ComputePicoseconds = std::function<PhasePicoseconds(NodeId node, LayerId layer)>;

/// Events of the schedule's Signal/WaitFor ops: the gradient buckets layer l fills are ready on
/// the main stream, and their all-reduces are done on the comm stream (l in the walked graph).
[[nodiscard]] inline std::uint32_t gradient_ready_event(LayerId layer) {
    return static_cast<std::uint32_t>(2 * layer.value());
}
[[nodiscard]] inline std::uint32_t gradient_synced_event(LayerId layer) {
    return static_cast<std::uint32_t>(2 * layer.value() + 1);
}

/// What an op of a walked step is for: the layer in the walked graph, the same layer in the
/// whole network (they differ for a pipeline stage's graph), and the op's label.
struct StepTag {
    LayerId layer;
    LayerId network_layer;
    std::uint32_t label = 0;
};

/// What an exchange moves: a boundary tensor in BFP (F or E, converted on receipt where the
/// formats differ), or fp32 sums (partial sums, statistics).
enum class ExchangeTensor : std::uint8_t { activations = 0, gradients = 1, fp32 = 2 };

/// Values per pair of an exchange's direction carrying `bytes` in `format` over `pairs` pairs:
/// ceil(bytes / pairs) (the bytes each pair's message carries, as the schedule sends them) /
/// format.wire_bytes; 0 for an fp32 exchange or without a wire width.
[[nodiscard]] double values_per_pair(double bytes, std::size_t pairs, const BoundaryFormat& format);

/// Seconds each receiving node of an exchange of `bytes` at `group` of `plan` spends converting
/// the boundary tensor `tensor` it received into its own format, summed over its pairs (side
/// A's i-th node with side B's (i mod |B|), as the schedule pairs them): (node id, seconds) for
/// the nodes that convert, side A's then side B's. Empty for fp32 sums or where no receiver
/// converts. ScheduleBuilder::exchange computes them after the receives; the prediction charges
/// the same.
[[nodiscard]] std::vector<std::pair<std::size_t, double>> exchange_conversions(const Plan& plan, std::size_t group,
                                                                               const SideVolumes& bytes,
                                                                               ExchangeTensor tensor);

/// The order of a training step under a plan (docs/planner.md, "Schedule and cluster run"), as
/// calls to a visitor: build_schedule turns them into programs, predict_step into times. Forward
/// of every layer in order, then backward in reverse, each layer's exchanges at every non-leaf
/// group, root first.
class StepVisitor {
public:
    virtual ~StepVisitor() = default;
    /// An exchange at group g: bytes.to_a into side A, bytes.to_b into side B (never empty), of
    /// `tensor`: a boundary tensor's receivers then convert it where their format differs
    /// (ExchangeCost::into_a, into_b).
    virtual void exchange(std::size_t group, const SideVolumes& bytes, const StepTag& tag, ExchangeTensor tensor) = 0;
    /// Every node of the plan computes its `phase` (0 forward, 1 backward-data, 2 weight-gradient) of tag.layer.
    virtual void compute(std::size_t phase, const StepTag& tag) = 0;
    /// tag.layer's weight gradients are ready: all-reduce each of `sets` (non-empty).
    virtual void all_reduce(const std::vector<ReplicaSet>& sets, const StepTag& tag) = 0;
    /// tag.layer's weights are updated by the optimiser this step (after its last backward pass):
    /// on every node of the plan, once the step's all-reduces are done (as PyTorch DDP's
    /// optimizer.step() after backward()), in the order called.
    virtual void weight_update(const StepTag& /*tag*/) {}
};

/// Which part of a step walk_step walks, and how its ops are labelled. The default is a whole
/// step of a whole network.
struct StepWalk {
    bool forward = true;
    bool backward = true;
    bool sync = true;                ///< with backward: each layer's all-reduces after its weight-gradient phase
    std::size_t first_layer = 0;     ///< the network layer of the walked graph's layer 0 (a pipeline stage's first)
    std::size_t network_layers = 0;  ///< layers of the whole network (0: the walked graph's)
    std::size_t microbatch = 0;      ///< for the labels
    /// With sync: the gradient buckets' cap (GradientBuckets); 0: each layer's gradients
    /// synchronised on their own. predict_step, ClockedPredictor and the schedules set it from
    /// their GradientSync::bucket_bytes, whatever the caller gave.
    std::uint64_t bucket_bytes = 0;
};
void walk_step(const LayerGraph& graph, const Plan& plan, StepVisitor& visitor, const StepWalk& walk = {});

/// Bytes of one replica set's all-reduce: its elements at the plan's weight-gradient width.
std::uint64_t gradient_bytes(const Plan& plan, const ReplicaSet& set);
/// The synchronisation of one replica set: its nodes, elements, bytes and matrix shape.
SyncJob sync_job(const Plan& plan, const ReplicaSet& set);
/// Every replica set's synchronisation in one step of `plan` (over the whole network `graph`),
/// in the order build_schedule asks its GradientSync for them (buckets of `bucket_bytes`, as
/// GradientSync::bucket_bytes gives them), without building it.
std::vector<SyncJob> step_sync_jobs(const LayerGraph& graph, const Plan& plan, std::uint64_t bucket_bytes);

/// Appends walked steps to per-node programs (docs/planner.md, "Schedule"): each layer's
/// exchanges at every group the node belongs to, root first. An exchange at a group pairs side
/// A's i-th node with side B's (i mod |B|) (round robin over the larger side) and splits each
/// side's bytes evenly over the pairs; a pair sends both ways, then receives. Weight gradients
/// are synchronised over their replica sets (weight_replica_sets) on the comm stream, in the
/// gradient buckets of `gradient_sync` (GradientBuckets), each once the weight-gradient phase of
/// the layer that fills it is done, as `gradient_sync` lowers them, so they
/// overlap the rest of the backward pass; finish() makes the main stream wait for them all at
/// the end (not with a delayed update, staleness >= 1: the step's synchronisation then overlaps
/// the next steps, docs/compression.md, "Delayed updates"). Only the plan's nodes (plan.groups[0].nodes) get ops; the programs are indexed by
/// node id.
class ScheduleBuilder final : public StepVisitor {
public:
    ScheduleBuilder(const Plan& plan, std::size_t node_count, const ComputePicoseconds& compute_ps,
                    GradientSync& gradient_sync);
    void exchange(std::size_t group, const SideVolumes& bytes, const StepTag& tag, ExchangeTensor tensor) override;
    void compute(std::size_t phase, const StepTag& tag) override;
    void all_reduce(const std::vector<ReplicaSet>& sets, const StepTag& tag) override;
    void weight_update(const StepTag& tag) override;
    /// The programs so far, to append other ops between walks (a pipeline's stage transfers).
    std::vector<interconnect::NodeProgram>& programs() { return m_programs; }
    /// The programs, each main stream ending with the waits for its all-reduces, then the weight
    /// updates (one Compute per layer).
    std::vector<interconnect::NodeProgram> finish();

private:
    /// Collective tags start here, above every exchange's (id << 21 | pair << 1 | direction).
    static constexpr std::uint64_t kCollectiveTags = std::uint64_t{1} << 62;

    const Plan& m_plan;
    const ComputePicoseconds& m_compute_ps;
    GradientSync& m_sync;
    std::vector<interconnect::NodeProgram> m_programs;
    std::vector<interconnect::NodeProgram> m_scratch;  ///< one collective's ops, before they join the comm streams
    std::vector<std::vector<interconnect::WaitFor>> m_synced;      ///< per node: the main stream's final waits
    std::vector<std::pair<NodeId, interconnect::Recv>> m_pending;  ///< this exchange's receives, by node
    std::uint64_t m_next_exchange = 0;
    std::uint64_t m_collective_tag = kCollectiveTags;
    std::vector<PhasePicoseconds> m_times;  ///< per node: the phases of m_times_layer
    LayerId m_times_layer{SIZE_MAX};
    std::vector<StepTag> m_updates;  ///< the layers weight_update named, in order
};

/// The plan's step as one program per node (ScheduleBuilder over walk_step).
std::vector<interconnect::NodeProgram> build_schedule(const LayerGraph& graph, const Plan& plan, std::size_t node_count,
                                                      const ComputePicoseconds& compute_ps,
                                                      GradientSync& gradient_sync);

}  // namespace fastsim::planner
