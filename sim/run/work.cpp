// SPDX-License-Identifier: MIT
#include "run/work.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

#include <unistd.h>

#include "common/checked.h"
#include "common/errors.h"
#include "fmac/timing.h"
#include "interconnect/collective_cost.h"
#include "node/node_model.h"
#include "node/training_step.h"
#include "node/vector_phase.h"
#include "planner/layer_graph.h"
#include "planner/plan_view.h"
#include "run/cluster_step.h"
#include "run/layer_errors.h"
#include "learning/network.h"

namespace fastsim::run {
namespace {

// Reference-machine prices, ns per unit (docs/performance.md, "Work estimates"; re-measure
// with scripts/bench_work.sh). They only need to be right within a small factor: they decide
// whether a run is refused and what its progress line expects.
constexpr double kNsPerMemoTile = 80;               ///< node::run_phase_memo, per tile
constexpr double kNsPerVectorChunk = 80;            ///< node::run_vector_memo, per chunk
constexpr double kNsPerSteppedVectorChunk = 16000;  ///< Node::run_vector_phase (SystemC), per chunk
constexpr double kNsPerTimelineTile = 250;          ///< a tile's stages recorded into a timeline
constexpr double kNsPerPeCycle = 0.75;              ///< the stepped SystemC array, per PE per cycle
constexpr double kNsPerSteppedCycle = 10;           ///< the stepped array's method, per cycle whatever its size
constexpr double kNsPerSteppedTile = 3500;          ///< the stepped node's DMA, converter and thread events, per tile
constexpr double kNsPerSyntheticValue = 8;          ///< stepped: an operand value drawn and quantised
constexpr double kNsPerRouteEntry = 12;             ///< one shortest-path tree, per vertex and channel of the topology
constexpr double kNsPerPlanEntry = 600;             ///< the planner's choice of one layer at one group
/// A message's booking of one hop of its route, in a plan's walk or replay (Network::book_hop
/// and what surrounds it; measured on 1,024-node rings).
constexpr double kNsPerReplayedHop = 26;
/// Building and simulating one op of the schedule: a base cost, a part that grows with the
/// node count (SystemC's event queue and the caches), and a route-tree rebuild when the route
/// cache cannot hold a tree per node.
constexpr double kNsPerClusterOp = 300;
constexpr double kNsPerClusterOpPerNode = 0.3;
constexpr double kNsPerClusterOpPerVertexUncached = 0.7;
/// SCALE-Sim's fold loop, per demand request its bound counts (scalesim::simulated_requests):
/// measured 1.2 ns (ws) and 0.44 ns (is, whose streams repeat) on a 256 x 256 x 256-channel
/// 3 x 3 convolution on a 32 x 32 array.
constexpr double kNsPerScaleSimRequest = 1.2;
/// alpa's block costs: one block layer planned alone on one node of a sub-mesh (the hierarchy
/// DP and the stage's walks; GPT-3 175B over 1,024 nodes: 1.1e7 in 20 s).
constexpr double kNsPerAlpaBlockNodeLayer = 1800;
/// alpa's inter-operator DP, per (first block, sub-mesh class, end block) entry of one
/// micro-batch count: its memory sums, then the t_max scan's DPs over the sub-meshes.
constexpr double kNsPerAlpaStageCost = 1000;
/// alpa's finalists (its DP's choices planned whole and replayed) and the `pipeline` planner's
/// plan it weighs, in plans of the `pipeline` planner (2.4 to 6.5 on GPT-3 6.7B and 175B).
constexpr double kAlpaFinalistPlans = 5.5;
constexpr double kNsPerDrawnValue = 30;      ///< bfp_report: a synthetic value drawn
constexpr double kNsPerQuantisedValue = 10;  ///< bfp_report: a value quantised, dequantised and measured
/// fastsim train, per MAC of an iteration (forward, backward-data, weight gradient).
constexpr double kNsPerTrainMacFp32 = 0.03;
constexpr double kNsPerTrainMacBfpFast = 0.06;
constexpr double kNsPerTrainMacBfpExact = 2.0;
/// The CNN's im2col, col2im, pooling and layout work, as a factor on its GEMMs' MACs (measured:
/// docs/performance.md, "Work estimates").
constexpr double kCnnOverhead = 1.2;
// Memory, bytes per unit (measured peaks, docs/performance.md).
constexpr double kBytesPerSteppedValue = 16;        ///< a GEMM's operands: floats, quantised groups, chunk planes
constexpr double kBytesPerReportValue = 12;         ///< a report tensor: floats, BFP, dequantised copy
constexpr double kBytesPerRouteEntry = 12;          ///< a cached shortest-path tree entry
constexpr double kBytesPerPlanEntry = 250;          ///< a layer choice at a group
constexpr double kBytesPerClusterOp = 48;           ///< a compiled op and its share of the messages
constexpr double kBytesPerClusterNode = 64 * 1024;  ///< a node's SystemC thread stack as used
constexpr double kBytesPerTrainPixel = 4.8;         ///< a normalised pixel and its share of the batches

std::string format_count(double v) {
    char text[32];
    if (v < 1e5)
        std::snprintf(text, sizeof text, "%.0f", v);
    else
        std::snprintf(text, sizeof text, "%.2g", v);
    return text;
}

std::string format_seconds(double s) {
    char text[48];
    if (s < 120)
        std::snprintf(text, sizeof text, "%.2g s", s);
    else if (s < 2 * 3600)
        std::snprintf(text, sizeof text, "%.0f min", s / 60);
    else if (s < 2 * 86400)
        std::snprintf(text, sizeof text, "%.0f h", s / 3600);
    else
        std::snprintf(text, sizeof text, "%.2g days", s / 86400);
    return text;
}

std::string format_bytes(double b) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f GiB", b / (1024.0 * 1024 * 1024));
    return text;
}

/// "layer 'conv1' (forward) at traces/x.yaml:4:5: layers[0]".
std::string layer_text(const config::Params& params, const node::StepPhase& s) {
    const workload::Layer& l = params.workload.network.layers.at(s.layer);
    return "layer '" + l.name + "' (" + std::string(node::phase_name(s)) + ")" +
           (l.where.file.empty() ? "" : " at " + l.where.describe());
}

/// Tiles per phase, and which phase has the most.
struct TileCount {
    double tiles = 0;
    double most = 0;
    std::string largest;
    void add(double t, const std::function<std::string()>& name) {
        tiles += t;
        if (t > most) {
            most = t;
            largest = name();
        }
    }
};

/// Memo tiles of the three phases of every layer of the workload at `batch` on `node`, each
/// phase at 8-bit operands (the most tiles).
TileCount step_tiles(std::size_t batch, const node::NodeParams& node, const config::Params& params) {
    const workload::Workload& network = params.workload.network;
    const std::vector<node::LayerPrecision> widest(network.layers.size());
    TileCount count;
    for (const node::StepPhase& s : node::training_step_phases(network, batch, widest, {}, node))
        count.add(with_layer_named(params, s.layer,
                                   [&] {
                                       // A vector-unit chunk costs about a memo tile's time.
                                       double tiles =
                                           s.on_vector_unit
                                               ? static_cast<double>(node::plan_vector_chunks(s.vector, node).chunks) *
                                                     (kNsPerVectorChunk / kNsPerMemoTile)
                                               : 0;
                                       for (const node::PhaseGemm& g : s.gemms)
                                           tiles += static_cast<double>(node::plan_tiles(g.job, node).count());
                                       return tiles;
                                   }),
                  [&] { return layer_text(params, s); });
    return count;
}

}  // namespace

