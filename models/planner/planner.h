// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <stdexcept>
#include <string_view>
#include <vector>

#include "common/enum_names.h"
#include "common/units.h"
#include "planner/assignment.h"
#include "planner/footprint.h"
#include "planner/gradient_sync.h"
#include "planner/layer_graph.h"
#include "planner/ownership.h"

namespace fastsim::planner {

/// The planners of docs/planner.md, "Planners" and docs/pipeline.md.
enum class PlannerKind : std::uint8_t {
    data_parallel,           ///< Type I everywhere, the batch split by node count (as the papers)
    data_parallel_balanced,  ///< Type I everywhere, the batch split by measured node speed
    owt,                     ///< "one weird trick": convolutions Type I, the rest Type II
    hypar,                   ///< DP over {I, II} minimising communication (HyPar)
    accpar,                  ///< DP over {I, II, III} minimising compute + communication time, balanced splits
    tofu,      ///< recursive cuts minimising communication over {I, II, III} with equal halves (Tofu-style)
    pipeline,  ///< pipeline stages as planner.pipeline gives them, each planned by its intra planner
    alpa       ///< Alpa's inter-operator DP over layer ranges x sub-meshes, intra planner inside each
};
inline constexpr std::array<PlannerKind, 8> kAllPlanners{
    PlannerKind::data_parallel, PlannerKind::data_parallel_balanced,
    PlannerKind::owt,           PlannerKind::hypar,
    PlannerKind::accpar,        PlannerKind::tofu,
    PlannerKind::pipeline,      PlannerKind::alpa};
/// Every planner's name, in kAllPlanners order.
const EnumNames<PlannerKind, kAllPlanners.size()>& enum_names(PlannerKind);
inline std::string_view to_string(PlannerKind kind) { return name_of(kind); }
inline std::optional<PlannerKind> parse_planner(std::string_view name) { return parse_name<PlannerKind>(name); }

/// What the DP minimises.
enum class Objective : std::uint8_t {
    time,        ///< predicted compute + communication seconds
    comm_volume  ///< bytes exchanged (AccPar/HyPar accounting)
};

/// "time" or "comm_volume" (plan.json's objective).
const EnumNames<Objective, 2>& enum_names(Objective);

/// How a dimension is divided between two sides.
enum class SplitRule : std::uint8_t {
    balanced,  ///< alpha solved so both sides take the same compute time
    equal      ///< alpha = the side's share of the nodes (1/2 for equal halves)
};
/// "balanced" or "equal" (plan.json's split).
const EnumNames<SplitRule, 2>& enum_names(SplitRule);

/// The order a pipeline stage runs its micro-batches' forward and backward passes in
/// (docs/pipeline.md, "Schedules").
enum class PipelineSchedule : std::uint8_t {
    gpipe,       ///< every forward, then every backward (last micro-batch first)
    one_f_one_b  ///< PipeDream-Flush: P - s - 1 warm-up forwards, then one forward one backward, then the rest
};
const EnumNames<PipelineSchedule, 2>& enum_names(PipelineSchedule);

/// planner.pipeline (docs/pipeline.md): how the `pipeline` planner cuts, and what `alpa` searches.
struct PipelineOptions {
    std::size_t stages = 0;  ///< a count; 0: one per cluster group (pipeline), searched (alpa)
    std::vector<std::vector<std::string>> stage_layers;  ///< or each stage's layer names, in order (pipeline)
    std::size_t microbatches = 0;  ///< 0: the largest divisor of the batch <= 4 x stages (pipeline), searched (alpa)
    PipelineSchedule schedule = PipelineSchedule::one_f_one_b;
    PlannerKind intra = PlannerKind::accpar;  ///< the planner of each stage's layers on its nodes
};
bool operator==(const PipelineOptions& a, const PipelineOptions& b);

/// AccPar weighs alpa's plan on clusters of at most this many nodes (and several groups); on
/// larger ones, whose alpa search takes minutes (ResNet-152 over 1,024 nodes), the `pipeline`
/// planner's (docs/planner.md, "Planners").
inline constexpr std::size_t kAccParWeighsAlpaNodes = 256;

/// The most micro-batches alpa tries when planner.pipeline.microbatches is 0 (powers of two up to it).
inline constexpr std::size_t kMaxSearchedMicrobatches = 64;

struct PlannerOptions {
    PlannerKind kind = PlannerKind::accpar;
    bool comm_only = false;    ///< objective = communication volume, and AccPar's 2-byte elements, for every planner
    bool equal_split = false;  ///< split = equal, for every planner
    PipelineOptions pipeline;  ///< for kind pipeline and alpa
    /// accpar: also weigh alpa's plan of the whole cluster, which includes the pipeline
    /// planner's (the pipeline planner's alone above kAccParWeighsAlpaNodes; off where AccPar
    /// plans a pipeline stage's layers).
    bool weigh_pipelines = true;
};
bool operator==(const PlannerOptions& a, const PlannerOptions& b);

/// Whether `kind` cuts the network into pipeline stages.
[[nodiscard]] inline bool is_pipeline(PlannerKind kind) {
    return kind == PlannerKind::pipeline || kind == PlannerKind::alpa;
}

/// What a planner minimises and how it splits, given the options (docs/planner.md, "Planners"):
/// AccPar minimises time unless comm_only; every other planner minimises volume. AccPar and
/// data_parallel_balanced balance their splits unless equal_split; the others split equally.
Objective objective_of(const PlannerOptions& options);
SplitRule split_of(const PlannerOptions& options);
/// Whether equal_split changes what `kind` plans (it does only for planners that balance).
bool equal_split_matters(PlannerKind kind);

/// Bytes per element of each tensor class as it crosses a link.
struct ElementBytes {
    double activations = 2;
    double gradients = 2;
    double partial_sums = 2;      ///< Type II/III reductions, before conversion
    double weight_gradients = 2;  ///< Type I reduction
};

/// A node's own BFP widths and its converters' speed: what converting a boundary tensor it
/// receives in another width costs it (costs::node_formats).
struct NodeFormat {
    std::array<int, 2> mantissa_bits{};  ///< [0] activations, [1] gradients
    double convert_s_per_value = 0;      ///< seconds per value converted: 1 / (lanes x arrays x clock_hz)
    double convert_latency_s = 0;        ///< the converters' fill latency, per message
};

/// How a boundary tensor (F or E) crosses into one side of a cut (docs/planner.md, "Element
/// widths"): on the wire in the sending side's format, then converted by each receiving node
/// whose own width differs, on its converters.
struct BoundaryFormat {
    double wire_bytes =
        0;              ///< bytes per value on the wire (the sending side's widest format); 0: PlanningInputs::bytes'
    int wire_bits = 0;  ///< mantissa bits on the wire; 0: nothing is converted
    std::size_t tensor = 0;  ///< 0 activations (F), 1 gradients (E): which of NodeFormat::mantissa_bits
    std::shared_ptr<const std::vector<NodeFormat>> nodes;  ///< per node id (shared by every group); null: none convert
    /// Seconds node `node` takes to convert `values` values it received: 0 where its width is the wire's.
    [[nodiscard]] double convert_s(std::size_t node, double values) const {
        if (!nodes || wire_bits == 0 || values <= 0) return 0;
        const NodeFormat& f = (*nodes)[node];
        if (f.mantissa_bits[tensor] == wire_bits) return 0;
        return f.convert_latency_s + values * f.convert_s_per_value;
    }
};

/// Seconds to move data between the two sides of a group: latency_s plus the busiest
/// direction's bytes x seconds per byte (docs/planner.md, "Communication time").
struct ExchangeCost {
    double latency_s = 0;
    double seconds_per_byte_to_a = 0;
    double seconds_per_byte_to_b = 0;
    /// The fraction of the pairs whose message into side A (B) crosses the channel that sets
    /// seconds_per_byte_to_a (_b): 1 when every pair shares one bottleneck, 1/pairs when none do.
    double bottleneck_share_to_a = 1;
    double bottleneck_share_to_b = 1;
    /// Boundary tensors into side A (sent by B) and into side B: [0] F (activations), [1] E (gradients).
    std::array<BoundaryFormat, 2> into_a{}, into_b{};

