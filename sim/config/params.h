// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "bfp/format.h"
#include "common/enum_names.h"
#include "compression/compression.h"
#include "config/file_path.h"
#include "energy/energy.h"
#include "interconnect/collectives.h"
#include "interconnect/topology.h"
#include "config/count_or_names.h"
#include "planner/planner.h"
#include "node/node_model.h"
#include "node/training_step.h"
#include "workload/layer.h"

namespace fastsim::config {

/// What `fastsim run` does with a config.
enum class RunMode : std::uint8_t {
    bfp_report,     ///< BFP quantisation error of synthetic tensors (docs/config.md#bfp_report)
    training_step,  ///< cycles and energy of one training step on one node (docs/config.md#training_step)
    cluster         ///< a training step planned over and simulated on a cluster (docs/config.md#cluster)
};

/// How the node's array is simulated (docs/node.md, "Fidelity").
enum class Fidelity : std::uint8_t {
    memo,    ///< memoised per-tile timing in a plain recurrence: what large runs use
    stepped  ///< the SystemC node, the array stepped cycle by cycle on synthetic operands
};

/// Value distributions of the synthetic tensors of a BFP error report.
enum class Distribution : std::uint8_t {
    normal,       ///< N(0, scale^2): weights
    relu_normal,  ///< max(0, N(0, scale^2)): post-ReLU activations, about half zeros
    laplace,      ///< Laplace(0, scale)
    student_t     ///< scale * t(dof): heavy-tailed, like gradients
};

const EnumNames<RunMode, 3>& enum_names(RunMode);
const EnumNames<Fidelity, 2>& enum_names(Fidelity);

/// node.fusion: elementwise layers run in their producer's output pass (docs/vector_unit.md, "Fusion").
enum class Fusion : std::uint8_t { off, on };
const EnumNames<Fusion, 2>& enum_names(Fusion);
const EnumNames<Distribution, 4>& enum_names(Distribution);
inline std::string_view to_string(RunMode mode) { return name_of(mode); }
inline std::string_view to_string(Fidelity fidelity) { return name_of(fidelity); }
inline std::string_view to_string(Distribution distribution) { return name_of(distribution); }

struct RunParams {
    RunMode mode = RunMode::bfp_report;
    std::uint64_t seed = 1;  ///< master seed: data generation and every LFSR derive from it
    Fidelity fidelity = Fidelity::memo;
    /// The training phases a training_step run simulates (run.phases), in any order, each once.
    std::vector<fmac::TrainingPhase> phases{fmac::TrainingPhase::forward, fmac::TrainingPhase::backward_data,
                                            fmac::TrainingPhase::weight_gradient};

    /// The weight update ending each training step (run.optimizer), on the vector unit.
    workload::Optimizer optimizer = workload::Optimizer::none;

    /// run.max_work_s: this config's work limit in estimated seconds (unset: the default);
    /// --max-work overrides it (docs/cli.md, "Work limit").
    std::optional<double> max_work_s;

    /// phases as a selection indexed by fmac::TrainingPhase.
    [[nodiscard]] node::PhaseSelection phase_selection() const {
        node::PhaseSelection s{};
        for (const fmac::TrainingPhase p : phases) s[static_cast<std::size_t>(p)] = true;
        return s;
    }
};

/// Shared BFP settings; the mantissa width is chosen per tensor and phase.
struct BfpParams {
    int group_size = 16;
    int exponent_bits = 8;
    int exponent_bias = 0;
    bfp::Overflow overflow = bfp::Overflow::nan;
    int noise_bits = 8;
    int lfsr_bits = 16;