void WorkEstimate::add(std::string what, double count, double ns_each, std::string where) {
    if (count > 0) parts.push_back({std::move(what), count, ns_each, std::move(where)});
}

void WorkEstimate::merge(const WorkEstimate& other) {
    parts.insert(parts.end(), other.parts.begin(), other.parts.end());
    if (other.memory_bytes > memory_bytes) {
        memory_bytes = other.memory_bytes;
        memory_where = other.memory_where;
        memory_remedy = other.memory_remedy;
    }
}

double WorkEstimate::seconds() const {
    double ns = 0;
    for (const Part& p : parts) ns += p.count * p.ns_each;
    return ns * 1e-9;
}

std::string WorkEstimate::describe() const {
    std::string out;
    const Part* costliest = nullptr;
    for (const Part& p : parts) {
        out += (out.empty() ? "" : " + ") + format_count(p.count) + " " + p.what;
        if (!costliest || p.count * p.ns_each > costliest->count * costliest->ns_each) costliest = &p;
    }
    out = (out.empty() ? "no work" : out) + ", about " + format_seconds(seconds());
    if (costliest && parts.size() > 1) out += ", most of it " + costliest->what;
    if (costliest && !costliest->where.empty())
        out += (parts.size() > 1 ? " in " : ", most of it in ") + costliest->where;
    return out;
}

double run_memory_limit_bytes() {
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
    return pages > 0 && page > 0 ? 0.75 * static_cast<double>(pages) * static_cast<double>(page) : 0x1p34;
}