    [[nodiscard]] double seconds(const SideVolumes& bytes) const {
        if (bytes.empty()) return 0;
        const double a = bytes.to_a * seconds_per_byte_to_a, b = bytes.to_b * seconds_per_byte_to_b;
        return latency_s + (a > b ? a : b);
    }
};

/// One group of nodes in the bisection hierarchy. Groups of one node are leaves.
struct Group {
    std::vector<std::size_t> nodes;  ///< cluster node ids, in topology order
    std::size_t depth = 0;           ///< 0 = the whole cluster
    int side_a = -1, side_b = -1;    ///< child group indices (-1 for a leaf)
    ExchangeCost exchange;           ///< between the two sides (non-leaves)
    [[nodiscard]] bool leaf() const { return side_a < 0; }
};

/// Compute seconds of a layer's forward, backward-data and weight-gradient phases, and of the
/// optimiser's update of its weights ([kWeightUpdate], once a step, after the gradients are
/// synchronised), on one node of `node_type` with the layer reduced to `dims`. Callers memoise.
using PhaseSeconds = std::array<double, 4>;
inline constexpr std::size_t kWeightUpdate = 3;  ///< PhaseSeconds' entry of the weight update
using ComputeModel = std::function<PhaseSeconds(std::size_t node_type, LayerId layer, const LayerDims& dims)>;
/// The exchange cost between two disjoint node sets.
using ExchangeModel =
    std::function<ExchangeCost(const std::vector<std::size_t>& side_a, const std::vector<std::size_t>& side_b)>;

/// The cluster as the planner sees it.
struct ClusterView {
    std::vector<std::size_t> node_type;       ///< per node id
    std::vector<std::size_t> order;           ///< node ids in topology order
    std::vector<std::size_t> preferred_cuts;  ///< positions in `order` to cut first (slow links)
};

/// Bisects `order` recursively (docs/planner.md, "Hierarchy"): a range containing preferred
/// cuts is cut at the one nearest its middle (between groups of a hierarchical cluster:
/// slowest links first); otherwise into halves, the first side taking the extra node.
std::vector<Group> bisect(const ClusterView& cluster, const ExchangeModel& exchange);
/// Where bisect cuts the positions [lo, hi) of `cluster.order` (hi - lo >= 2): the position
/// of the first node of the second side.
std::size_t bisection_cut(const ClusterView& cluster, std::size_t lo, std::size_t hi);

/// The choice for one layer at one group, and the exchanges it causes there (bytes per side).
struct LayerChoice {
    PartitionType type = PartitionType::batch;
    double alpha = 0.5;                       ///< side A's share of the split dimension (= split_a / D)
    std::uint64_t split_a = 0;                ///< side A's part of the split dimension
    LayerDims dims;                           ///< the layer at this group
    double compute_a_s = 0, compute_b_s = 0;  ///< estimated compute of each side (its whole subtree)
    std::vector<SideVolumes> forward_in;      ///< per producer edge: F into this layer's partition, before its forward
    /// Type II: output partial sums, after the forward; and the carried normalisations' statistics
    SideVolumes forward_out;
    std::vector<SideVolumes> backward_in;  ///< per consumer edge: E into this layer's partition, before its backward
    /// Type III: input-error partial sums (IV: its halo's), after backward-data; and the carried
    /// normalisations' backward statistics
    SideVolumes backward_out;
    SideVolumes weight_sync;  ///< Types I and IV: weight-gradient sum, after weight-gradient

