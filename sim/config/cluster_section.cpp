// SPDX-License-Identifier: MIT
// The node_types, cluster and planner sections, and run.mode cluster
// (docs/config.md#cluster).
#include "config/sections.h"

#include <algorithm>
#include <set>
#include <string>

#include "config/energy_table.h"
#include "config/node_keys.h"
#include "config/sync_keys.h"

namespace fastsim::config {

const EnumNames<DimensionTopology, 3>& enum_names(DimensionTopology) {
    static constexpr EnumNames<DimensionTopology, 3> kNames{{
        {"ring", DimensionTopology::ring},
        {"fully_connected", DimensionTopology::fully_connected},
        {"switch", DimensionTopology::switch_star},
    }};
    return kNames;
}

const EnumNames<TopologyKind, 6>& enum_names(TopologyKind) {
    static constexpr EnumNames<TopologyKind, 6> kNames{{
        {"ring", TopologyKind::ring},
        {"fully_connected", TopologyKind::fully_connected},
        {"switch", TopologyKind::switch_star},
        {"torus2d", TopologyKind::torus2d},
        {"torus3d", TopologyKind::torus3d},
        {"tree", TopologyKind::tree},
    }};
    return kNames;
}

const EnumNames<OptimizerKind, 3>& enum_names(OptimizerKind) {
    static constexpr EnumNames<OptimizerKind, 3> kNames{
        {{"sgd", OptimizerKind::sgd}, {"momentum", OptimizerKind::momentum}, {"adam", OptimizerKind::adam}}};
    return kNames;
}

namespace {

constexpr std::size_t kAllReduces = std::size(interconnect::kAllReduceAlgorithms);
constexpr bool mirrors(GradientSyncAlgorithm setting, interconnect::AllReduceAlgorithm algorithm) {
    return static_cast<std::size_t>(setting) == 1 + static_cast<std::size_t>(algorithm);
}
static_assert(mirrors(GradientSyncAlgorithm::ring, interconnect::AllReduceAlgorithm::ring) &&
                  mirrors(GradientSyncAlgorithm::tree, interconnect::AllReduceAlgorithm::tree) &&
                  mirrors(GradientSyncAlgorithm::halving_doubling,
                          interconnect::AllReduceAlgorithm::halving_doubling) &&
                  mirrors(GradientSyncAlgorithm::direct, interconnect::AllReduceAlgorithm::direct) &&
                  mirrors(GradientSyncAlgorithm::flat_ring, interconnect::AllReduceAlgorithm::flat_ring) &&
                  mirrors(GradientSyncAlgorithm::halving_doubling_nearest,
                          interconnect::AllReduceAlgorithm::halving_doubling_nearest) &&
                  static_cast<std::size_t>(GradientSyncAlgorithm::parameter_server) == kAllReduces + 1,
              "GradientSyncAlgorithm is best, then every interconnect::AllReduceAlgorithm in its order, then "
              "parameter_server");

}  // namespace

const EnumNames<GradientSyncAlgorithm, kAllReduces + 2>& enum_names(GradientSyncAlgorithm) {
    static const EnumNames<GradientSyncAlgorithm, kAllReduces + 2> kNames = [] {
        EnumNames<GradientSyncAlgorithm, kAllReduces + 2> names{};
        names[0] = {"best", GradientSyncAlgorithm::best};
        for (std::size_t i = 0; i < kAllReduces; ++i)
            names[i + 1] = {interconnect::all_reduce_descriptors()[i].name, static_cast<GradientSyncAlgorithm>(i + 1)};
        names[kAllReduces + 1] = {"parameter_server", GradientSyncAlgorithm::parameter_server};
        return names;
    }();
    return kNames;
}

std::optional<interconnect::AllReduceAlgorithm> forced_all_reduce(GradientSyncAlgorithm setting) {
    const auto i = static_cast<std::size_t>(setting);
    if (i == 0 || i > kAllReduces) return std::nullopt;
    return static_cast<interconnect::AllReduceAlgorithm>(i - 1);
}

const EnumNames<BatchnormStatistics, 2>& enum_names(BatchnormStatistics) {
    static constexpr EnumNames<BatchnormStatistics, 2> kNames{
        {{"local", BatchnormStatistics::local}, {"synchronised", BatchnormStatistics::synchronised}}};
    return kNames;
}

const EnumNames<PipelineSimulation, 3>& enum_names(PipelineSimulation) {
    static constexpr EnumNames<PipelineSimulation, 3> kNames{{{"auto", PipelineSimulation::automatic},
                                                              {"message_level", PipelineSimulation::message_level},
                                                              {"stage_level", PipelineSimulation::stage_level}}};
    return kNames;
}

int optimizer_state_copies(OptimizerKind kind) {
    switch (kind) {
    case OptimizerKind::sgd: return 0;
    case OptimizerKind::momentum: return 1;
    case OptimizerKind::adam: return 2;
    }
    return 1;
}

namespace {

/// A node type: its own keys around a node's keys.
template <typename Visit, typename T>
void node_type_keys(Visit& visit, T& t) {
    visit(t.name, {"name", "what `cluster.groups[].node_type` refers to; unique among the node types", nullptr,
                   "— (required)"});
    visit(t.source, {"source", "where the figures come from; free text, dumped, not used"});
    visit(t.arrays,
          {"arrays",
           "FAST arrays per node; each has the SRAM of `sram` and an equal share of `dram.bandwidth_gb_per_s`, "
           "and every phase's output columns are split over them ([planner.md](planner.md#compute-time))",
           &kNodeArrays});
    if constexpr (!std::is_same_v<Visit, KeyTable>) node_keys(visit, t.node);  // the node table documents them
    visit(t.dram_capacity_gib, {"dram.capacity_gib",
                                "DRAM per node in GiB (2^30 bytes): every plan must fit each node's footprint in it "
                                "([planner.md](planner.md#memory)); 0 = not checked",
                                &kDramCapacityGib});
    visit(t.precision.weights, {"precision.weights", "mantissa bits of weights on this node type", &kMantissaWidth});
    visit(t.precision.activations, {"precision.activations", "mantissa bits of activations", &kMantissaWidth});
    visit(t.precision.gradients, {"precision.gradients", "mantissa bits of gradients", &kMantissaWidth});
}

template <typename Visit, typename G>
void group_keys(Visit& visit, G& g) {
    visit(g.node_type,
          {"node_type", "the kind of every node of the group: a `node_types[].name`", nullptr, "— (required)"});
    visit(g.count, {"count", "nodes in the group; at most 16384 over all groups", &kGroupCount});
    if (Visit::kEveryKey || g.dimensions.empty())
        visit(g.topology,
              {"topology",
               "how the group's nodes are joined ([interconnect.md](interconnect.md#topologies)); `switch` is a "
               "star around one switch; not with `dimensions`"});
    if (Visit::kEveryKey || g.topology == TopologyKind::torus2d || g.topology == TopologyKind::torus3d) {
        visit(g.torus_rows, {"torus.rows", "rows of a `torus2d`: node id = row · cols + col; rows × cols = `count`",
                             &kGroupCount, "— (required with `torus2d`, `torus3d`)"});
        visit(g.torus_cols, {"torus.cols", "columns of a `torus2d` or `torus3d`", &kGroupCount,
                             "— (required with `torus2d`, `torus3d`)"});
    }
    if (Visit::kEveryKey || g.topology == TopologyKind::torus3d)
        visit(g.torus_depth, {"torus.depth",
                              "planes of a `torus3d`: node id = (plane · rows + row) · cols + col; depth × rows × "
                              "cols = `count`",
                              &kGroupCount, "— (required with `torus3d`)"});
    if (Visit::kEveryKey || g.topology == TopologyKind::tree)
        visit(g.tree_fanout, {"tree_fanout", "children per switch of a `tree` (2 = HyPar's H-tree)", &kTreeFanout});
    link_keys(visit, g.link);
}

/// One entry of cluster.groups[].dimensions.
template <typename Visit, typename D>
void dimension_keys(Visit& visit, D& d) {
    visit(d.topology, {"topology",
                       "how each line of nodes along this dimension is joined (`switch`: a switch per line) "
                       "([interconnect.md](interconnect.md#multi-dimensional-topologies))"});
    visit(d.count, {"count", "nodes per line; the group's `count` is the product over its dimensions", &kGroupCount,
                    "— (required)"});
    link_keys(visit, d.link);
}

}  // namespace

namespace {

/// cluster.upper, and the keys of cluster itself.
template <typename Visit, typename C>
void cluster_keys(Visit& visit, C& c) {
    visit(c.upper_topology, {"upper.topology", "the level over the groups' gateways; required with more than one group",
                             nullptr, "— (required with `upper`)", "`ring`, `fully_connected`, `switch`"});
    if (Visit::kEveryKey || c.upper_topology) {
        visit(c.upper_link.bandwidth_gb_per_s,
              {"upper.link.bandwidth_gb_per_s", "the upper links' bandwidth", &kBandwidthGbPerS});
        visit(c.upper_link.latency_ns, {"upper.link.latency_ns", "per hop", &kLatencyNs});
        visit(c.upper_link.energy_pj_per_bit,
              {"upper.link.energy_pj_per_bit", "per bit per hop", &kLinkEnergyPjPerBit});
        visit(c.upper_link.switching, {"upper.link.switching", "as the groups' `link.switching`"});
    }
    visit(c.optimizer, {"optimizer",
                        "the optimiser each node runs on its vector unit to update its shard of the weights at the "
                        "end of the step ([planner.md](planner.md#the-weight-update)), and whose fp32 state (0, 1 "
                        "or 2 values per weight) it keeps beside them ([planner.md](planner.md#memory))"});
    visit(c.batchnorm_statistics,
          {"batchnorm_statistics",
           "a batchnorm split by samples or image rows normalises with each node's own statistics (`local`, "
           "PyTorch DDP's default) or with the whole batch's, all-reduced across the split in the forward and "
           "the backward pass (`synchronised`, SyncBatchNorm) ([planner.md](planner.md#statistics))"});
    visit(c.pipeline_simulation,
          {"pipeline_simulation",
           "how a pipeline plan's step is simulated: every message of every micro-batch (`message_level`), each "
           "stage's tasks and each transfer once and composed (`stage_level`), or `auto`: the stage level when "
           "the step would run more than 2,000,000 ops and more than its pieces "
           "([pipeline.md](pipeline.md#stage-level-simulation))"});
    gradient_sync_keys(visit, c.gradient_sync, "gradient_sync.");
}

template <typename Visit, typename P>
void planner_keys(Visit& visit, P& p) {
    visit(p.kind, {"name", "the partition planner ([planner.md](planner.md#planners))"});
    visit(p.comm_only,
          {"comm_only", "minimise communication volume instead of time, and count every element as 2 bytes"});
    visit(p.equal_split, {"equal_split", "split every dimension by node count instead of by speed"});
    visit(p.stages,
          {"pipeline.stages",
           "`pipeline`: the stage count (placed on the cluster's groups, layers cut balanced by estimated time), or "
           "each stage's layer names in order; `alpa`: the stage count to search with ([pipeline.md](pipeline.md))",
           &kPipelineStages, "0 (one stage per cluster group; `alpa`: searched)"});
    visit(p.microbatches, {"pipeline.microbatches", "micro-batches per mini-batch; must divide `workload.batch`",
                           &kPipelineMicrobatches,
                           "0 (the largest divisor of the batch ≤ 4 × stages and ≤ batch / the largest stage's nodes; "
                           "`alpa`: searched)"});
    visit(p.schedule, {"pipeline.schedule",
                       "the order of each stage's forward and backward passes "
                       "([pipeline.md](pipeline.md#schedules))"});
    visit(p.intra,
          {"pipeline.intra", "the intra-layer planner of each stage's layers on its nodes (not `pipeline` or `alpa`)"});
}

constexpr auto kNodeTypeKeys = [](auto& visit, auto& t) { node_type_keys(visit, t); };
constexpr auto kGroupKeys = [](auto& visit, auto& g) { group_keys(visit, g); };
constexpr auto kDimensionKeys = [](auto& visit, auto& d) { dimension_keys(visit, d); };
constexpr auto kClusterKeys = [](auto& visit, auto& c) { cluster_keys(visit, c); };
constexpr auto kPlannerKeys = [](auto& visit, auto& p) { planner_keys(visit, p); };

}  // namespace

void resolve_cluster(MapReader& top, const KeyReader& run, Params& p) {
    // (1) Workload and the energy table's path.
    read_workload_section(top, p.run, p);
    p.energy = read_energy_section(top);
    if (p.run.fidelity != Fidelity::memo)
        throw ConfigError(run.where("fidelity"),
                          "cluster runs time nodes with the memo node model; run.fidelity stepped "
                          "applies to run.mode training_step");

    // (2) Node types: a node's keys, plus name, arrays, precision and DRAM capacity.
    std::vector<MapReader> types = top.maps("node_types");
    if (types.empty())
        throw ConfigError(
            top.has("node_types") ? top.location_of("node_types") : top.location(),
            "run.mode cluster needs node_types: a list of {name, arrays, clock_mhz, array, sram, dram, precision}");
    ClusterParams& c = p.cluster;
    for (MapReader& entry : types) {
        const Location entry_where = entry.location();
        NodeTypeParams t;
        KeyReader reader = read_keys(std::move(entry), t, kNodeTypeKeys);
        reader.finish();
        if (!reader.given("name"))
            throw ConfigError(entry_where, "expected name: what cluster.groups[].node_type refers to");
        for (const auto& other : c.node_types)
            if (other.name == t.name)
                throw ConfigError(reader.where("name"), "a second node type named '" + t.name + "'");
        for (const auto& [key, m] : {std::pair{"precision.weights", t.precision.weights},
                                     {"precision.activations", t.precision.activations},
                                     {"precision.gradients", t.precision.gradients}})
            check_mantissa_format(p.bfp, m, reader.where(key));
        resolve_node(t.node, p.bfp);
        if (t.node.fusion == Fusion::on)
            throw ConfigError(reader.where("fusion"),
                              "applies to run.mode training_step: a cluster run costs the GEMM layers only");
        // Each array is modelled as a node of its own with an equal share of the DRAM bandwidth.
        t.node.resolved.dram.bandwidth_bits_per_s = std::max<std::uint64_t>(
            1, t.node.resolved.dram.bandwidth_bits_per_s / static_cast<std::uint64_t>(t.arrays));
        t.energy = load_energy_table(p.energy.table.resolved, t.node.dram_type, reader.where("dram.type"),
                                     t.node.sram_exponent_kib, t.node.sram_mantissa_kib);
        check_process_nm(p.energy, t.energy);
        set_sram_read_latency(t.node, t.energy, reader);
        const std::vector<node::LayerPrecision> precision(p.workload.network.layers.size(),
                                                          node::LayerPrecision{t.precision, t.precision, t.precision});
        check_tiling(node::training_step_phases(p.workload.network, p.workload.batch, precision, {}, t.node.resolved),
                     t.node, reader, p.workload.network);
        c.node_types.push_back(std::move(t));
    }

    // (3) Groups of nodes and the topology joining them.
    KeyReader cluster = read_keys(top, "cluster", c, kClusterKeys);
    resolve_groups(cluster.section(), cluster, p);
    cluster.finish();
    resolve_gradient_sync(c.gradient_sync, c.node_type.size(), cluster, "gradient_sync.");
    for (workload::HostedLayer& h : p.workload.network.hosted)
        h.synchronised_statistics = h.layer.kind == workload::LayerKind::batchnorm &&
                                    c.batchnorm_statistics == BatchnormStatistics::synchronised;

    // (4) The planner (a batch too small for it is the planner's PlanError, in every command).
    KeyReader planner = read_keys(top, "planner", p.planner, kPlannerKeys);
    planner.finish();
    // Those given other than their defaults: a run's own config.yaml writes every key.
    const PlannerParams defaults;
    const PlannerParams& q = p.planner;
    for (const auto& [key, set] :
         {std::pair{"pipeline.stages", q.stages.count != defaults.stages.count || !q.stages.lists.empty()},
          {"pipeline.microbatches", q.microbatches != defaults.microbatches},
          {"pipeline.schedule", q.schedule != defaults.schedule},
          {"pipeline.intra", q.intra != defaults.intra}})
        if (set && planner.given(key)) p.planner.pipeline_keys_given.emplace_back(key, planner.where(key));
    // How a pipeline is simulated means nothing where no plan is a pipeline (checked with them).
    if (c.pipeline_simulation != ClusterParams{}.pipeline_simulation && cluster.given("pipeline_simulation"))
        p.planner.pipeline_keys_given.emplace_back("cluster.pipeline_simulation", cluster.where("pipeline_simulation"));
    if (planner::is_pipeline(p.planner.intra)) {
        std::string intra_planners;
        for (const planner::PlannerKind k : planner::kAllPlanners)
            if (!planner::is_pipeline(k))
                intra_planners += (intra_planners.empty() ? "" : ", ") + std::string(planner::to_string(k));
        throw ConfigError(planner.where("pipeline.intra"), "expected an intra-layer planner (" + intra_planners +
                                                               "), got '" +
                                                               std::string(planner::to_string(p.planner.intra)) + "'");
    }
}

void resolve_network(MapReader& top, Params& p) {
    if (!top.has("cluster"))
        throw ConfigError(top.contains("cluster") ? top.location_of("cluster") : top.location(),
                          "expected a cluster: section with groups (the network the collectives run on)");
    KeyReader cluster = read_keys(top, "cluster", p.cluster, kClusterKeys);
    resolve_groups(cluster.section(), cluster, p, true);
    cluster.finish();
    resolve_gradient_sync(p.cluster.gradient_sync, p.cluster.node_type.size(), cluster, "gradient_sync.");
}

/// Reads cluster.groups[i] into `g` (resolved by the caller).
KeyReader read_group(MapReader entry, NodeGroupParams& g) { return read_keys(std::move(entry), g, kGroupKeys); }

KeyReader read_group_dimension(MapReader entry, GroupDimensionParams& d) {
    return read_keys(std::move(entry), d, kDimensionKeys);
}

void dump_cluster(YAML::Emitter& out, const Params& p) {
    dump_workload_section(out, p.workload);
    out << YAML::Key << "node_types" << YAML::Value << YAML::BeginSeq;
    for (const NodeTypeParams& t : p.cluster.node_types) {
        out << YAML::BeginMap;
        write_keys(out, t, kNodeTypeKeys);
        out << YAML::EndMap;
    }
    out << YAML::EndSeq;
    out << YAML::Key << "cluster" << YAML::Value << YAML::BeginMap;
    out << YAML::Key << "groups" << YAML::Value << YAML::BeginSeq;
    for (const NodeGroupParams& g : p.cluster.groups) {
        out << YAML::BeginMap;
        write_keys(out, g, kGroupKeys);
        if (!g.dimensions.empty()) {
            out << YAML::Key << "dimensions" << YAML::Value << YAML::BeginSeq;
            for (const GroupDimensionParams& d : g.dimensions) {
                out << YAML::Flow << YAML::BeginMap;
                write_keys(out, d, kDimensionKeys);
                out << YAML::EndMap;
            }
            out << YAML::EndSeq;
        }
        out << YAML::EndMap;
    }
    out << YAML::EndSeq;
    write_keys(out, p.cluster, kClusterKeys);
    out << YAML::EndMap;
    out << YAML::Key << "planner" << YAML::Value << YAML::BeginMap;
    write_keys(out, p.planner, kPlannerKeys);
    out << YAML::EndMap;
    dump_energy_section(out, p.energy);
}

std::vector<std::pair<std::string, std::string>> cluster_key_tables() {
    return {{"node_types", key_table<NodeTypeParams>(kNodeTypeKeys)},
            {"cluster.groups", key_table<NodeGroupParams>(kGroupKeys)},
            {"cluster.groups.dimensions", key_table<GroupDimensionParams>(kDimensionKeys)},
            {"cluster", key_table<ClusterParams>(kClusterKeys)},
            {"planner", key_table<PlannerParams>(kPlannerKeys)}};
}

}  // namespace fastsim::config