void check_work(const WorkEstimate& estimate, double max_work_s, const std::string& source) {
    if (estimate.memory_bytes > run_memory_limit_bytes())
        throw UserError(source + ": the run would need about " + format_bytes(estimate.memory_bytes) +
                        " of memory for " + estimate.memory_where + ", more than the " +
                        format_bytes(run_memory_limit_bytes()) +
                        " this machine allows a run (three quarters of its memory)" +
                        (estimate.memory_remedy.empty() ? "" : "; " + estimate.memory_remedy));
    const double s = estimate.seconds();
    if (s <= max_work_s) return;
    // A round value above the estimate: two significant digits, and at least 1.
    const double wanted = std::max(1.0, s * 1.5);
    const double scale = std::pow(10.0, std::max(0.0, std::floor(std::log10(wanted)) - 1));
    char needed[40];
    std::snprintf(needed, sizeof needed, "%.0f", std::ceil(wanted / scale) * scale);
    throw UserError(source + ": the run's work is estimated at " + estimate.describe() + ", above the work limit of " +
                    format_seconds(max_work_s) + " (docs/cli.md, \"Work limit\"); if that is meant, pass --max-work " +
                    needed + " (estimated seconds)");
}

double parse_max_work(const std::string& text) {
    char* end = nullptr;
    const double v = std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v) || !(v > 0) ||
        text.find_first_not_of("0123456789.eE+-") != std::string::npos)
        throw UserError("--max-work: expected estimated seconds of work, a positive number such as 600, got '" + text +
                        "'");
    return v;
}

WorkEstimate estimate_training_step(const config::Params& params, bool timeline) {
    WorkEstimate e;
    const node::NodeParams& node = params.node.resolved;
    const auto phases =
        node::training_step_phases(params.workload.network, params.workload.batch, params.precision.per_layer,
                                   params.precision.rounding, node, params.run.phase_selection(), params.run.optimizer);
    const bool stepped = params.run.fidelity == config::Fidelity::stepped;
    double tiles = 0, recorded = 0, stepped_tiles = 0, cycles = 0, pe_cycles = 0, values = 0, most_ns = 0,
           vector_chunks = 0;
    std::string where;
    const double pes = static_cast<double>(node.array.rows) * static_cast<double>(node.array.cols);
    for (const node::StepPhase& s : phases) {
        const double ns = with_layer_named(params, s.layer, [&] {
            double phase_ns = 0;
            if (s.on_vector_unit) {
                const auto chunks = static_cast<double>(node::plan_vector_chunks(s.vector, node).chunks);
                vector_chunks += chunks;
                phase_ns += chunks * (stepped ? kNsPerSteppedVectorChunk : kNsPerVectorChunk);
            }
            for (const node::PhaseGemm& g : s.gemms) {
                const auto count = static_cast<double>(g.count);
                // Every run plans and runs each phase on the memo path (stepped runs first, to find
                // any overflow before a SystemC thread starts).
                const auto t = static_cast<double>(node::plan_tiles(g.job, node).count());
                tiles += t;
                phase_ns += t * kNsPerMemoTile;
                if (timeline) {
                    recorded += t * count;
                    phase_ns += t * count * kNsPerTimelineTile;
                }
                if (!stepped) continue;
                const fmac::GemmTiming whole =
                    fmac::analytic_gemm_timing(g.job.shape, node.array, g.job.x_mantissa_bits, g.job.y_mantissa_bits,
                                               node::dataflow_of(g.job, node));
                const double b = static_cast<double>(g.dims.batch), in = static_cast<double>(g.dims.in),
                             out = static_cast<double>(g.dims.out);
                const double operands = b * in + in * out + b * out;
                stepped_tiles += t * count;
                cycles += static_cast<double>(whole.cycles) * count;
                pe_cycles += static_cast<double>(whole.cycles) * pes * count;
                values += operands * count;
                if (operands * kBytesPerSteppedValue > e.memory_bytes) {
                    e.memory_bytes = operands * kBytesPerSteppedValue;
                    e.memory_where = "the operands of " + layer_text(params, s);
                }
                phase_ns += count * (t * kNsPerSteppedTile +
                                     static_cast<double>(whole.cycles) * (kNsPerSteppedCycle + pes * kNsPerPeCycle) +
                                     operands * kNsPerSyntheticValue);
            }
            return phase_ns;
        });
        if (ns > most_ns) {
            most_ns = ns;
            where = layer_text(params, s);
        }
    }
    // A whole run simulates a step per precision segment (a bound: equal segments are simulated once;
    // the timeline is step 0's only).
    const auto steps = static_cast<double>(std::max<std::size_t>(1, params.precision.segments.size()));
    e.add("memo tiles", tiles * steps, kNsPerMemoTile, where);
    e.add("vector-unit chunks", vector_chunks * steps, stepped ? kNsPerSteppedVectorChunk : kNsPerVectorChunk, where);
    e.add("tiles recorded in the timeline", recorded, kNsPerTimelineTile, where);
    e.add("tiles stepped", stepped_tiles * steps, kNsPerSteppedTile, where);
    e.add("array cycles stepped", cycles * steps, kNsPerSteppedCycle, where);
    e.add("PE-cycles stepped", pe_cycles * steps, kNsPerPeCycle, where);
    e.add("synthetic operand values", values * steps, kNsPerSyntheticValue, where);
    return e;
}