    /// Communication seconds of each part of the step at this group.
    [[nodiscard]] double forward_comm_s(const ExchangeCost& x) const;
    [[nodiscard]] double backward_comm_s(const ExchangeCost& x) const;
    [[nodiscard]] double sync_comm_s(const ExchangeCost& x) const { return x.seconds(weight_sync); }
    /// Bytes of every exchange, busiest direction of each (AccPar's accounting).
    [[nodiscard]] double comm_bytes() const;
};

struct PipelinePlan;

/// The finished plan: a choice per layer at every non-leaf group, and each node's share. A
/// pipeline planner's plan has one leaf group over every node, its stages in `pipeline`, and
/// per layer and node the work of the whole mini-batch (docs/pipeline.md, "Plan").
struct Plan {
    PlannerOptions options;
    /// Whose rules made the choices: options.kind, or for AccPar the other planner whose plan
    /// it kept because that plan did better on AccPar's objective.
    PlannerKind chosen_from = PlannerKind::accpar;
    ElementBytes bytes;  ///< the widths the plan's volumes were counted with
    Objective objective = Objective::time;
    SplitRule split = SplitRule::balanced;
    std::vector<Group> groups;                      ///< groups[0] = the whole cluster
    std::vector<std::vector<LayerChoice>> choices;  ///< per group (empty for leaves), per layer
    std::vector<std::vector<LayerDims>> node_dims;  ///< per node id, per layer
    // Predictions (seconds; docs/planner.md, "Predictions"). Per layer: the slowest node per
    // phase; exchange seconds summed over depths, the slowest group at each depth; the slowest
    // all-reduce of the gradient buckets the layer fills (GradientBuckets); and the predicted
    // mean node's compute + waits.
    std::vector<PhaseSeconds> compute_s;
    std::vector<double> forward_comm_s, backward_comm_s, sync_comm_s;
    std::vector<double> layer_step_s;
    double step_s = 0;                 ///< the predicted training step (predict_step, or replay_step's)
    bool step_replayed = false;        ///< step_s is PlanningInputs::replay's (replay_step runs it once)
    std::uint64_t replayed_ops = 0;    ///< ops the replay held at once, as its simulation will; 0: not replayed
    double comm_bytes = 0;             ///< every group's exchanges (busiest direction of each), AccPar's accounting
    std::vector<Footprint> footprint;  ///< per node id
    std::vector<MemoryShortfall> memory_shortfalls;  ///< nodes over capacity, worst first (empty: it fits)
    std::shared_ptr<const PipelinePlan> pipeline;    ///< the stages, for pipeline planners (else null)
};

/// How many times AccPar re-plans with its estimates calibrated by the previous plan.
inline constexpr int kRefinementRounds = 3;

/// True if two plans (of the same groups) choose the same type and split everywhere.
bool same_partition(const Plan& a, const Plan& b);

class PlanMemo;

/// A plan's step replayed (PlanningInputs::replay): its seconds, and the ops of the programs it
/// held at once (the step's; at stage level, the pieces kept and the largest other one), which
/// a simulation of the plan holds too.
struct ReplayedStep {
    double step_s = 0;
    std::uint64_t ops = 0;
};

/// Everything a planner is given (docs/planner.md, "Planners"): the layer graph, the cluster
/// and its bisection (`bisect`), and the cost models: node-characterised compute seconds (not
/// peak FLOPs), element widths, the gradient synchronisation scheme (whose time is measured on
/// the topology), and the memory model.
struct PlanningInputs {
    const LayerGraph& graph;
    const ClusterView& cluster;
    const std::vector<Group>& groups;
    ComputeModel compute;
    ElementBytes bytes;
    GradientSync* gradient_sync;               ///< how replica sets' gradients are synchronised, and their time
    MemoryModel memory;                        ///< capacities empty: memory is not checked
    std::vector<std::string> node_type_names;  ///< for messages; may be empty
    std::function<void()> plan_made;           ///< called as each plan is made and predicted (progress); may be empty
    ExchangeModel exchange;                    ///< for bisecting a pipeline stage's nodes; may be empty otherwise
    /// Seconds of a plan's whole step, its schedule (build_schedule) replayed on the cluster's
    /// network (docs/planner.md, "Predictions"); empty: the walk of predict_step alone. Given
    /// for a whole cluster, not for a pipeline stage's own planning. The replay may stop once
    /// the step would end after `give_up_after_s` seconds (+infinity: never), and then returns
    /// +infinity.
    std::function<ReplayedStep(const Plan&, double give_up_after_s)> replay;
    /// Plans already made from these inputs (AccPar weighs alpa's, and a comparison asks for
    /// both); may be null.
    PlanMemo* plans = nullptr;
};

/// The plans made from one set of planning inputs, by their options.
class PlanMemo {
public:
    [[nodiscard]] const Plan* find(const PlannerOptions& options) const;
    void keep(const PlannerOptions& options, const Plan& plan);

private:
    std::vector<std::pair<PlannerOptions, Plan>> m_plans;
};

/// The plan's step as the planners rank it and report it: in.replay's seconds where given (a
/// pipeline plan's own step_s too), else predict_step's, already in plan.step_s.
void replay_step(const PlanningInputs& in, Plan& plan);

/// replay_step for ranking a candidate against a plan whose step is `incumbent_s`: a replay
/// costs more than anything else in planning a large cluster, so it stops once the step would
/// end after incumbent_s, leaving step_s +infinity (a step that ends at it is replayed whole).
void replay_step(const PlanningInputs& in, Plan& plan, double incumbent_s);

/// How many times AccPar re-plans with a heavier memory penalty when no plan fits.
inline constexpr int kMemoryPenaltyRounds = 8;

/// Plans with `options` (docs/planner.md). The plan's predictions are those of predict_step
/// (planner/prediction.h) and its footprint that of plan_footprint. PlanError if the planner
/// cannot split a layer, or no plan it can make fits every node's memory: "no plan of owt fits
/// in memory: node 3 (fast32) needs 9.125 GiB of its 8.000 GiB, 1.125 GiB short (...)".
Plan make_plan(const PlanningInputs& inputs, const PlannerOptions& options);

/// The size of alpa's search on `inputs` (docs/performance.md, "Work estimates"; defined with
/// the alpa planner in pipeline.cpp), counted without planning: what its block costs and its
/// inter-operator DP take, over every micro-batch count it searches (those past
/// kMaxSearchedMicrobatches, searched only while each beats the ones before, are all counted: a
/// bound). `inputs.exchange` may be empty: sub-meshes are then told apart by their node types
/// and group boundaries alone.
struct AlpaSearchSize {
    std::size_t blocks = 0, mesh_classes = 0, microbatch_counts = 0;
    std::size_t most_microbatches = 0;  ///< the largest count searched
    /// The block costs: each distinct block planned alone on each sub-mesh class, nodes x
    /// layers summed over them and the counts.
    double block_node_layers = 0;
    /// The DP's stage costs: (first block, sub-mesh class, end block) entries, every count.
    double stage_costs = 0;
    /// Whether the whole cluster as one stage is planned too (!whole_model_cannot_fit).
    bool whole_fits = true;
};
AlpaSearchSize alpa_search_size(const PlanningInputs& inputs, const PipelineOptions& options);

/// The plan `options` makes, whether or not it fits in memory, its step the walk's unless its
/// planner replayed it (replay_step reports it as make_plan does): from in.plans where it was
/// made before, else made (and kept there).
Plan plan_once(const PlanningInputs& inputs, const PlannerOptions& options);

/// PlanError, as make_plan words it, if `plan` does not fit every node's memory.
void check_fits_in_memory(const Plan& plan, const PlanningInputs& inputs);

}  // namespace fastsim::planner