    [[nodiscard]] bfp::Format format(int mantissa_bits) const {
        return {group_size, mantissa_bits, exponent_bits, exponent_bias, overflow};
    }
    [[nodiscard]] bfp::NoiseSpec noise(std::uint64_t seed) const { return {noise_bits, lfsr_bits, seed}; }
};

struct TensorSpec {
    std::string name;
    Distribution distribution = Distribution::normal;
    double scale = 1.0;  ///< standard deviation (normal, relu_normal), b (laplace), multiplier (student_t)
    double dof = 3.0;    ///< degrees of freedom, student_t only
    std::size_t count = 65536;
};

struct BfpReportParams {
    std::vector<int> mantissa_bits{2, 4, 6, 8};
    std::vector<bfp::Rounding> roundings{bfp::Rounding::nearest, bfp::Rounding::stochastic};
    std::vector<TensorSpec> tensors;  ///< defaults: weights, activations, gradients
};

/// The network and batch of a training step.
struct WorkloadParams {
    FilePath trace;
    FilePath model;  ///< an ONNX model instead of a trace (docs/onnx.md)
    std::size_t batch = 32;
    std::uint64_t steps = 1;  ///< training steps of the whole run (docs/config.md#workload)
    Location batch_where;     ///< where workload.batch is set, for errors about the sizes it scales
    workload::Workload network;
};

/// The node as configured, in the config's units (its keys: node_keys in node_keys.h),
/// and resolved into the models' units (node::NodeParams).
struct NodeConfig {
    double clock_mhz = 1000;
    int rows = 32, cols = 32;
    fmac::Dataflow dataflow = fmac::Dataflow::weight_stationary;
    /// Per training phase, indexed by fmac::TrainingPhase; unset: `dataflow`.
    std::array<std::optional<fmac::Dataflow>, 3> dataflow_per_phase;
    std::optional<int> converter_lanes;           ///< unset: converter::lanes_to_feed(group size, cols)
    std::optional<int> converter_latency_cycles;  ///< unset: derived from bfp.group_size
    std::optional<int> vector_lanes;              ///< unset: derived from the array's columns
    int vector_ops_per_lane_per_cycle = vector::VectorParams{}.ops_per_lane_per_cycle;
    int vector_latency_cycles = vector::VectorParams{}.pipeline_latency_cycles;
    double sram_exponent_kib = 64, sram_mantissa_kib = 1024;
    std::uint64_t sram_exponent_bits_per_cycle = memory::SramParams{}.exponent_bank.bits_per_cycle;
    std::uint64_t sram_mantissa_bits_per_cycle = memory::SramParams{}.mantissa_bank.bits_per_cycle;
    std::string dram_type = "hbm2";
    double dram_bandwidth_gb_per_s = 256;
    double dram_latency_ns = 100;
    std::uint64_t max_tile_rows = node::NodeParams{}.max_tile_rows;
    Fusion fusion = Fusion::off;
    workload::Lowering lowering;  ///< node.lowering.backward_data, node.lowering.depthwise
    node::NodeParams resolved;
};

/// One per-layer precision override, as written (applied in order, later ones win).
struct PrecisionOverride {
    std::string layer;
    std::optional<fmac::TrainingPhase> phase;  ///< every phase if unset
    std::optional<int> weights, activations, gradients;
};

/// One precision.schedule entry, as written: from step `from_step` on, these widths replace
/// the precision defaults (unset: the defaults); precision.layers overrides still apply.
struct ScheduleEntry {
    std::uint64_t from_step = 0;
    std::optional<int> weights, activations, gradients;
};

/// Steps first_step .. first_step + steps - 1 of the run, all at one precision.
struct PrecisionSegment {
    std::uint64_t first_step = 0, steps = 0;
    node::TensorPrecision defaults;               ///< the widths before precision.layers overrides
    std::vector<node::LayerPrecision> per_layer;  ///< one per workload layer
};

struct PrecisionParams {
    node::TensorPrecision defaults;
    node::TensorRounding rounding;
    std::vector<PrecisionOverride> overrides;
    std::vector<ScheduleEntry> schedule;
    FilePath schedule_log;        ///< precision.schedule given as a fastsim train precision_log.csv
    std::string schedule_policy;  ///< the policy whose rows of schedule_log apply; empty: its only one
    /// Resolved: the run's steps in order, at least one segment; segments[0] starts at step 0.
    std::vector<PrecisionSegment> segments;
    std::vector<node::LayerPrecision> per_layer;  ///< resolved: step 0's, one per workload layer
};

struct EnergyParams {
    FilePath table;                            ///< empty = the built-in configs/energy/fast_45nm.yaml
    std::optional<double> process_nm;          ///< unset: the table's area.process_nm (area only)
    std::optional<Location> process_nm_given;  ///< where energy.process_nm was given (its errors)
    energy::EnergyTable resolved;
};

/// One kind of node in a cluster: `arrays` FAST arrays sharing the node's DRAM bandwidth,
/// each with the SRAM of `node` (docs/config.md#cluster).
struct NodeTypeParams {
    std::string name;
    std::string source;  ///< where the figures come from (free text, reported)
    int arrays = 1;
    NodeConfig node;               ///< resolved: one array's share (DRAM bandwidth / arrays)
    double dram_capacity_gib = 0;  ///< 0 = not checked
    node::TensorPrecision precision;
    energy::EnergyTable energy;  ///< the run's table with this type's DRAM energy
};

enum class TopologyKind : std::uint8_t { ring, fully_connected, switch_star, torus2d, torus3d, tree };
const EnumNames<TopologyKind, 6>& enum_names(TopologyKind);
inline std::string_view to_string(TopologyKind kind) { return name_of(kind); }

/// A config's link defaults: 100 GB/s, 500 ns per hop, 5 pJ per bit per hop.
inline constexpr interconnect::LinkParams kDefaultLink{100, 500, 5};

/// Nodes of one type and the topology joining them.
/// How the lines of one dimension of a group are joined (cluster.groups[].dimensions[].topology).
enum class DimensionTopology : std::uint8_t { ring, fully_connected, switch_star };
const EnumNames<DimensionTopology, 3>& enum_names(DimensionTopology);
inline std::string_view to_string(DimensionTopology kind) { return name_of(kind); }

/// One dimension of a group's topology (cluster.groups[].dimensions[]): every line of `count`
/// nodes along it joined as `topology` with `link`.
struct GroupDimensionParams {
    DimensionTopology topology = DimensionTopology::ring;
    std::size_t count = 1;
    interconnect::LinkParams link = kDefaultLink;
};

struct NodeGroupParams {
    std::string node_type;
    std::size_t type_index = 0;  ///< into ClusterParams::node_types
    std::size_t count = 1;
    TopologyKind topology = TopologyKind::ring;
    std::size_t torus_rows = 0, torus_cols = 0;  ///< torus2d, torus3d
    std::size_t torus_depth = 0;                 ///< torus3d
    std::size_t tree_fanout = 2;                 ///< tree
    interconnect::LinkParams link = kDefaultLink;
    /// When given, the group's topology instead of `topology`: their product, lowest first.
    std::vector<GroupDimensionParams> dimensions;
};
/// "torus2d at 62.5 GB/s", or per dimension "ring of 4 at 100 GB/s x switch of 8 at 25 GB/s".
std::string describe_topology(const NodeGroupParams& group);

/// The optimiser whose state every node keeps beside its weights (cluster.optimizer): fp32
/// values per weight, sgd 0, momentum 1, adam 2.
enum class OptimizerKind : std::uint8_t { sgd, momentum, adam };
const EnumNames<OptimizerKind, 3>& enum_names(OptimizerKind);
inline std::string_view to_string(OptimizerKind kind) { return name_of(kind); }
int optimizer_state_copies(OptimizerKind kind);

/// Where a batchnorm split across nodes takes its statistics (cluster.batchnorm_statistics):
/// each node's own samples (PyTorch DDP's default), or every node's (SyncBatchNorm), reduced
/// across the split (docs/planner.md, "Statistics").
enum class BatchnormStatistics : std::uint8_t { local, synchronised };
const EnumNames<BatchnormStatistics, 2>& enum_names(BatchnormStatistics);
inline std::string_view to_string(BatchnormStatistics s) { return name_of(s); }

/// How a pipeline plan's step is simulated (cluster.pipeline_simulation, docs/pipeline.md,
/// "Stage-level simulation"): every message of every micro-batch (`message_level`), or each
/// stage's tasks and each transfer run once alone and composed (`stage_level`); `auto` takes the
/// stage level when the whole step would run more than kStageLevelAboveOps ops.
enum class PipelineSimulation : std::uint8_t { automatic, message_level, stage_level };
const EnumNames<PipelineSimulation, 3>& enum_names(PipelineSimulation);
inline std::string_view to_string(PipelineSimulation s) { return name_of(s); }
inline constexpr std::uint64_t kStageLevelAboveOps = 2'000'000;

/// How weight gradients are synchronised (cluster.gradient_sync.algorithm): an all-reduce
/// (`best` chooses, per all-reduce, the algorithm whose measured cost is lowest for its bytes
/// and nodes) or a parameter server. The all-reduces mirror interconnect::AllReduceAlgorithm, in
/// its order, and take their names from its rows (a static_assert in cluster_section.cpp).
enum class GradientSyncAlgorithm : std::uint8_t {
    best,
    ring,
    tree,
    halving_doubling,
    direct,
    flat_ring,
    halving_doubling_nearest,
    parameter_server
};
const EnumNames<GradientSyncAlgorithm, 8>& enum_names(GradientSyncAlgorithm);
/// The all-reduce `setting` forces; nullopt for `best` (chosen per all-reduce) and
/// `parameter_server` (PowerSGD's factors are not all-reduced).
std::optional<interconnect::AllReduceAlgorithm> forced_all_reduce(GradientSyncAlgorithm setting);
inline std::string_view to_string(GradientSyncAlgorithm algorithm) { return name_of(algorithm); }

/// cluster.gradient_sync (docs/compression.md).
struct GradientSyncParams {
    GradientSyncAlgorithm algorithm = GradientSyncAlgorithm::best;
    std::uint64_t servers = 1;      ///< parameter_server: server nodes, each owning an equal shard
    std::vector<int> server_nodes;  ///< parameter_server: their ids (empty: spread evenly over the nodes)
    compression::Scheme scheme = compression::Scheme::none;
    double density = 0.001;       ///< topk, dgc, threshold
    std::uint64_t rank = 2;       ///< powersgd
    double threshold = 0.001;     ///< threshold (training; on the cluster its volume uses density)
    bool error_feedback = true;   ///< topk, threshold, onebit, powersgd
    std::uint64_t staleness = 0;  ///< delayed update: iteration i applies the gradients of i - D
    double bucket_mib = 25;       ///< gradient buckets' cap (MiB, as DDP's bucket_cap_mb); 0: each layer alone
    /// A plain all-reduce over more ranks is timed by the flow model (planner::SyncScheme).
    std::uint64_t message_level_max_ranks = 1024;
    // resolved
    std::vector<std::size_t> server_ids;  ///< parameter_server: the server nodes
    [[nodiscard]] std::uint64_t bucket_bytes() const {
        return static_cast<std::uint64_t>(std::llround(bucket_mib * 1048576.0));
    }
    [[nodiscard]] compression::Params compression_params() const {
        return {scheme, density, static_cast<std::uint32_t>(rank), threshold, error_feedback};
    }
};

struct ClusterParams {
    std::vector<NodeTypeParams> node_types;
    std::vector<NodeGroupParams> groups;
    std::optional<TopologyKind> upper_topology;  ///< joins the groups' first nodes (ring, fully_connected, switch)
    interconnect::LinkParams upper_link = kDefaultLink;
    GradientSyncParams gradient_sync;
    OptimizerKind optimizer = OptimizerKind::momentum;
    BatchnormStatistics batchnorm_statistics = BatchnormStatistics::local;
    PipelineSimulation pipeline_simulation = PipelineSimulation::automatic;
    // resolved
    std::shared_ptr<const interconnect::Topology> topology;
    std::vector<std::size_t> node_type;         ///< per node id
    std::vector<std::size_t> group_first_node;  ///< per group
};

struct PlannerParams {
    planner::PlannerKind kind = planner::PlannerKind::accpar;
    bool comm_only = false;
    bool equal_split = false;
    // planner.pipeline (docs/pipeline.md)
    CountOrNameLists stages;
    std::uint64_t microbatches = 0;
    planner::PipelineSchedule schedule = planner::PipelineSchedule::one_f_one_b;
    planner::PlannerKind intra = planner::PlannerKind::accpar;
    /// The planner.pipeline keys given other than their defaults ("pipeline.stages", ...; and
    /// "cluster.pipeline_simulation") and where, so that `run` and `plan` can refuse them under a
    /// planner that makes no pipeline (compare plans with all).
    std::vector<std::pair<std::string, Location>> pipeline_keys_given;
    [[nodiscard]] planner::PlannerOptions options() const {
        planner::PlannerOptions o;
        o.kind = kind;
        o.comm_only = comm_only;
        o.equal_split = equal_split;
        o.pipeline.stages = static_cast<std::size_t>(stages.count);
        o.pipeline.stage_layers = stages.lists;
        o.pipeline.microbatches = static_cast<std::size_t>(microbatches);
        o.pipeline.schedule = schedule;
        o.pipeline.intra = intra;
        return o;
    }
};

/// The resolved, validated configuration of one run: defaults applied, units converted.
struct Params {
    std::string source_file;
    RunParams run;
    BfpParams bfp;
    BfpReportParams bfp_report;
    // training_step
    WorkloadParams workload;
    NodeConfig node;
    PrecisionParams precision;
    EnergyParams energy;
    // cluster (with workload and energy)
    ClusterParams cluster;
    PlannerParams planner;
};

/// The tensors a report uses when the config names none.
std::vector<TensorSpec> default_report_tensors();

}  // namespace fastsim::config