/// The mean hop count of a route between two nodes, from up to 64 pairs: sources spread over
/// the nodes, each with an offset spread over 1 .. n - 1.
double mean_route_hops(const interconnect::Topology& topology) {
    const std::size_t n = topology.node_count();
    if (n < 2) return 0;
    std::vector<interconnect::ChannelId> route;
    double hops = 0;
    const std::size_t pairs = std::min<std::size_t>(64, n);
    for (std::size_t i = 0; i < pairs; ++i) {
        const std::size_t a = i * n / pairs, offset = 1 + (2 * i + 1) * (n - 1) / (2 * pairs);
        topology.route_into(a, (a + offset) % n, route);
        hops += static_cast<double>(route.size());
    }
    return hops / static_cast<double>(pairs);
}

bool accpar_weighs_pipelines(const config::Params& params) {
    return params.cluster.group_first_node.size() > 1 && !params.planner.comm_only;
}

bool accpar_weighs_alpa(const config::Params& params) {
    return accpar_weighs_pipelines(params) && params.cluster.node_type.size() <= planner::kAccParWeighsAlpaNodes;
}

std::size_t plans_made(planner::PlannerKind kind, bool with_alpa) {
    switch (kind) {
    case planner::PlannerKind::accpar:  // its DP over I-IV and over I-III, each with a calibration round, then every
                                        // other intra-layer planner's plan (balanced data parallelism: two), and alpa's
        return 2 * 2 + (planner::kAllPlanners.size() - 3) + 1 +
               (with_alpa ? plans_made(planner::PlannerKind::alpa) : 0);
    case planner::PlannerKind::data_parallel_balanced: return 2;  // and a calibration round
    case planner::PlannerKind::pipeline:
    case planner::PlannerKind::alpa: return 16;  // a stage's or a block's plan each (a guess: progress only)
    case planner::PlannerKind::data_parallel:
    case planner::PlannerKind::owt:
    case planner::PlannerKind::hypar:
    case planner::PlannerKind::tofu: return 1;
    }
    return 1;
}

namespace {

/// The `pipeline` planner's stage count: planner.pipeline.stages, or one per group.
double pipeline_stages(const config::Params& params) {
    const config::CountOrNameLists& s = params.planner.stages;
    const std::size_t n = s.count > 0 ? static_cast<std::size_t>(s.count) : s.lists.size();
    return static_cast<double>(n > 0 ? n : std::max<std::size_t>(1, params.cluster.group_first_node.size()));
}

/// What alpa's search is on params' cluster, counted without planning it (the sub-meshes told
/// apart without their exchange costs).
planner::AlpaSearchSize alpa_search_size(const config::Params& params) {
    const planner::LayerGraph graph = planner::build_layer_graph(params.workload.network, params.workload.batch);
    const planner::ClusterView view = cluster_view(params.cluster);
    const std::vector<planner::Group> no_groups;
    const planner::PlanningInputs in{graph,
                                     view,
                                     no_groups,
                                     {},
                                     {},
                                     nullptr,
                                     costs::memory_model(cost_node_types(params), bfp_storage(params),
                                                         config::optimizer_state_copies(params.cluster.optimizer)),
                                     {},
                                     {},
                                     {},
                                     {},
                                     nullptr};
    return planner::alpa_search_size(in, params.planner.options().pipeline);
}

/// Whole-cluster plans' worth of planning a planner does, for the estimate: plans_made's count,
/// but for the pipeline planners. `pipeline` plans each of its S stages (N/S nodes, L/S layers)
/// with AccPar's plans, 1/S^2 of a whole plan each. alpa plans the whole cluster by its intra
/// planner and by data parallelism when the model can fit on one stage, and its finalists and
/// the `pipeline` planner's stages (kAlpaFinalistPlans); its block costs and DP are counted
/// apart (alpa_search_size). `alpa` is alpa's search where it is made.
double plan_walks(planner::PlannerKind kind, const std::optional<planner::AlpaSearchSize>& alpa, double stages,
                  planner::PlannerKind intra) {
    switch (kind) {
    case planner::PlannerKind::pipeline:
        return static_cast<double>(plans_made(planner::PlannerKind::accpar, false)) / stages;
    case planner::PlannerKind::alpa:
        return (alpa && alpa->whole_fits ? plan_walks(intra, std::nullopt, stages, intra) + 1 : 0) +
               kAlpaFinalistPlans * plan_walks(planner::PlannerKind::pipeline, std::nullopt, stages, intra);
    case planner::PlannerKind::accpar:
        return static_cast<double>(plans_made(kind, false)) +
               (alpa ? plan_walks(planner::PlannerKind::alpa, alpa, stages, intra) : 0);
    case planner::PlannerKind::data_parallel:
    case planner::PlannerKind::data_parallel_balanced:
    case planner::PlannerKind::owt:
    case planner::PlannerKind::hypar:
    case planner::PlannerKind::tofu: return static_cast<double>(plans_made(kind, false));
    }
    return 1;
}

}  // namespace

WorkEstimate estimate_cluster(const config::Params& params, bool simulate,
                              const std::vector<planner::PlannerKind>& kinds) {
    const auto planners = kinds.size();
    double plans = 0;
    // AccPar's alpa plan is made once when alpa is compared too (run::ClusterCosts::plans).
    const bool alpa_too = std::find(kinds.begin(), kinds.end(), planner::PlannerKind::alpa) != kinds.end();
    const bool accpar_alpa = accpar_weighs_alpa(params);
    const double stages = pipeline_stages(params);
    // alpa's search, where a planner makes it: alpa's own, or AccPar's weighing of it.
    std::optional<planner::AlpaSearchSize> alpa;
    if (alpa_too || (accpar_alpa && std::find(kinds.begin(), kinds.end(), planner::PlannerKind::accpar) != kinds.end()))
        alpa = alpa_search_size(params);
    for (const planner::PlannerKind k : kinds)
        plans += plan_walks(
            k,
            k == planner::PlannerKind::alpa || (k == planner::PlannerKind::accpar && accpar_alpa && !alpa_too)
                ? alpa
                : std::nullopt,
            stages, params.planner.intra);
    // Only the pipeline planner: no all-reduce spans more than a stage's nodes, and no node
    // holds more than its stage's layers. So too alpa when the model cannot fit on one stage:
    // it then plans pipelines only, taken to have the pipeline planner's stage count (an
    // estimate: its own count is known once planned).
    const bool staged = std::all_of(kinds.begin(), kinds.end(), [&alpa](planner::PlannerKind k) {
        return k == planner::PlannerKind::pipeline || (k == planner::PlannerKind::alpa && !alpa->whole_fits);
    });
    WorkEstimate e;
    const config::ClusterParams& c = params.cluster;
    const auto nodes = static_cast<double>(c.node_type.size());
    const double set_nodes = staged ? std::ceil(nodes / stages) : nodes;
    const auto vertices = static_cast<double>(c.topology->vertex_count());
    const auto channels = static_cast<double>(c.topology->channel_count());
    const auto layers = static_cast<double>(params.workload.network.layers.size());
    const double depth = std::max(1.0, std::ceil(std::log2(std::max(nodes, 2.0))));
    const std::string topology = "a topology of " + format_count(vertices) + " vertices and " + format_count(channels) +
                                 " channels (cluster.groups)";
    // (1) Shortest-path trees from every node, rebuilt at every depth of the bisection when
    // the route cache cannot hold them all (interconnect::kMaxCachedRouteEntries).
    const auto cache = static_cast<double>(interconnect::kMaxCachedRouteEntries);
    const bool cached = nodes * vertices <= cache;
    e.add("shortest-path trees", nodes * (cached ? 1 : depth), kNsPerRouteEntry * (vertices + channels),
          "routing on " + topology);
    // (2) The node characterisation: each layer's phases at a node's share of the batch on
    // each node type used, for the three partition types at every depth of the hierarchy.
    double tiles = 0, most = 0;
    std::string where;
    std::vector<bool> used(c.node_types.size(), false);
    for (const std::size_t t : c.node_type) used[t] = true;
    const auto share = std::max<std::size_t>(1, params.workload.batch / c.node_type.size());
    for (std::size_t t = 0; t < c.node_types.size(); ++t) {
        if (!used[t]) continue;
        const TileCount count = step_tiles(share, c.node_types[t].node.resolved, params);
        tiles += 3 * (depth + 1) * count.tiles;
        if (count.most > most) {
            most = count.most;
            where = count.largest + " on node type '" + c.node_types[t].name + "'";
        }
    }
    e.add("characterisation tiles", tiles, kNsPerMemoTile, where);  // shared by every planner
    if (alpa) {
        const std::string search = "alpa's search over " + format_count(static_cast<double>(alpa->blocks)) +
                                   " blocks, " + format_count(static_cast<double>(alpa->mesh_classes)) +
                                   " sub-mesh classes and " +
                                   format_count(static_cast<double>(alpa->microbatch_counts)) + " micro-batch counts";
        e.add("alpa block node-layers", alpa->block_node_layers, kNsPerAlpaBlockNodeLayer, search);
        e.add("alpa stage costs", alpa->stage_costs, kNsPerAlpaStageCost, search);
    }
    // (3) The planner's table: a choice per layer at each of the 2N - 1 groups, for every plan
    // made (AccPar also makes the other planners' plans).
    const double entries = plans * (2 * nodes - 1) * layers;
    e.add("plan entries", entries, kNsPerPlanEntry,
          "planning " + format_count(layers) + " layers over " + format_count(2 * nodes - 1) + " groups of nodes");
    // (3b) Each plan's walk replays the step's gradient all-reduces (one micro-batch), and each
    // candidate AccPar or alpa ranks is replayed whole, every micro-batch
    // ([planner.md](planner.md#predictions)): a message books each hop of its route. Bound:
    // every layer's gradients all-reduced in sets of the largest message-level size s,
    // halving-doubling's 2 log2 s messages per rank each crossing half the mean route on
    // average (its partners 1, 2, 4, ... positions away; or the coalesced ring's 60 neighbour
    // messages, if more), and every layer's exchanges: one message across the mean route per
    // depth (at most one side of each cut sends).
    const double hops = mean_route_hops(*c.topology);
    const double largest_set = std::min(set_nodes, static_cast<double>(c.gradient_sync.message_level_max_ranks));
    const double per_rank =
        largest_set < 2 ? 0 : std::max(std::log2(largest_set) * hops, std::min(2 * (largest_set - 1), 60.0));
    // (4) The schedule run on the cluster: per node and layer three computes, the sends and
    // receives of the exchanges at each depth, and the ops of the gradient all-reduce.
    // Bound: every layer's gradients all-reduced over all the nodes, by the forced algorithm
    // or the one of most ops the chooser considers.
    double sync_ops = 0;
    const auto p = static_cast<std::size_t>(set_nodes);
    const auto forced = config::forced_all_reduce(c.gradient_sync.algorithm);
    // Only a set that is a whole grid of the topology (a group's ring or torus) is lowered
    // dimension by dimension; a set of more nodes than any grid holds runs the ring as one flat
    // ring, whose steps merge into rounds (GPT-3 175B's 1,024 nodes in 4x4 tori: 90 ops a
    // rank, not the 2p of rings per dimension).
    std::size_t largest_grid = 0;
    for (std::size_t n = 0; n < c.topology->node_count(); ++n)
        if (const interconnect::Topology::Grid* g = c.topology->grid_of(n))
            largest_grid = std::max(largest_grid, g->node_count());
    for (const interconnect::AllReduceAlgorithm a : interconnect::kAllReduceAlgorithms) {
        if (forced ? a != *forced : a == interconnect::AllReduceAlgorithm::direct && p > interconnect::kMaxDirectRanks)
            continue;
        const auto lowered = a == interconnect::AllReduceAlgorithm::ring && p > largest_grid
                                 ? interconnect::AllReduceAlgorithm::flat_ring
                                 : a;
        sync_ops = std::max(sync_ops, static_cast<double>(interconnect::simulated_all_reduce_ops_per_rank(lowered, p)));
    }
    // A pipeline runs every layer once per micro-batch.
    bool pipelined = false;
    for (const planner::PlannerKind k : kinds)  // AccPar may keep alpa's plan, a pipeline
        pipelined = pipelined || planner::is_pipeline(k) || (k == planner::PlannerKind::accpar && accpar_alpa);
    // alpa's plan has at most as many as it searches.
    const double microbatches = !pipelined                        ? 1.0
                                : params.planner.microbatches > 0 ? static_cast<double>(params.planner.microbatches)
                                : alpa && alpa->most_microbatches > 0
                                    ? static_cast<double>(alpa->most_microbatches)
                                    : static_cast<double>(planner::kMaxSearchedMicrobatches);
    // A node of the pipeline planner's holds its stage's layers only.
    const double node_layers = staged ? layers / stages : layers;
    const double per_microbatch = nodes * node_layers * (4 + 2 * depth);
    // A pipeline's step of more than kStageLevelAboveOps ops runs at stage level
    // (docs/pipeline.md, "Stage-level simulation"), unless it has a delayed update: each stage's
    // three pieces, about one and a half micro-batches' ops, are what the replay and the
    // executor run.
    const bool stage_level_allowed =
        c.gradient_sync.staleness == 0 && c.pipeline_simulation != config::PipelineSimulation::message_level;
    const bool stage_level =
        stage_level_allowed && (c.pipeline_simulation == config::PipelineSimulation::stage_level ||
                                per_microbatch * microbatches > static_cast<double>(config::kStageLevelAboveOps));
    const double run_microbatches = stage_level ? std::min(microbatches, 1.5) : microbatches;
    const double ops = per_microbatch * run_microbatches + nodes * node_layers * sync_ops;
    double replays = 0;  // the candidates replayed whole: AccPar's planners and DP plans, alpa's finalists
    for (const planner::PlannerKind k : kinds)
        replays += k == planner::PlannerKind::accpar ? 8 : planner::is_pipeline(k) ? 4 : 1;
    const double replayed_hops =
        nodes * node_layers *
        (plans * (per_rank + depth * hops) + replays * (per_rank + depth * run_microbatches * hops));
    e.add("replayed message hops", replayed_hops, kNsPerReplayedHop,
          "walking and replaying each plan's step (routes of " + format_count(hops) + " hops on average)");
    if (simulate)
        e.add("cluster ops", static_cast<double>(planners) * ops,
              kNsPerClusterOp + kNsPerClusterOpPerNode * nodes +
                  (cached ? 0 : kNsPerClusterOpPerVertexUncached * vertices),
              "simulating " + format_count(nodes) + " nodes on " + topology);
    const double planning_bytes =
        std::min(nodes * vertices, cache) * kBytesPerRouteEntry + entries / std::max(1.0, plans) * kBytesPerPlanEntry;
    // Without a delayed update the planners replay the plan they keep, which counts the ops its
    // simulation holds: run_cluster_step checks those (check_simulation_memory) rather than
    // this bound, which counts every layer's all-reduce over every node.
    const bool checked_once_planned = c.gradient_sync.staleness == 0;
    const double simulating_bytes =
        !simulate ? 0 : (checked_once_planned ? 0 : ops * kBytesPerClusterOp) + nodes * kBytesPerClusterNode;
    e.memory_bytes = planning_bytes + simulating_bytes;
    e.memory_where = (simulate ? "planning and simulating " : "planning ") + format_count(nodes) + " nodes";
    // Every term grows at least linearly with the node count, so nodes x limit / need fit.
    const double limit = run_memory_limit_bytes();
    if (e.memory_bytes > limit) {
        const double fit = std::floor(nodes * limit / e.memory_bytes);
        std::vector<std::string> ways;
        if (fit >= 1) ways.push_back("fewer nodes (about " + format_count(fit) + " would fit; cluster.groups[].count)");
        if (simulate && planning_bytes <= limit) ways.push_back("planning without the simulation (fastsim plan)");
        if (!pipelined) ways.push_back("another planner (planner.name)");
        std::string text = "what would fit: ";
        for (std::size_t i = 0; i < ways.size(); ++i) text += (i ? i + 1 == ways.size() ? " or " : ", " : "") + ways[i];
        if (!ways.empty()) e.memory_remedy = text;
    }
    return e;
}

void check_simulation_memory(const config::Params& params, std::uint64_t ops, bool pipeline) {
    const auto count = static_cast<double>(ops);
    const WorkEstimate e = estimate_network_ops(params, count, "the plan's " + format_count(count) + " ops");
    if (e.memory_bytes <= run_memory_limit_bytes()) return;
    const auto nodes = static_cast<double>(params.cluster.node_type.size());
    const double fit = std::floor(nodes * run_memory_limit_bytes() / e.memory_bytes);
    throw UserError(
        params.source_file + ": simulating the plan would need about " + format_bytes(e.memory_bytes) +
        " of memory for its " + format_count(count) + " ops (counted by the planner's replay of it), more than the " +
        format_bytes(run_memory_limit_bytes()) +
        " this machine allows a run (three quarters of its memory); what would fit: " +
        (fit >= 1 ? "fewer nodes (about " + format_count(fit) + " would fit; cluster.groups[].count), " : "") +
        "the plan alone (fastsim plan), " +
        (pipeline && params.cluster.pipeline_simulation == config::PipelineSimulation::message_level
             ? "the stage-level simulation (cluster.pipeline_simulation auto or stage_level), "
             : "") +
        "or a plan of fewer ops (planner.name)");
}

WorkEstimate estimate_network_ops(const config::Params& params, double ops, const std::string& what) {
    WorkEstimate e;
    const auto nodes = static_cast<double>(params.cluster.topology->node_count());
    const auto vertices = static_cast<double>(params.cluster.topology->vertex_count());
    const bool cached = nodes * vertices <= static_cast<double>(interconnect::kMaxCachedRouteEntries);
    e.add("cluster ops", ops,
          kNsPerClusterOp + kNsPerClusterOpPerNode * nodes + (cached ? 0 : kNsPerClusterOpPerVertexUncached * vertices),
          what);
    e.memory_bytes =
        ops * kBytesPerClusterOp + nodes * kBytesPerClusterNode +
        std::min(nodes * vertices, static_cast<double>(interconnect::kMaxCachedRouteEntries)) * kBytesPerRouteEntry;
    e.memory_where = what;
    return e;
}

WorkEstimate estimate_scalesim(double requests, const std::string& largest) {
    WorkEstimate e;
    e.add("SCALE-Sim demand requests", requests, kNsPerScaleSimRequest, largest);
    return e;
}

WorkEstimate estimate_bfp_report(const config::Params& params) {
    const auto& report = params.bfp_report;
    const auto passes = static_cast<double>(report.mantissa_bits.size() * report.roundings.size());
    double values = 0;
    WorkEstimate e;
    std::string where;
    for (std::size_t i = 0, most = 0; i < report.tensors.size(); ++i) {
        const config::TensorSpec& t = report.tensors[i];
        values += static_cast<double>(t.count);
        if (t.count > most) {
            most = t.count;
            where = "tensor '" + t.name + "' (bfp_report.tensors[" + std::to_string(i) +
                    "].count = " + std::to_string(t.count) + ", times " + std::to_string(report.mantissa_bits.size()) +
                    " bfp_report.mantissa_bits and " + std::to_string(report.roundings.size()) +
                    " bfp_report.rounding modes)";
            e.memory_bytes = static_cast<double>(t.count) * kBytesPerReportValue;
            e.memory_where = "tensor '" + t.name + "' (bfp_report.tensors[" + std::to_string(i) + "].count)";
        }
    }
    e.add("values drawn", values, kNsPerDrawnValue, where);
    e.add("values quantised", values * passes, kNsPerQuantisedValue, where);
    return e;
}

WorkEstimate estimate_training(const config::TrainConfig& config, std::size_t train_samples, std::size_t test_samples) {
    WorkEstimate e;
    const learning::TrainParams& t = config.train;
    double macs_per_sample = 0;
    for (const learning::GemmLayerShape& s : learning::Network(t.network, t.seed).gemm_shapes()) {
        if (s.conv) {
            const double out_h = s.in_height + 2.0 * s.padding - s.kernel + 1,
                         out_w = s.in_width + 2.0 * s.padding - s.kernel + 1;
            macs_per_sample += out_h * out_w * s.kernel * s.kernel * s.in_channels * s.filters;
        } else {
            macs_per_sample += static_cast<double>(s.in_features) * s.out_features;
        }
    }
    if (t.network == learning::NetworkKind::cnn) macs_per_sample *= kCnnOverhead;
    const double batches_per_epoch = std::ceil(static_cast<double>(train_samples) / static_cast<double>(t.batch));
    double iterations = static_cast<double>(t.epochs) * batches_per_epoch;
    if (t.max_iterations > 0) iterations = std::min(iterations, static_cast<double>(t.max_iterations));
    const double epochs_run = std::ceil(iterations / batches_per_epoch);
    // An iteration runs three GEMMs per layer on a batch; each epoch ends with a forward pass
    // over the test set.
    const double macs_per_policy = iterations * 3 * static_cast<double>(t.batch) * macs_per_sample +
                                   epochs_run * static_cast<double>(test_samples) * macs_per_sample;
    double fp32 = 0, bfp = 0;
    for (const learning::PolicySpec& p : config.policies)
        (p.kind == learning::PolicyKind::fp32 ? fp32 : bfp) += macs_per_policy;
    char iterations_text[32];
    std::snprintf(iterations_text, sizeof iterations_text, "%.0f", iterations);
    const std::string where = std::to_string(config.policies.size()) + " policies of " + iterations_text +
                              " iterations each (train.epochs " + std::to_string(t.epochs) + ", train.batch " +
                              std::to_string(t.batch) + ", train.max_iterations " + std::to_string(t.max_iterations) +
                              ")";
    e.add("fp32 training MACs", fp32, kNsPerTrainMacFp32, where);
    e.add("BFP training MACs", bfp,
          t.path == learning::GemmPath::exact ? kNsPerTrainMacBfpExact : kNsPerTrainMacBfpFast, where);
    e.memory_bytes = static_cast<double>(train_samples + test_samples) * 784 * kBytesPerTrainPixel;
    e.memory_where = "the Fashion-MNIST images";
    return e;
}

}  // namespace fastsim::run
