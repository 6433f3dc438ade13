// SPDX-License-Identifier: MIT
#include "planner/pipeline.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <optional>
#include <queue>
#include <map>
#include <set>
#include <stdexcept>
#include <string>
#include <tuple>
#include <unordered_map>

#include "common/checked.h"
#include "planner/prediction.h"
#include "planner/schedule.h"
#include "planner/strategy.h"

namespace fastsim::planner {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
/// alpa's t_max scan: every distinct stage latency up to this many, else ...
constexpr std::size_t kScanAllCandidates = 1024;
/// ... only latencies at least this factor apart (1%).
constexpr double kScanSpacing = 1.01;
/// alpa predicts exactly each of its per-micro-batch-count choices whose objective is within
/// this factor of the best one's.
constexpr double kAlpaObjectiveSlack = 1.25;

/// One stage's nodes as a cluster of its own: the same node ids, its own order and cuts.
struct StageCluster {
    ClusterView view;
    std::vector<Group> groups;
};

StageCluster stage_cluster(const PlanningInputs& in, std::size_t first_position, std::size_t end_position) {
    StageCluster c;
    c.view.node_type = in.cluster.node_type;
    c.view.order.assign(in.cluster.order.begin() + static_cast<std::ptrdiff_t>(first_position),
                        in.cluster.order.begin() + static_cast<std::ptrdiff_t>(end_position));
    for (const std::size_t cut : in.cluster.preferred_cuts)
        if (cut > first_position && cut < end_position) c.view.preferred_cuts.push_back(cut - first_position);
    c.groups = bisect(c.view, in.exchange);
    return c;
}

/// How a stage's plan is made from its own planning inputs and options: by its intra planner,
/// or from given decisions.
using StagePlanner = std::function<Plan(const PlanningInputs& stage_inputs, const PlannerOptions& intra)>;

Plan plan_by_intra_planner(const PlanningInputs& stage_inputs, const PlannerOptions& intra) {
    return strategy_of(intra.kind).plan(stage_inputs, intra);
}

/// alpa's block costs: the intra planner's hierarchy DP alone, without calibration rounds (for
/// accpar, without the other planners' plans it also weighs), unless that plan does not fit in
/// memory. The DP's choices are then planned again by plan_by_intra_planner and predicted whole.
Plan plan_block_quickly(const PlanningInputs& stage_inputs, const PlannerOptions& intra) {
    Plan plan = plan_hierarchy_unwalked(stage_inputs, strategy_of(intra.kind).rules(intra), intra);
    if (!plan.memory_shortfalls.empty()) return plan_by_intra_planner(stage_inputs, intra);
    return plan;
}

/// Which walks plan_stage predicts: the forward and backward of a micro-batch, and the last
/// backward with its all-reduces (sync_tail_s), which alpa's block costs do not use.
enum class StageWalks { forward_backward, with_sync_tail };

/// A stage planned and predicted (not yet given its in-flight count or transfers) on `cluster`
/// (stage_cluster of its node positions).
PipelineStage plan_stage(const PlanningInputs& in, const PlannerOptions& options, std::size_t first, std::size_t end,
                         const StageCluster& cluster, std::uint64_t microbatch_size,
                         std::vector<double>* layer_s = nullptr,
                         const StagePlanner& stage_planner = plan_by_intra_planner,
                         StageWalks walks = StageWalks::with_sync_tail) {
    PipelineStage s;
    s.first_layer = first;
    s.end_layer = end;
    s.graph = stage_graph(in.graph, first, end, microbatch_size);
    s.nodes = cluster.view.order;
    const ComputeModel& network_compute = in.compute;
    const ComputeModel compute = [&network_compute, first](std::size_t type, LayerId l, const LayerDims& d) {
        return network_compute(type, LayerId(first + l.value()), d);
    };
    const PlanningInputs stage_in{s.graph,
                                  cluster.view,
                                  cluster.groups,
                                  compute,
                                  in.bytes,
                                  in.gradient_sync,
                                  in.memory,
                                  in.node_type_names,
                                  {},
                                  in.exchange,
                                  {}};
    PlannerOptions intra = options;
    intra.kind = options.pipeline.intra;
    intra.weigh_pipelines = false;
    s.plan = stage_planner(stage_in, intra);
    const std::size_t network_layers = in.graph.layers.size();
    StepWalk walk;
    walk.first_layer = first;
    walk.network_layers = network_layers;
    walk.backward = false;
    const StepPrediction forward =
        predict_step(s.graph, s.plan, in.cluster.node_type, compute, *in.gradient_sync, walk);
    walk.forward = false;
    walk.backward = true;
    walk.sync = false;
    const StepPrediction backward =
        predict_step(s.graph, s.plan, in.cluster.node_type, compute, *in.gradient_sync, walk);
    s.forward_s = forward.step_s;
    s.backward_s = backward.step_s;
    if (walks == StageWalks::with_sync_tail) {
        walk.sync = true;
        const StepPrediction synced =
            predict_step(s.graph, s.plan, in.cluster.node_type, compute, *in.gradient_sync, walk);
        s.sync_tail_s = std::max(0.0, synced.step_s - backward.step_s);
    }
    if (layer_s) {
        layer_s->assign(end - first, 0);
        for (std::size_t l = 0; l < end - first; ++l) (*layer_s)[l] = forward.layer_s[l] + backward.layer_s[l];
    }
    return s;
}

/// The largest divisor of `batch` that is at most `limit` (at least 1).
std::uint64_t largest_divisor_at_most(std::uint64_t batch, std::uint64_t limit) {
    for (std::uint64_t m = std::min(batch, limit); m > 1; --m)
        if (batch % m == 0) return m;
    return 1;
}

/// Tensors crossing from earlier stages into each stage, per micro-batch, and their cost.
std::vector<StageTransfer> stage_transfers(const PlanningInputs& in, const std::vector<PipelineStage>& stages,
                                           std::uint64_t microbatch_size) {
    const LayerGraph& graph = in.graph;
    std::vector<std::size_t> stage_of(graph.layers.size(), 0);
    for (std::size_t s = 0; s < stages.size(); ++s)
        for (std::size_t l = stages[s].first_layer; l < stages[s].end_layer; ++l) stage_of[l] = s;
    std::map<std::pair<std::size_t, std::size_t>, double> elements;  // (from, to) -> elements
    std::set<std::pair<std::size_t, std::size_t>> counted;           // (tensor, to stage) already sent
    for (std::size_t l = 0; l < graph.layers.size(); ++l)
        for (const Edge& e : graph.layers[l].producers) {
            const std::size_t from = stage_of[e.from], to = stage_of[l];
            if (from == to) continue;
            // A tensor is a producer's output, or (AccPar's block shortcut) its input.
            const std::size_t tensor = 2 * e.from + (e.kind == EdgeKind::accpar_block ? 1 : 0);
            if (!counted.insert({tensor, to}).second) continue;
            const PlanLayer& p = graph.layers[e.from];
            LayerDims d = p.dims;
            d.batch = microbatch_size;
            elements[{from, to}] +=
                static_cast<double>(e.kind == EdgeKind::accpar_block ? p.input_elements(d) : p.output_elements(d));
        }
    std::vector<StageTransfer> out;
    for (const auto& [pair, count] : elements) {
        StageTransfer t;
        t.from = pair.first;
        t.to = pair.second;
        t.cost = in.exchange(stages[t.from].nodes, stages[t.to].nodes);
        // In the sender's format (side A = from): activations into B, gradients back into A.
        const double forward_width =
            t.cost.into_b[0].wire_bytes > 0 ? t.cost.into_b[0].wire_bytes : in.bytes.activations;
        const double backward_width =
            t.cost.into_a[1].wire_bytes > 0 ? t.cost.into_a[1].wire_bytes : in.bytes.gradients;
        t.forward_bytes = count * forward_width;
        t.backward_bytes = count * backward_width;
        out.push_back(t);
    }
    return out;
}

/// Gives each stage its order's in-flight count and memory, the transfers, and predicts.
void finish_pipeline(const PlanningInputs& in, PipelinePlan& p) {
    const std::size_t stages = p.stages.size();
    for (std::size_t s = 0; s < stages; ++s) {
        PipelineStage& stage = p.stages[s];
        stage.in_flight = peak_in_flight(stage_order(p.schedule, stages, s, p.microbatches));
        stage.busy_s = static_cast<double>(p.microbatches) * (stage.forward_s + stage.backward_s);
        stage.memory_bytes = 0;
        for (const std::size_t n : stage.nodes) {
            Footprint f = stage.plan.footprint[n];
            f.stashed_activations *= static_cast<double>(stage.in_flight);
            stage.memory_bytes = std::max(stage.memory_bytes, f.total());
        }
    }
    p.transfers = stage_transfers(in, p.stages, p.microbatch_size);
    p.set_step(predict_pipeline(in, p));
}

/// The plan of the whole cluster that carries `pipeline` (docs/pipeline.md, "Plan").
Plan assemble(const PlanningInputs& in, const PlannerOptions& options, PipelinePlan pipeline,
              const std::vector<std::vector<double>>& stage_layer_s) {
    const std::size_t layers = in.graph.layers.size(), nodes = in.cluster.node_type.size();
    const double m = static_cast<double>(pipeline.microbatches);
    Plan plan;
    plan.options = options;
    plan.chosen_from = options.kind;
    plan.bytes = in.bytes;
    plan.objective = Objective::time;
    plan.split = pipeline.stages.front().plan.split;
    Group root;
    root.nodes = in.cluster.order;
    plan.groups = {root};
    plan.choices.resize(1);
    plan.node_dims.assign(nodes, std::vector<LayerDims>(layers, LayerDims{0, 0, 0}));
    plan.compute_s.assign(layers, PhaseSeconds{});
    plan.forward_comm_s.assign(layers, 0);
    plan.backward_comm_s.assign(layers, 0);
    plan.sync_comm_s.assign(layers, 0);
    plan.layer_step_s.assign(layers, 0);
    plan.footprint.assign(nodes, Footprint{});
    for (std::size_t s = 0; s < pipeline.stages.size(); ++s) {
        const PipelineStage& stage = pipeline.stages[s];
        const Plan& sp = stage.plan;
        for (std::size_t l = stage.first_layer; l < stage.end_layer; ++l) {
            const std::size_t local = l - stage.first_layer;
            for (const std::size_t n : stage.nodes) plan.node_dims[n][l] = sp.node_dims[n][local];
            for (std::size_t ph = 0; ph < kWeightUpdate; ++ph) plan.compute_s[l][ph] = m * sp.compute_s[local][ph];
            plan.compute_s[l][kWeightUpdate] = sp.compute_s[local][kWeightUpdate];  // once a step
            plan.forward_comm_s[l] = m * sp.forward_comm_s[local];
            plan.backward_comm_s[l] = m * sp.backward_comm_s[local];
            plan.sync_comm_s[l] = sp.sync_comm_s[local];
            // The mean node's (over the cluster) compute and waits under the layer's labels.
            plan.layer_step_s[l] =
                m * stage_layer_s[s][local] * static_cast<double>(stage.nodes.size()) / static_cast<double>(nodes);
            // and its weight updates, once a step (stage_layer_s walks the micro-batches unsynced)
            for (const std::size_t n : stage.nodes)
                plan.layer_step_s[l] +=
                    in.compute(in.cluster.node_type[n], LayerId(l), plan.node_dims[n][l])[kWeightUpdate] /
                    static_cast<double>(nodes);
        }
        plan.comm_bytes += m * sp.comm_bytes;
        for (const std::size_t n : stage.nodes) {
            plan.footprint[n] = sp.footprint[n];
            plan.footprint[n].stashed_activations *= static_cast<double>(stage.in_flight);
        }
    }
    for (const StageTransfer& t : pipeline.transfers) plan.comm_bytes += m * (t.forward_bytes + t.backward_bytes);
    plan.memory_shortfalls = memory_shortfalls(plan.footprint, in.cluster.node_type, in.memory);
    plan.step_s = pipeline.step_s;
    plan.pipeline = std::make_shared<const PipelinePlan>(std::move(pipeline));
    if (in.plan_made) in.plan_made();
    return plan;
}

/// Each stage's node positions: `stages` contiguous ranges of nearly equal size, the first
/// ones one node larger.
std::vector<MeshRange> equal_node_ranges(std::size_t first, std::size_t end, std::size_t stages) {
    std::vector<MeshRange> out;
    const std::size_t nodes = end - first;
    std::size_t at = first;
    for (std::size_t s = 0; s < stages; ++s) {
        const std::size_t size = nodes / stages + (s < nodes % stages ? 1 : 0);
        out.push_back({at, at + size});
        at += size;
    }
    return out;
}

/// The positions where the cluster's groups start, ascending, and the node count after them.
std::vector<std::size_t> group_bounds(const ClusterView& cluster) {
    std::vector<std::size_t> bounds{0};
    for (const std::size_t c : cluster.preferred_cuts) bounds.push_back(c);
    bounds.push_back(cluster.order.size());
    std::sort(bounds.begin(), bounds.end());
    bounds.erase(std::unique(bounds.begin(), bounds.end()), bounds.end());
    return bounds;
}

/// Each stage's node positions, placed on the cluster's groups (docs/pipeline.md, "The
/// `pipeline` planner"):
/// with as many stages as groups, a stage per group; with fewer, runs of whole consecutive
/// groups of nearly equal speed (each cut at the group boundary nearest the next equal share of
/// the cluster's speed); with more, each group's nodes split evenly among the stages it gets,
/// in proportion to its speed, at least one each. `speed[p]` is the node at position p's
/// speed (any unit).
std::vector<MeshRange> stage_node_ranges(const ClusterView& cluster, std::size_t stages,
                                         const std::vector<double>& speed) {
    const std::vector<std::size_t> bounds = group_bounds(cluster);
    const std::size_t groups = bounds.size() - 1;
    std::vector<double> prefix(cluster.order.size() + 1, 0.0);
    for (std::size_t p = 0; p < cluster.order.size(); ++p) prefix[p + 1] = prefix[p] + speed[p];
    std::vector<MeshRange> out;
    if (stages <= groups) {
        // Stage s ends at the boundary nearest (s + 1) / stages of the speed, leaving a group
        // for each later stage.
        std::size_t at = 0;  // index into bounds
        for (std::size_t s = 0; s < stages; ++s) {
            std::size_t end = bounds.size() - 1 - (stages - 1 - s);
            if (s + 1 < stages) {
                const double target = prefix.back() * static_cast<double>(s + 1) / static_cast<double>(stages);
                std::size_t best = at + 1;
                for (std::size_t b = at + 1; b <= end; ++b)
                    if (std::abs(prefix[bounds[b]] - target) < std::abs(prefix[bounds[best]] - target)) best = b;
                end = best;
            }
            out.push_back({bounds[at], bounds[end]});
            at = end;
        }
        return out;
    }
    // More stages than groups: one each, the rest one at a time to the group whose stages are
    // the fastest (speed per stage), while it has nodes to spare.
    std::vector<std::size_t> count(groups, 1);
    for (std::size_t extra = stages - groups; extra > 0; --extra) {
        std::size_t pick = groups;
        double pick_speed = 0;
        for (std::size_t g = 0; g < groups; ++g) {
            if (count[g] >= bounds[g + 1] - bounds[g]) continue;
            const double per_stage = (prefix[bounds[g + 1]] - prefix[bounds[g]]) / static_cast<double>(count[g]);
            if (pick == groups || per_stage > pick_speed) {
                pick = g;
                pick_speed = per_stage;
            }
        }
        ++count[pick];  // stages <= nodes, so some group has nodes to spare
    }
    for (std::size_t g = 0; g < groups; ++g)
        for (const MeshRange& r : equal_node_ranges(bounds[g], bounds[g + 1], count[g])) out.push_back(r);
    return out;
}

/// Seconds a range of nodes takes for layer l at `dims`, sharing it in proportion to speed
/// (the hierarchy's estimate of a side).
double range_estimate(const PlanningInputs& in, const MeshRange& r, std::size_t l, const LayerDims& dims) {
    std::vector<std::size_t> type_counts;
    for (std::size_t p = r.first; p < r.end; ++p) {
        const std::size_t type = in.cluster.node_type[in.cluster.order[p]];
        if (type >= type_counts.size()) type_counts.resize(type + 1, 0);
        ++type_counts[type];
    }
    return speed_estimate(in.compute, type_counts, in.graph.layers[l], LayerId(l), dims);
}

/// Per node position: its speed, 1 / its seconds for the whole network at `microbatch_size`.
std::vector<double> position_speeds(const PlanningInputs& in, std::uint64_t microbatch_size) {
    std::vector<double> type_speed, speed;
    for (const std::size_t node : in.cluster.order) {
        const std::size_t type = in.cluster.node_type[node];
        if (type >= type_speed.size()) type_speed.resize(type + 1, 0.0);
        if (type_speed[type] == 0) {
            double seconds = 0;
            for (std::size_t l = 0; l < in.graph.layers.size(); ++l) {
                LayerDims d = in.graph.layers[l].dims;
                d.batch = microbatch_size;
                const PhaseSeconds t = in.compute(type, LayerId(l), d);
                seconds += t[0] + t[1] + t[2];
            }
            type_speed[type] = seconds > 0 ? 1 / seconds : 1;
        }
        speed.push_back(type_speed[type]);
    }
    return speed;
}

/// Layer ranges [first, end) per stage, minimising the slowest stage's estimated time (each
/// stage's layers on its node range, at the micro-batch).
std::vector<std::size_t> balanced_cuts(const PlanningInputs& in, const std::vector<MeshRange>& ranges,
                                       std::uint64_t microbatch_size) {
    const std::size_t layers = in.graph.layers.size(), stages = ranges.size();
    std::vector<std::vector<double>> prefix(stages, std::vector<double>(layers + 1, 0));
    for (std::size_t s = 0; s < stages; ++s)
        for (std::size_t l = 0; l < layers; ++l) {
            LayerDims d = in.graph.layers[l].dims;
            d.batch = microbatch_size;
            prefix[s][l + 1] = prefix[s][l] + range_estimate(in, ranges[s], l, d);
        }
    // best[s][l]: the smallest slowest-stage time of layers [0, l) on stages [0, s).
    std::vector<std::vector<double>> best(stages + 1, std::vector<double>(layers + 1, kInfinity));
    std::vector<std::vector<std::size_t>> from(stages + 1, std::vector<std::size_t>(layers + 1, 0));
    best[0][0] = 0;
    for (std::size_t s = 1; s <= stages; ++s)
        for (std::size_t l = s; l <= layers; ++l)
            for (std::size_t k = s - 1; k < l; ++k) {
                const double v = std::max(best[s - 1][k], prefix[s - 1][l] - prefix[s - 1][k]);
                if (v < best[s][l]) {
                    best[s][l] = v;
                    from[s][l] = k;
                }
            }
    std::vector<std::size_t> ends(stages);
    for (std::size_t s = stages, l = layers; s > 0; --s) {
        ends[s - 1] = l;
        l = from[s][l];
    }
    return ends;
}

/// The micro-batch count alpa searches after `count` past kMaxSearchedMicrobatches: the next
/// power of two dividing `batch`, else the batch itself (one sample each); 0 after that.
std::uint64_t next_searched_microbatches(std::uint64_t batch, std::uint64_t count) {
    if (count >= batch) return 0;
    const bool power_of_two = (count & (count - 1)) == 0;
    if (power_of_two)
        for (std::uint64_t m = 2 * count; m <= batch && m > count; m *= 2)
            if (batch % m == 0) return m;
    return batch;
}

std::uint64_t microbatch_size_or_throw(std::uint64_t batch, std::size_t microbatches) {
    if (microbatches == 0 || batch % microbatches != 0)
        throw PlanError("planner.pipeline.microbatches " + std::to_string(microbatches) +
                        " does not divide the batch of " + std::to_string(batch) + " into equal micro-batches");
    return batch / microbatches;
}

}  // namespace

/// The `pipeline` planner: stages as planner.pipeline gives them.
Plan plan_given_stages(const PlanningInputs& in, const PlannerOptions& options) {
    const PipelineOptions& po = options.pipeline;
    const std::size_t layers = in.graph.layers.size(), nodes = in.cluster.order.size();
    std::vector<std::size_t> ends;  // per stage, its end layer
    if (!po.stage_layers.empty()) {
        std::size_t next = 0;
        for (std::size_t s = 0; s < po.stage_layers.size(); ++s) {
            if (po.stage_layers[s].empty())
                throw PlanError("planner.pipeline.stages[" + std::to_string(s) + "] lists no layers");
            for (const std::string& name : po.stage_layers[s]) {
                if (next >= layers || in.graph.layers[next].name != name) {
                    std::string expected = next < layers ? "'" + in.graph.layers[next].name + "'" : "no more layers";
                    throw PlanError("planner.pipeline.stages[" + std::to_string(s) + "] lists '" + name +
                                    "' where the network's next layer is " + expected +
                                    ": stages list every layer once, in the trace's order");
                }
                ++next;
            }
            ends.push_back(next);
        }
        if (next != layers)
            throw PlanError("planner.pipeline.stages lists " + std::to_string(next) + " of the network's " +
                            std::to_string(layers) + " layers; the first one missing is '" +
                            in.graph.layers[next].name + "'");
    }
    const std::size_t stages = !ends.empty()   ? ends.size()
                               : po.stages > 0 ? po.stages
                                               : in.cluster.preferred_cuts.size() + 1;
    if (stages > nodes)
        throw PlanError("planner.pipeline asks for " + std::to_string(stages) + " stages but the cluster has " +
                        std::to_string(nodes) + " nodes: each stage needs at least one");
    if (stages > layers)
        throw PlanError("planner.pipeline asks for " + std::to_string(stages) + " stages but the network has " +
                        std::to_string(layers) + " layers: each stage needs at least one");
    const std::uint64_t batch = in.graph.layers.front().dims.batch;
    std::size_t microbatches = po.microbatches > 0 ? po.microbatches : largest_divisor_at_most(batch, 4 * stages);
    std::uint64_t size = microbatch_size_or_throw(batch, microbatches);
    const std::vector<MeshRange> ranges = stage_node_ranges(in.cluster, stages, position_speeds(in, size));
    if (po.microbatches == 0) {
        // Fewer micro-batches where needed for one sample per node of the largest stage.
        std::size_t widest = 1;
        for (const MeshRange& r : ranges) widest = std::max(widest, r.end - r.first);
        if (size < widest) {
            microbatches = largest_divisor_at_most(batch, std::max<std::uint64_t>(1, batch / widest));
            size = batch / microbatches;
        }
    }
    if (ends.empty()) ends = balanced_cuts(in, ranges, size);
    PipelinePlan p;
    p.schedule = po.schedule;
    p.microbatches = microbatches;
    p.microbatch_size = size;
    std::vector<std::vector<double>> layer_s(stages);
    for (std::size_t s = 0; s < stages; ++s)
        p.stages.push_back(plan_stage(in, options, s == 0 ? 0 : ends[s - 1], ends[s],
                                      stage_cluster(in, ranges[s].first, ranges[s].end), size, &layer_s[s]));
    finish_pipeline(in, p);
    return assemble(in, options, std::move(p), layer_s);
}

Plan evaluate_pipeline(const PlanningInputs& in, const PlannerOptions& options, const PipelineDecisions& given) {
    const std::size_t layers = in.graph.layers.size(), nodes = in.cluster.order.size();
    if (given.stages.empty()) throw PlanError("pipeline.stages lists no stage");
    std::vector<std::size_t> position(nodes, nodes);  // per node id, its place in topology order
    for (std::size_t i = 0; i < nodes; ++i) position[in.cluster.order[i]] = i;
    std::vector<MeshRange> ranges;
    std::size_t next_layer = 0, next_position = 0;
    for (std::size_t s = 0; s < given.stages.size(); ++s) {
        const StageDecisions& st = given.stages[s];
        const std::string at = "pipeline.stages[" + std::to_string(s) + "]";
        if (st.first_layer != next_layer || st.end_layer <= st.first_layer || st.end_layer > layers)
            throw PlanError(at + " runs layers " + std::to_string(st.first_layer) + " .. " +
                            std::to_string(st.end_layer) + "; stages list every one of the network's " +
                            std::to_string(layers) + " layers once, in the trace's order, the next being layer " +
                            std::to_string(next_layer));
        for (std::size_t i = 0; i < st.nodes.size(); ++i)
            if (st.nodes[i] >= nodes || position[st.nodes[i]] != next_position + i)
                throw PlanError(
                    at + ".nodes[" + std::to_string(i) + "] is node " + std::to_string(st.nodes[i]) +
                    "; stages take consecutive runs of the " + std::to_string(nodes) +
                    " nodes in topology order, every node once, so it must be node " +
                    std::to_string(next_position + i < nodes ? in.cluster.order[next_position + i] : nodes));
        if (st.nodes.empty()) throw PlanError(at + ".nodes lists no node");
        ranges.push_back({next_position, next_position + st.nodes.size()});
        next_layer = st.end_layer;
        next_position += st.nodes.size();
    }
    if (next_layer != layers || next_position != nodes)
        throw PlanError("pipeline.stages cover " + std::to_string(next_layer) + " of the " + std::to_string(layers) +
                        " layers and " + std::to_string(next_position) + " of the " + std::to_string(nodes) +
                        " nodes; they must cover every one");
    const std::uint64_t batch = in.graph.layers.front().dims.batch;
    if (given.microbatches == 0 || batch % given.microbatches != 0)
        throw PlanError("pipeline.microbatches " + std::to_string(given.microbatches) +
                        " does not divide the batch of " + std::to_string(batch) + " into equal micro-batches");
    const std::uint64_t size = batch / given.microbatches;
    PipelinePlan p;
    p.schedule = given.schedule;
    p.microbatches = given.microbatches;
    p.microbatch_size = size;
    p.objective_s = given.objective_s;
    std::vector<std::vector<double>> layer_s(given.stages.size());
    for (std::size_t s = 0; s < given.stages.size(); ++s) {
        const StageDecisions& st = given.stages[s];
        const std::string where = "pipeline.stages[" + std::to_string(s) + "].groups";
        const StagePlanner given_stage = [&](const PlanningInputs& stage_in, const PlannerOptions& intra) {
            return evaluate_hierarchy(stage_in, st.intra, intra, where);
        };
        p.stages.push_back(plan_stage(in, options, st.first_layer, st.end_layer,
                                      stage_cluster(in, ranges[s].first, ranges[s].end), size, &layer_s[s],
                                      given_stage));
    }
    finish_pipeline(in, p);
    Plan plan = assemble(in, options, std::move(p), layer_s);
    plan.chosen_from = given.chosen_from;
    return plan;
}

namespace {

// ---- alpa -------------------------------------------------------------------------------

/// Sub-meshes Alpa may give a stage (docs/pipeline.md, "Automatic search"): inside one cluster
/// group, aligned power-of-two ranges and the whole group; and runs of whole consecutive groups.
std::vector<MeshRange> alpa_meshes(const ClusterView& cluster) {
    const std::vector<std::size_t> bounds = group_bounds(cluster);
    std::vector<MeshRange> out;
    for (std::size_t g = 0; g + 1 < bounds.size(); ++g) {
        const std::size_t first = bounds[g], end = bounds[g + 1], size = end - first;
        for (std::size_t width = 1; width < size; width *= 2)
            for (std::size_t at = first; at + width <= end; at += width) out.push_back({at, at + width});
        for (std::size_t last = g + 1; last < bounds.size(); ++last) out.push_back({first, bounds[last]});
    }
    return out;
}

/// A key equal for blocks the planner sees alike: each layer's kind, sizes, in-block edges and
/// the vector-unit layers it carries.
std::string block_signature(const LayerGraph& graph, std::size_t first, std::size_t end) {
    std::string key;
    const auto put = [&key](std::uint64_t v) { key.append(reinterpret_cast<const char*>(&v), sizeof v); };
    for (std::size_t l = first; l < end; ++l) {
        const PlanLayer& p = graph.layers[l];
        for (const workload::HostedLayer& h : p.carried()) {
            const workload::Layer& v = h.layer;
            for (const int x : {int(v.kind), v.in_height, v.in_width, v.in_channels, v.kernel_height, v.kernel_width,
                                v.stride, v.stride_width, v.padding, int(v.pool_mode), int(v.partial_windows),
                                int(v.inputs.size()), int(h.on_input), int(h.backward), int(h.synchronised_statistics)})
                put(static_cast<std::uint64_t>(static_cast<std::int64_t>(x)));
            put(~std::uint64_t{2});
        }
        put(static_cast<std::uint64_t>(p.layer.kind));
        put(p.dims.in_channels);
        put(p.dims.out_channels);
        put(p.in_positions);
        put(p.out_positions);
        put(p.kernel_area);
        put(p.has_weights);
        put(static_cast<std::uint64_t>(p.layer.stride));
        put(static_cast<std::uint64_t>(p.layer.stride_width));
        put(p.groups);
        for (const Edge& e : p.producers) put(e.from >= first ? l - e.from : ~std::uint64_t{0});
        put(~std::uint64_t{1});
    }
    return key;
}

/// A key equal for sub-meshes the planner sees alike: node types, group boundaries inside
/// (`cut_at`: per position, whether it is in.cluster.preferred_cuts; a boundary at the mesh's
/// first position is outside it), and the exchange cost across their bisection's first cut.
std::string mesh_signature(const PlanningInputs& in, const std::vector<bool>& cut_at, const MeshRange& m) {
    std::string key;
    const auto put = [&key](auto v) { key.append(reinterpret_cast<const char*>(&v), sizeof v); };
    for (std::size_t p = m.first; p < m.end; ++p) {
        put(in.cluster.node_type[in.cluster.order[p]]);
        put(p > m.first && cut_at[p]);
    }
    if (m.end - m.first > 1 && in.exchange) {  // the exchange across the first cut bisect would make
        const std::size_t cut = bisection_cut(in.cluster, m.first, m.end);
        const auto order = in.cluster.order.begin();
        const ExchangeCost x = in.exchange(std::vector<std::size_t>(order + static_cast<std::ptrdiff_t>(m.first),
                                                                    order + static_cast<std::ptrdiff_t>(cut)),
                                           std::vector<std::size_t>(order + static_cast<std::ptrdiff_t>(cut),
                                                                    order + static_cast<std::ptrdiff_t>(m.end)));
        put(x.latency_s);
        put(x.seconds_per_byte_to_a);
        put(x.seconds_per_byte_to_b);
    }
    return key;
}

/// Items numbered by their keys: equal keys, one class.
struct Classes {
    std::vector<std::size_t> of;              ///< per item, its class (numbered in order of first appearance)
    std::vector<std::size_t> representative;  ///< per class, its first item
};
template <typename Key>
Classes classify(std::size_t items, const Key& key) {
    Classes c;
    std::unordered_map<std::string, std::size_t> ids;
    for (std::size_t i = 0; i < items; ++i) {
        c.of.push_back(ids.emplace(key(i), ids.size()).first->second);
        if (c.of.back() == c.representative.size()) c.representative.push_back(i);
    }
    return c;
}

/// Blocks (between `bounds`) the planner sees alike, by block_signature.
Classes block_classes(const LayerGraph& graph, const std::vector<std::size_t>& bounds) {
    return classify(bounds.size() - 1, [&](std::size_t b) { return block_signature(graph, bounds[b], bounds[b + 1]); });
}

/// Sub-meshes the planner sees alike, by mesh_signature.
Classes mesh_classes(const PlanningInputs& in, const std::vector<MeshRange>& meshes) {
    std::vector<bool> cut_at(in.cluster.order.size() + 1, false);
    for (const std::size_t p : in.cluster.preferred_cuts) cut_at[p] = true;
    return classify(meshes.size(), [&](std::size_t m) { return mesh_signature(in, cut_at, meshes[m]); });
}

/// The micro-batch counts alpa searches first: planner.pipeline.microbatches, else the powers
/// of two up to kMaxSearchedMicrobatches that divide `batch`.
std::vector<std::size_t> first_searched_counts(std::uint64_t batch, const PipelineOptions& po) {
    if (po.microbatches > 0) return {po.microbatches};
    std::vector<std::size_t> counts;
    for (std::uint64_t m = 1; m <= std::min<std::uint64_t>(batch, kMaxSearchedMicrobatches); m *= 2)
        if (batch % m == 0) counts.push_back(m);
    return counts;
}

/// One block planned alone on one sub-mesh, per micro-batch: latency and, per mesh position, the
/// footprint without stashes, the stash of one micro-batch, and the buffers.
struct BlockCost {
    double latency_s = kInfinity;
    std::vector<double> fixed_bytes, stash_bytes, buffer_bytes;
};

/// The automatic search for one micro-batch count: the DP's choice, or empty.
struct AlpaSearch {
    AlpaChoice choice;
    std::size_t microbatches = 0;
};

}  // namespace

std::vector<std::pair<std::size_t, double>> transfer_conversions(const PipelinePlan& p, const StageTransfer& t,
                                                                 bool forward) {
    const BoundaryFormat& format = forward ? t.cost.into_b[0] : t.cost.into_a[1];
    if (!format.nodes) return {};
    const auto pairs = transfer_pairs(p, t, forward);
    const double values = values_per_pair(forward ? t.forward_bytes : t.backward_bytes, pairs.size(), format);
    std::vector<std::pair<std::size_t, double>> out;
    for (const auto& [sender, receiver] : pairs) {
        const double s = format.convert_s(receiver, values);
        if (s <= 0) continue;
        const auto it = std::find_if(out.begin(), out.end(), [r = receiver](const auto& o) { return o.first == r; });
        if (it == out.end())
            out.emplace_back(receiver, s);
        else
            it->second += s;
    }
    return out;
}

std::vector<std::pair<std::size_t, std::size_t>> transfer_pairs(const PipelinePlan& p, const StageTransfer& t,
                                                                bool forward) {
    const auto& senders = forward ? p.stages[t.from].nodes : p.stages[t.to].nodes;
    const auto& receivers = forward ? p.stages[t.to].nodes : p.stages[t.from].nodes;
    std::vector<std::pair<std::size_t, std::size_t>> pairs;
    for (std::size_t i = 0; i < std::max(senders.size(), receivers.size()); ++i)
        pairs.emplace_back(senders[i % senders.size()], receivers[i % receivers.size()]);
    return pairs;
}

std::vector<StageTask> stage_order(PipelineSchedule schedule, std::size_t stages, std::size_t stage,
                                   std::size_t microbatches) {
    std::vector<StageTask> order;
    if (schedule == PipelineSchedule::gpipe) {
        for (std::size_t j = 0; j < microbatches; ++j) order.push_back({true, j});
        for (std::size_t j = microbatches; j-- > 0;) order.push_back({false, j});
        return order;
    }
    const std::size_t warmup = std::min(stages - stage - 1, microbatches);
    for (std::size_t j = 0; j < warmup; ++j) order.push_back({true, j});
    for (std::size_t i = 0; i + warmup < microbatches; ++i) {
        order.push_back({true, warmup + i});
        order.push_back({false, i});
    }
    for (std::size_t j = microbatches - warmup; j < microbatches; ++j) order.push_back({false, j});
    return order;
}

std::size_t peak_in_flight(const std::vector<StageTask>& order) {
    std::size_t now = 0, peak = 0;
    for (const StageTask& t : order) {
        now = t.forward ? now + 1 : now - 1;
        peak = std::max(peak, now);
    }
    return peak;
}

double predict_pipeline(const PlanningInputs& in, const PipelinePlan& p) {
    const std::size_t stages = p.stages.size(), m = p.microbatches;
    const std::size_t network_layers = p.stages.back().end_layer;  // the stages cover the network in order
    NodeClocks clocks(in.cluster.node_type.size());
    std::vector<ComputeModel> compute(stages);
    std::vector<ClockedPredictor> predictors;
    for (std::size_t s = 0; s < stages; ++s) {
        const std::size_t first = p.stages[s].first_layer;
        compute[s] = [&in, first](std::size_t type, LayerId l, const LayerDims& d) {
            return in.compute(type, LayerId(first + l.value()), d);
        };
        predictors.emplace_back(p.stages[s].graph, p.stages[s].plan, in.cluster.node_type, compute[s],
                                *in.gradient_sync, clocks);
    }
    std::vector<std::vector<StageTask>> order(stages);
    for (std::size_t s = 0; s < stages; ++s) order[s] = stage_order(p.schedule, stages, s, m);
    // sent[x][2j + backward]: each sender's clock when it sent transfer x of micro-batch j (empty until then).
    std::vector<std::vector<std::vector<double>>> sent(p.transfers.size(), std::vector<std::vector<double>>(2 * m));
    // Per transfer and direction: when its bottleneck links are next free, across micro-batches.
    std::vector<std::array<std::vector<double>, 2>> bottleneck_free(p.transfers.size());
    std::vector<std::size_t> next(stages, 0), backwards_left(stages, m);
    std::size_t done = 0;
    const std::size_t all = stages * 2 * m;
    while (done < all) {
        bool progressed = false;
        for (std::size_t s = 0; s < stages; ++s) {
            while (next[s] < order[s].size()) {
                const StageTask t = order[s][next[s]];
                const std::size_t slot = 2 * t.microbatch + (t.forward ? 0 : 1);
                bool waiting = false;
                for (std::size_t x = 0; x < p.transfers.size(); ++x)
                    if ((t.forward ? p.transfers[x].to : p.transfers[x].from) == s && sent[x][slot].empty())
                        waiting = true;
                if (waiting) break;
                for (std::size_t x = 0; x < p.transfers.size(); ++x) {
                    const StageTransfer& tr = p.transfers[x];
                    if ((t.forward ? tr.to : tr.from) != s) continue;
                    const double bytes = t.forward ? tr.forward_bytes : tr.backward_bytes;
                    if (bytes <= 0) continue;
                    // Side A is the earlier stage: forward bytes go into B, backward ones into A.
                    const double per_byte = t.forward ? tr.cost.seconds_per_byte_to_b : tr.cost.seconds_per_byte_to_a;
                    const double share = t.forward ? tr.cost.bottleneck_share_to_b : tr.cost.bottleneck_share_to_a;
                    clocks.deliver(transfer_pairs(p, tr, t.forward), sent[x][slot], bytes * per_byte, share,
                                   tr.cost.latency_s, bottleneck_free[x][t.forward ? 0 : 1]);
                    for (const auto& [receiver, seconds] : transfer_conversions(p, tr, t.forward))
                        clocks.main[receiver] += seconds;
                }
                StepWalk walk;
                walk.first_layer = p.stages[s].first_layer;
                walk.network_layers = network_layers;
                walk.microbatch = t.microbatch;
                walk.forward = t.forward;
                walk.backward = !t.forward;
                if (!t.forward) walk.sync = --backwards_left[s] == 0;
                predictors[s].walk(walk);
                for (std::size_t x = 0; x < p.transfers.size(); ++x) {
                    const StageTransfer& tr = p.transfers[x];
                    if ((t.forward ? tr.from : tr.to) != s) continue;
                    for (const auto& [sender, receiver] : transfer_pairs(p, tr, t.forward))
                        sent[x][slot].push_back(clocks.main[sender]);
                }
                ++next[s];
                ++done;
                progressed = true;
            }
        }
        if (!progressed) throw PlanError("internal: the pipeline schedule deadlocks");
    }
    for (ClockedPredictor& predictor : predictors) predictor.finish();
    std::vector<std::size_t> nodes;
    for (const PipelineStage& s : p.stages) nodes.insert(nodes.end(), s.nodes.begin(), s.nodes.end());
    if (in.gradient_sync->staleness() > 0)
        return stale_step_s(clocks, nodes, in.gradient_sync->staleness(), in.gradient_sync->busiest_link_s());
    double step = 0;
    for (const std::size_t n : nodes) step = std::max(step, clocks.main[n]);
    return step;
}

std::vector<std::size_t> block_boundaries(const LayerGraph& graph) {
    const std::size_t n = graph.layers.size();
    // Edges by the layer they leave; AccPar's block shortcuts (another layer's input) never cross a cut.
    std::vector<std::vector<std::size_t>> leaving(n);
    std::vector<std::size_t> shortcuts_from(n, 0), shortcuts_to(n, 0);
    for (std::size_t to = 0; to < n; ++to)
        for (const Edge& e : graph.layers[to].producers) {
            leaving[e.from].push_back(to);
            if (e.kind != EdgeKind::producer_output) {
                ++shortcuts_from[e.from];
                ++shortcuts_to[to];
            }
        }
    // Sweep the cuts b = 1 … n-1: the edges crossing b (from < b <= to) in a min-heap on `from`,
    // expired ones dropped lazily, so the earliest producer crossing is on top.
    using Crossing = std::pair<std::size_t, std::size_t>;  // (from, to)
    std::priority_queue<Crossing, std::vector<Crossing>, std::greater<>> crossing;
    std::size_t shortcuts = 0;
    std::vector<std::size_t> bounds{0};
    for (std::size_t b = 1; b < n; ++b) {
        for (const std::size_t to : leaving[b - 1]) crossing.push({b - 1, to});
        shortcuts += shortcuts_from[b - 1];
        shortcuts -= shortcuts_to[b - 1];
        while (!crossing.empty() && crossing.top().second < b) crossing.pop();
        if (shortcuts == 0 && (crossing.empty() || crossing.top().first >= bounds.back())) bounds.push_back(b);
    }
    bounds.push_back(n);
    return bounds;
}

namespace {

/// Alpa's inter-operator DP for one t_max (docs/pipeline.md, "Automatic search"): f[k][i][a] =
/// the smallest sum of stage latencies placing blocks [i, B) on nodes [a, N) in stages no slower
/// than t_max, k = the stages from here to the end when the count is fixed (one plane, k = 0,
/// when it is free).
struct InterOpDp {
    std::size_t blocks, nodes, microbatches, stages;
    PipelineSchedule schedule;
    const std::vector<MeshRange>& meshes;
    std::vector<std::size_t> class_of;  ///< per mesh, its class (meshes that cost alike)
    std::size_t classes = 0;
    std::vector<std::vector<std::size_t>> meshes_at;  ///< per first position, mesh indices
    /// A stage's cost and what the scan over longer stages needs, side by side: the DP reads
    /// all four for each stage it tries (one cache line, not four).
    struct StageEntry {
        double latency_s = kInfinity;
        double least_latency_from_s = kInfinity;  ///< min of latency_s over end blocks >= this one
        std::uint32_t max_in_flight = 0;          ///< saturated: compared with counts of micro-batches
        bool fits_from = false;                   ///< whether any end block >= this one fits at all
    };
    std::vector<StageEntry> stage;  ///< per (first block, mesh class, end block)

    /// The entry of blocks [i, j) on mesh m (through its class).
    [[nodiscard]] std::size_t index(std::size_t i, std::size_t j, std::size_t m) const {
        return (i * classes + class_of[m]) * (blocks + 1) + j;
    }

    InterOpDp(std::size_t b, const std::vector<MeshRange>& ms, std::size_t n, std::size_t mb, std::size_t st,
              PipelineSchedule sched, const AlpaStageCostFn& cost, const std::vector<std::size_t>& mesh_class)
        : blocks(b), nodes(n), microbatches(mb), stages(st), schedule(sched), meshes(ms), meshes_at(n + 1) {
        if (!mesh_class.empty() && mesh_class.size() != meshes.size())
            throw std::invalid_argument("alpa_inter_op: one class per mesh");
        class_of = mesh_class;
        if (class_of.empty())
            for (std::size_t m = 0; m < meshes.size(); ++m) class_of.push_back(m);
        std::vector<std::size_t> representative;  // per class, its first mesh
        for (std::size_t m = 0; m < meshes.size(); ++m) {
            meshes_at[meshes[m].first].push_back(m);
            if (class_of[m] >= representative.size()) representative.resize(class_of[m] + 1, meshes.size());
            if (representative[class_of[m]] == meshes.size()) representative[class_of[m]] = m;
        }
        classes = representative.size();
        stage.assign((blocks + 1) * (blocks + 1) * classes, StageEntry{});
        for (std::size_t i = 0; i < blocks; ++i)
            for (const std::size_t m : representative) {
                if (m == meshes.size()) continue;  // a class no mesh has
                for (std::size_t j = i + 1; j <= blocks; ++j) {
                    const AlpaStageCost c = cost(i, j, m);
                    StageEntry& e = stage[index(i, j, m)];
                    e.latency_s = c.latency_s;
                    e.max_in_flight = static_cast<std::uint32_t>(
                        std::min<std::size_t>(c.max_in_flight, std::numeric_limits<std::uint32_t>::max()));
                }
                double least = kInfinity;
                bool any_fits = false;
                for (std::size_t j = blocks; j > i; --j) {
                    StageEntry& e = stage[index(i, j, m)];
                    least = std::min(least, e.latency_s);
                    e.least_latency_from_s = least;
                    any_fits = any_fits || e.max_in_flight > 0;
                    e.fits_from = any_fits;
                }
            }
    }

    /// Whether stage x fits when it is `from_end` stages from the end.
    [[nodiscard]] bool fits(std::size_t x, std::size_t from_end) const {
        return stage[x].max_in_flight >= alpa_in_flight(schedule, microbatches, from_end);
    }

    /// Calls visit(x, j, m, latency) for every stage starting at block i on a mesh starting at
    /// node position a that is no slower than t_max and stashes at least one micro-batch, mesh
    /// by mesh, end block ascending.
    template <typename Visit>
    void for_each_stage(std::size_t i, std::size_t a, double t_max, Visit&& visit) const {
        for (const std::size_t m : meshes_at[a])
            for (std::size_t j = i + 1; j <= blocks; ++j) {
                const std::size_t x = index(i, j, m);
                const StageEntry& e = stage[x];
                if (!(e.least_latency_from_s <= t_max)) break;  // no longer stage is fast enough
                if (!e.fits_from) break;                        // nor fits in memory
                if (e.latency_s <= t_max && e.max_in_flight > 0) visit(x, j, m, e.latency_s);
            }
    }

    /// for_each_stage over the end blocks j that `fronted[end of the mesh]` lists (descending),
    /// ascending: the same stages, those ending in a cell with no front left out.
    template <typename Visit>
    void for_each_fronted_stage(std::size_t i, std::size_t a, double t_max,
                                const std::vector<std::vector<std::size_t>>& fronted, Visit&& visit) const {
        for (const std::size_t m : meshes_at[a]) {
            const std::vector<std::size_t>& ends = fronted[meshes[m].end];
            for (auto it = ends.rbegin(); it != ends.rend(); ++it) {
                const std::size_t j = *it;
                if (j <= i) continue;  // (i, end) itself, made in this row before (i, a)
                const std::size_t x = index(i, j, m);
                const StageEntry& e = stage[x];
                if (!(e.least_latency_from_s <= t_max)) break;  // no longer stage is fast enough
                if (!e.fits_from) break;                        // nor fits in memory
                if (e.latency_s <= t_max && e.max_in_flight > 0) visit(x, j, m, e.latency_s);
            }
        }
    }

    /// The smallest sum for t_max, and the stages, or infinity.
    std::pair<double, std::vector<std::pair<std::size_t, std::size_t>>> solve(double t_max) const {
        return stages > 0 ? solve_counted(t_max) : solve_free(t_max);
    }

    /// With `stages` fixed: planes k = the stages from here to the end.
    std::pair<double, std::vector<std::pair<std::size_t, std::size_t>>> solve_counted(double t_max) const {
        const std::size_t plane = (blocks + 1) * (nodes + 1);
        std::vector<double> f((stages + 1) * plane, kInfinity);
        std::vector<std::pair<std::size_t, std::size_t>> choice((stages + 1) * plane, {0, 0});
        const auto at = [&](std::size_t k, std::size_t i, std::size_t a) { return k * plane + i * (nodes + 1) + a; };
        f[at(0, blocks, nodes)] = 0;
        for (std::size_t k = 1; k <= stages; ++k)
            for (std::size_t i = blocks; i-- > 0;)
                for (std::size_t a = nodes; a-- > 0;)
                    for_each_stage(i, a, t_max, [&](std::size_t x, std::size_t j, std::size_t m, double t) {
                        if (!fits(x, k)) return;
                        const double rest = f[at(k - 1, j, meshes[m].end)];
                        if (t + rest < f[at(k, i, a)]) {
                            f[at(k, i, a)] = t + rest;
                            choice[at(k, i, a)] = {j, m};
                        }
                    });
        std::vector<std::pair<std::size_t, std::size_t>> cut;
        if (!(f[at(stages, 0, 0)] < kInfinity)) return {kInfinity, cut};
        for (std::size_t k = stages, i = 0, a = 0; i < blocks; --k) {
            const auto [j, m] = choice[at(k, i, a)];
            cut.emplace_back(j, m);
            i = j;
            a = meshes[m].end;
        }
        return {f[at(stages, 0, 0)], cut};
    }

    /// With the count free: per (i, a) the Pareto front of (stages to the end, sum), fewest
    /// stages first. A stage fits by its own place from the end, which only the stages after it
    /// decide, and fewer of them never stash more; so the front is exact.
    std::pair<double, std::vector<std::pair<std::size_t, std::size_t>>> solve_free(double t_max) const {
        // The fronts' entries, their hot fields (read together for every stage tried) apart from
        // how each was reached (read to trace the best back): 32-bit indices, for the cache.
        struct Entry {
            double sum;
            std::uint32_t stages;
        };
        struct Back {
            std::uint32_t j, m, rest;  // this stage's end block and mesh; the entry it continues with
        };
        std::vector<Entry> entries{{0, 0}};
        std::vector<Back> back_of{{static_cast<std::uint32_t>(blocks), 0, 0}};
        const auto cell = [&](std::size_t i, std::size_t a) { return i * (nodes + 1) + a; };
        std::vector<std::pair<std::uint32_t, std::uint32_t>> front((blocks + 1) * (nodes + 1), {0, 0});  // [begin, end)
        front[cell(blocks, nodes)] = {0, 1};
        // Per node position, the blocks j whose cell (j, position) has a front, descending: a
        // stage ending elsewhere leads nowhere (most do: 85-90% of them on GPT-3 175B over 4,096
        // nodes), so only these are tried.
        std::vector<std::vector<std::size_t>> fronted(nodes + 1);
        fronted[nodes].push_back(blocks);
        // Per stage count, the least sum reached at the current cell (the first of equals).
        struct Best {
            double sum = 0;
            Back back{};
            bool reached = false;
        };
        std::vector<Best> best_at(std::min(blocks, nodes) + 1);
        std::vector<std::size_t> counts;  // the stage counts reached at the current cell
        for (std::size_t i = blocks; i-- > 0;)
            for (std::size_t a = nodes; a-- > 0;) {
                for_each_fronted_stage(
                    i, a, t_max, fronted, [&](std::size_t x, std::size_t j, std::size_t m, double t) {
                        const auto [first, last] = front[cell(j, meshes[m].end)];
                        // fits(x, k) for k = stages + 1, hoisted: in flight min(k, microbatches)
                        // under 1F1B, every micro-batch under GPipe.
                        const std::size_t room = stage[x].max_in_flight;
                        if (schedule == PipelineSchedule::gpipe && room < microbatches) return;
                        const std::size_t most_stages = room >= microbatches ? ~std::size_t{0} : room;
                        for (std::uint32_t e = first; e < last && entries[e].stages + 1 <= most_stages; ++e) {
                            const std::size_t k = entries[e].stages + 1;
                            const double sum = t + entries[e].sum;
                            Best& best = best_at[k];
                            if (!best.reached) {
                                counts.push_back(k);
                                best = {sum, {static_cast<std::uint32_t>(j), static_cast<std::uint32_t>(m), e}, true};
                            } else if (sum < best.sum) {
                                best.sum = sum;
                                best.back = {static_cast<std::uint32_t>(j), static_cast<std::uint32_t>(m), e};
                            }
                        }
                    });
                std::sort(counts.begin(), counts.end());
                const auto begin = static_cast<std::uint32_t>(entries.size());
                for (const std::size_t k : counts) {
                    if (entries.size() == begin || best_at[k].sum < entries.back().sum) {
                        entries.push_back({best_at[k].sum, static_cast<std::uint32_t>(k)});
                        back_of.push_back(best_at[k].back);
                    }
                    best_at[k].reached = false;
                }
                counts.clear();
                if (entries.size() > std::numeric_limits<std::uint32_t>::max())
                    throw std::length_error("alpa's inter-operator DP: more than 2^32 front entries");
                front[cell(i, a)] = {begin, static_cast<std::uint32_t>(entries.size())};
                if (entries.size() > begin) fronted[a].push_back(i);
            }
        std::vector<std::pair<std::size_t, std::size_t>> cut;
        const auto [first, last] = front[cell(0, 0)];
        if (first == last) return {kInfinity, cut};
        const std::uint32_t best = last - 1;  // the front's sums fall as its stage counts rise
        for (std::uint32_t e = best; entries[e].stages > 0; e = back_of[e].rest)
            cut.emplace_back(back_of[e].j, back_of[e].m);
        return {entries[best].sum, cut};
    }
};

AlpaChoice best_over_t_max(const InterOpDp& dp, std::size_t microbatches) {
    std::vector<double> candidates;
    for (const InterOpDp::StageEntry& e : dp.stage)
        if (e.latency_s < kInfinity) candidates.push_back(e.latency_s);
    std::sort(candidates.begin(), candidates.end());
    candidates.erase(std::unique(candidates.begin(), candidates.end()), candidates.end());
    // Beyond kScanAllCandidates, keep those kScanSpacing apart (Alpa buckets them likewise):
    // the choices within kAlpaObjectiveSlack are planned whole and replayed anyway.
    if (candidates.size() > kScanAllCandidates) {
        std::vector<double> kept;
        for (const double t : candidates)
            if (kept.empty() || t > kept.back() * kScanSpacing) kept.push_back(t);
        if (kept.back() != candidates.back()) kept.push_back(candidates.back());
        candidates = std::move(kept);
    }
    AlpaChoice best;
    best.objective_s = kInfinity;
    if (candidates.empty()) return best;
    // The unbounded sum is the least any t_max reaches; with one micro-batch it is the answer.
    const double least_sum = dp.solve(candidates.back()).first;
    if (!(least_sum < kInfinity)) return best;
    const double m1 = static_cast<double>(microbatches) - 1;
    // Feasibility only grows with t_max: the first feasible candidate by bisection.
    std::size_t lo = 0, hi = candidates.size() - 1;
    if (m1 == 0) lo = hi;
    while (lo < hi) {
        const std::size_t mid = lo + (hi - lo) / 2;
        if (dp.solve(candidates[mid]).first < kInfinity)
            hi = mid;
        else
            lo = mid + 1;
    }
    for (std::size_t c = lo; c < candidates.size(); ++c) {
        const double t_max = candidates[c];
        if (least_sum + m1 * t_max >= best.objective_s) break;  // no later t_max can do better
        const auto [sum, cut] = dp.solve(t_max);
        if (!(sum < kInfinity)) continue;
        double slowest = 0;
        for (std::size_t s = 0, i = 0; s < cut.size(); i = cut[s].first, ++s)
            slowest = std::max(slowest, dp.stage[dp.index(i, cut[s].first, cut[s].second)].latency_s);
        const double objective = sum + m1 * slowest;
        if (objective < best.objective_s) {
            best.objective_s = objective;
            best.stages = cut;
        }
    }
    return best;
}

}  // namespace

std::size_t alpa_in_flight(PipelineSchedule schedule, std::size_t microbatches, std::size_t from_end) {
    return schedule == PipelineSchedule::gpipe ? microbatches : std::min(microbatches, from_end);
}

AlpaChoice alpa_inter_op(std::size_t blocks, const std::vector<MeshRange>& meshes, std::size_t node_count,
                         std::size_t microbatches, std::size_t stages, PipelineSchedule schedule,
                         const AlpaStageCostFn& cost, const std::vector<std::size_t>& mesh_class) {
    const InterOpDp dp(blocks, meshes, node_count, microbatches, stages, schedule, cost, mesh_class);
    return best_over_t_max(dp, microbatches);
}

AlpaChoice alpa_brute_force(std::size_t blocks, const std::vector<MeshRange>& meshes, std::size_t node_count,
                            std::size_t microbatches, std::size_t stages, PipelineSchedule schedule,
                            const AlpaStageCostFn& cost) {
    AlpaChoice best;
    best.objective_s = kInfinity;
    std::vector<std::pair<std::size_t, std::size_t>> cut;
    const double m1 = static_cast<double>(microbatches) - 1;
    // Every sequence of (end block, mesh) from (0, 0) to (blocks, node_count); then its fit.
    std::function<void(std::size_t, std::size_t)> extend = [&](std::size_t i, std::size_t a) {
        if (i == blocks || a == node_count) {
            if (i != blocks || a != node_count || (stages > 0 && cut.size() != stages)) return;
            double sum = 0, slowest = 0;
            std::size_t first = 0;
            for (std::size_t s = 0; s < cut.size(); ++s) {
                const std::size_t from_end = cut.size() - s;
                const AlpaStageCost c = cost(first, cut[s].first, cut[s].second);
                if (!(c.latency_s < kInfinity) || c.max_in_flight < alpa_in_flight(schedule, microbatches, from_end))
                    return;
                const double t = c.latency_s;
                sum += t;
                slowest = std::max(slowest, t);
                first = cut[s].first;
            }
            const double objective = sum + m1 * slowest;
            if (objective < best.objective_s) {
                best.objective_s = objective;
                best.stages = cut;
            }
            return;
        }
        if (stages > 0 && cut.size() == stages) return;
        for (std::size_t m = 0; m < meshes.size(); ++m) {
            if (meshes[m].first != a) continue;
            for (std::size_t j = i + 1; j <= blocks; ++j) {
                cut.emplace_back(j, m);
                extend(j, meshes[m].end);
                cut.pop_back();
            }
        }
    };
    extend(0, 0);
    return best;
}

/// The `alpa` planner (docs/pipeline.md, "Automatic search").
bool whole_model_cannot_fit(const PlanningInputs& in) {
    return model_cannot_fit(in, in.graph.layers.empty() ? 0 : in.graph.layers.front().dims.batch);
}

bool model_cannot_fit(const PlanningInputs& in, std::uint64_t microbatch_size) {
    const MemoryModel& memory = in.memory;
    if (!memory.bytes || memory.capacity_bytes.empty()) return false;
    double capacity = 0;
    std::vector<bool> used(memory.capacity_bytes.size(), false);
    for (const std::size_t n : in.cluster.order) {
        const std::size_t t = in.cluster.node_type[n];
        if (memory.capacity_bytes[t] <= 0) return false;
        capacity += memory.capacity_bytes[t];
        used[t] = true;
    }
    // Bytes of `elements` values of `what` in the most compact format of any node type used.
    const auto least = [&](Stored what, std::uint64_t elements) {
        double bytes = std::numeric_limits<double>::infinity();
        for (std::size_t t = 0; t < used.size(); ++t)
            if (used[t]) bytes = std::min(bytes, memory.bytes(t, what, elements));
        return bytes;
    };
    double needed = 0;
    for (const PlanLayer& layer : in.graph.layers) {
        LayerDims dims = layer.dims;
        dims.batch = microbatch_size;
        const std::uint64_t w = layer.weight_elements(dims);
        needed += least(Stored::weights, w) + least(Stored::weight_gradients, w) +
                  memory.optimizer_copies * least(Stored::optimizer_state, w) +
                  least(Stored::activations, layer.input_elements(dims));
        if (needed > capacity) return true;
    }
    return false;
}

AlpaSearchSize alpa_search_size(const PlanningInputs& in, const PipelineOptions& options) {
    AlpaSearchSize size;
    if (in.graph.layers.empty()) return size;
    const std::vector<std::size_t> bounds = block_boundaries(in.graph);
    const std::vector<MeshRange> meshes = alpa_meshes(in.cluster);
    const Classes blocks = block_classes(in.graph, bounds), mesh = mesh_classes(in, meshes);
    size.blocks = bounds.size() - 1;
    size.mesh_classes = mesh.representative.size();
    double block_layers = 0, mesh_nodes = 0;
    for (const std::size_t b : blocks.representative) block_layers += static_cast<double>(bounds[b + 1] - bounds[b]);
    for (const std::size_t m : mesh.representative) mesh_nodes += static_cast<double>(meshes[m].end - meshes[m].first);
    const std::uint64_t batch = in.graph.layers.front().dims.batch;
    std::vector<std::size_t> counts = first_searched_counts(batch, options);
    if (options.microbatches == 0 && !counts.empty())
        for (std::uint64_t next = next_searched_microbatches(batch, counts.back()); next > 0;
             next = next_searched_microbatches(batch, next))
            counts.push_back(next);
    for (const std::size_t count : counts)
        if (options.microbatches > 0 || !model_cannot_fit(in, batch / count)) {
            ++size.microbatch_counts;
            size.most_microbatches = count;
        }
    const auto searched = static_cast<double>(size.microbatch_counts), b = static_cast<double>(size.blocks);
    size.block_node_layers = searched * block_layers * mesh_nodes;
    size.stage_costs = searched * b * (b + 1) / 2 * static_cast<double>(size.mesh_classes);
    size.whole_fits = !whole_model_cannot_fit(in);
    return size;
}

Plan plan_alpa(const PlanningInputs& in, const PlannerOptions& options) {
    const PipelineOptions& po = options.pipeline;
    const std::vector<std::size_t> bounds = block_boundaries(in.graph);
    const std::size_t blocks = bounds.size() - 1, nodes = in.cluster.order.size();
    const std::vector<MeshRange> meshes = alpa_meshes(in.cluster);
    const std::uint64_t batch = in.graph.layers.front().dims.batch;
    if (!po.stage_layers.empty())
        throw PlanError(
            "alpa chooses each stage's layers itself: planner.pipeline.stages as lists of layer names "
            "applies to the pipeline planner (give alpa a stage count, or none)");
    if (po.stages > nodes)
        throw PlanError("planner.pipeline asks for " + std::to_string(po.stages) + " stages but the cluster has " +
                        std::to_string(nodes) + " nodes: each stage needs at least one");
    if (po.stages > blocks)
        throw PlanError("planner.pipeline asks for " + std::to_string(po.stages) + " stages but the network has " +
                        std::to_string(blocks) + " blocks, between which alpa cuts: each stage needs at least one");
    if (po.microbatches > 0) microbatch_size_or_throw(batch, po.microbatches);
    std::vector<std::size_t> counts = first_searched_counts(batch, po);
    // Each distinct block planned alone on each distinct sub-mesh (a mesh class), per micro-batch
    // size: blocks and meshes with equal signatures cost alike.
    const Classes block_class = block_classes(in.graph, bounds), mesh_class_of = mesh_classes(in, meshes);
    const std::vector<std::size_t>& block_id = block_class.of;
    const std::vector<std::size_t>& mesh_class = mesh_class_of.of;
    const std::vector<std::size_t>& representative = mesh_class_of.representative;
    const std::size_t classes = representative.size();
    std::map<std::tuple<std::size_t, std::size_t, std::uint64_t>, BlockCost> memo;  // (block, class, size)
    // Each class's representative mesh bisected once, for all its blocks and micro-batch sizes.
    std::vector<std::optional<StageCluster>> clusters(classes);
    const auto cluster_of = [&](std::size_t k) -> const StageCluster& {
        if (!clusters[k])
            clusters[k] = stage_cluster(in, meshes[representative[k]].first, meshes[representative[k]].end);
        return *clusters[k];
    };
    // Blocks are planned quickly, with each stage's synchronisations timed alone rather than
    // replayed together: the DP asks for thousands of them, and its choices are planned again
    // and predicted whole.
    AloneSync alone(*in.gradient_sync);
    PlanningInputs block_in{in};
    block_in.gradient_sync = &alone;
    std::vector<AlpaSearch> found;  // the DP's choice per micro-batch count
    // Past kMaxSearchedMicrobatches, the next count is searched while no cut fits or the last
    // count beat every earlier one: smaller micro-batches stash less, so deeper pipelines fit
    // (GPT-3 175B on 1,024 nodes: 10 stages at 64 micro-batches, 96 at 1,536).
    const auto search_on = [&](std::size_t count, bool improved) {
        if (po.microbatches > 0 || count + 1 != counts.size() || !(found.empty() || improved)) return;
        if (const std::uint64_t next = next_searched_microbatches(batch, counts[count]); next > 0)
            counts.push_back(next);
    };
    for (std::size_t count = 0; count < counts.size(); ++count) {
        const std::size_t mb = counts[count];
        const std::uint64_t size = batch / mb;
        // A count at which not even one micro-batch's stash fits beside the weights is not
        // searched (GPT-3 175B on 1,024 nodes: up to 8 micro-batches).
        if (po.microbatches == 0 && model_cannot_fit(in, size)) {
            if (in.plan_made) in.plan_made();
            search_on(count, false);
            continue;
        }
        std::vector<const BlockCost*> cost(blocks * classes);
        for (std::size_t b = 0; b < blocks; ++b)
            for (std::size_t k = 0; k < classes; ++k) {
                const auto key = std::make_tuple(block_id[b], k, size);
                auto it = memo.find(key);
                if (it == memo.end()) {
                    BlockCost c;
                    try {
                        const PipelineStage s =
                            plan_stage(block_in, options, bounds[b], bounds[b + 1], cluster_of(k), size, nullptr,
                                       plan_block_quickly, StageWalks::forward_backward);
                        c.latency_s = s.forward_s + s.backward_s;
                        for (const std::size_t n : s.nodes) {
                            const Footprint& f = s.plan.footprint[n];
                            c.fixed_bytes.push_back(f.weights + f.weight_gradients + f.optimizer_state);
                            c.stash_bytes.push_back(f.stashed_activations);
                            c.buffer_bytes.push_back(f.buffers);
                        }
                    } catch (const PlanError&) {
                        // e.g. a micro-batch smaller than the sub-mesh for data parallelism: not a candidate
                    }
                    it = memo.emplace(key, std::move(c)).first;
                }
                cost[b * classes + k] = &it->second;  // map entries stay where they are
            }
        // Positions of a mesh class that hold the same bytes in every block, on the same node
        // type, bound the stash alike: stage_cost sums and checks one of each (equal splits over
        // equal nodes leave a handful per mesh; GPT-3 175B's meshes are up to 1,024 wide).
        const auto capacity_at = [&](std::size_t m, std::size_t p) {
            return in.memory.capacity_bytes.empty()
                       ? 0.0
                       : in.memory.capacity_bytes[in.cluster.node_type[in.cluster.order[meshes[m].first + p]]];
        };
        std::vector<std::vector<std::size_t>> distinct_positions(classes);
        for (std::size_t k = 0; k < classes; ++k) {
            const std::size_t m = representative[k];
            const auto same = [&](std::size_t p, std::size_t q) {
                if (capacity_at(m, p) != capacity_at(m, q)) return false;
                for (std::size_t b = 0; b < blocks; ++b) {
                    const BlockCost& bc = *cost[b * classes + k];
                    if (bc.fixed_bytes.empty()) continue;  // not a candidate: never summed
                    if (bc.fixed_bytes[p] != bc.fixed_bytes[q] || bc.stash_bytes[p] != bc.stash_bytes[q] ||
                        bc.buffer_bytes[p] != bc.buffer_bytes[q])
                        return false;
                }
                return true;
            };
            const auto hash = [&](std::size_t p) {
                std::uint64_t h = std::hash<double>{}(capacity_at(m, p));
                for (std::size_t b = 0; b < blocks; ++b) {
                    const BlockCost& bc = *cost[b * classes + k];
                    if (bc.fixed_bytes.empty()) continue;
                    for (const double v : {bc.fixed_bytes[p], bc.stash_bytes[p], bc.buffer_bytes[p]})
                        h = (h ^ std::hash<double>{}(v)) * 0x100000001B3ull;
                }
                return h;
            };
            std::unordered_map<std::uint64_t, std::vector<std::size_t>> by_hash;  // kept positions
            for (std::size_t p = 0; p < meshes[m].end - meshes[m].first; ++p) {
                std::vector<std::size_t>& alike = by_hash[hash(p)];
                if (std::none_of(alike.begin(), alike.end(), [&](std::size_t q) { return same(p, q); })) {
                    alike.push_back(p);
                    distinct_positions[k].push_back(p);
                }
            }
        }
        // Sums over the stage's blocks, per distinct mesh position; extended block by block when
        // the DP asks for (i, j + 1, m) after (i, j, m), as it does.
        struct Running {
            std::size_t i = 0, j = 0, m = 0;
            double latency_s = 0;
            std::vector<double> fixed, stash, buffers;
            bool full = false;  // not even one micro-batch fits: nor with more blocks (bytes only grow)
        } run;
        run.m = meshes.size();  // nothing summed yet
        const auto stage_cost = [&](std::size_t i, std::size_t j, std::size_t m) {
            const std::vector<std::size_t>& positions = distinct_positions[mesh_class[m]];
            const std::size_t width = positions.size();
            if (run.i != i || run.m != m || run.j >= j) {
                run = Running{i,
                              i,
                              m,
                              0,
                              std::vector<double>(width, 0),
                              std::vector<double>(width, 0),
                              std::vector<double>(width, 0),
                              false};
            }
            for (; run.j < j; ++run.j) {
                const BlockCost& bc = *cost[run.j * classes + mesh_class[m]];
                run.latency_s += bc.latency_s;
                if (!(run.latency_s < kInfinity) || run.full) continue;
                for (std::size_t q = 0; q < width; ++q) {
                    const std::size_t p = positions[q];
                    run.fixed[q] += bc.fixed_bytes[p];
                    run.stash[q] += bc.stash_bytes[p];
                    run.buffers[q] = std::max(run.buffers[q], bc.buffer_bytes[p]);
                }
            }
            AlpaStageCost c;
            c.latency_s = run.latency_s;
            if (!(c.latency_s < kInfinity) || run.full) return c;
            c.max_in_flight = std::numeric_limits<std::size_t>::max();
            for (std::size_t q = 0; q < width; ++q) {
                const double capacity = capacity_at(m, positions[q]);
                if (capacity <= 0) continue;
                const double room = capacity - run.fixed[q] - run.buffers[q];
                const double stash = run.stash[q];
                const std::size_t most = room < 0     ? 0
                                         : stash <= 0 ? std::numeric_limits<std::size_t>::max()
                                                      : static_cast<std::size_t>(std::min(room / stash, 1e18));
                c.max_in_flight = std::min(c.max_in_flight, most);
            }
            run.full = c.max_in_flight == 0;
            return c;
        };
        AlpaChoice choice = alpa_inter_op(blocks, meshes, nodes, mb, po.stages, po.schedule, stage_cost, mesh_class);
        double best_before = kInfinity;
        for (const AlpaSearch& f : found) best_before = std::min(best_before, f.choice.objective_s);
        const bool fits = !choice.stages.empty() && choice.objective_s < kInfinity;
        const bool improved = fits && choice.objective_s < best_before;
        if (fits) found.push_back({std::move(choice), mb});
        if (in.plan_made) in.plan_made();
        search_on(count, improved);
    }
    if (found.empty())
        throw PlanError(
            "alpa finds no cut of the network into stages on sub-meshes of the cluster that fits in memory" +
            std::string(po.stages > 0 ? " with planner.pipeline.stages " + std::to_string(po.stages) : "") +
            (po.microbatches > 0 ? "" : ", with up to " + std::to_string(counts.back()) + " micro-batches"));
    const auto better = [](const Plan& candidate, const Plan& incumbent) {
        const bool fits = candidate.memory_shortfalls.empty(), incumbent_fits = incumbent.memory_shortfalls.empty();
        return (fits && !incumbent_fits) || (fits == incumbent_fits && candidate.step_s < incumbent.step_s);
    };
    // The DP's objective adds blocks planned alone; so the whole cluster as one stage at M = 1
    // (the intra planner's plan, and data parallelism's) is weighed on the exact prediction too,
    // and alpa never loses to either (docs/pipeline.md, "Automatic search").
    std::vector<Plan> whole;  // the intra planner's, then data parallelism's
    bool whole_intra_planned = false;
    // Not when no plan of the whole model on one stage can fit (GPT-3 175B on 1,024 nodes): the
    // intra planner's would cost more than the rest of alpa's search, and lose to one that fits.
    const bool whole_fits = !whole_model_cannot_fit(in);
    for (const PlannerKind kind : {po.intra, PlannerKind::data_parallel}) {
        if (!whole_fits) break;
        PlannerOptions one = options;
        one.pipeline.intra = kind;
        try {
            PipelinePlan single;
            single.schedule = po.schedule;
            single.microbatches = 1;
            single.microbatch_size = batch;
            std::vector<std::vector<double>> single_layer_s(1);
            single.stages.push_back(
                plan_stage(in, one, 0, in.graph.layers.size(), stage_cluster(in, 0, nodes), batch, &single_layer_s[0]));
            finish_pipeline(in, single);
            Plan candidate = assemble(in, options, std::move(single), single_layer_s);
            whole_intra_planned = whole_intra_planned || kind == po.intra;
            whole.push_back(std::move(candidate));
        } catch (const PlanError&) {
            // e.g. a batch smaller than the nodes for data parallelism: not a candidate
        }
    }
    // The DP's objective adds blocks planned alone and bounds memory per block, so its choices
    // within kAlpaObjectiveSlack of the best are planned whole and predicted exactly, and the
    // fastest that fits is kept. Their stages are planned with each all-reduce timed alone (as
    // the blocks were): replaying every bucket of every stage in every plan the intra planner
    // weighs costs more than the rest of the search (GPT-3 175B: 420 buckets a stage); the plan
    // kept is ranked by its step replayed whole. One stage at M = 1 is the whole cluster (stages cover every
    // node): the intra planner's plan above.
    std::stable_sort(found.begin(), found.end(), [](const AlpaSearch& a, const AlpaSearch& b) {
        return a.choice.objective_s < b.choice.objective_s;
    });
    std::optional<Plan> best_plan;
    // Replayed (ranked as reported), one that fits only as far as it could beat the best that fits.
    const auto keep = [&](Plan candidate) {
        const bool race = best_plan && best_plan->memory_shortfalls.empty() && candidate.memory_shortfalls.empty();
        replay_step(in, candidate, race ? best_plan->step_s : kInfinity);
        if (!best_plan || better(candidate, *best_plan)) best_plan = std::move(candidate);
    };
    for (const AlpaSearch& search : found) {
        if (search.choice.objective_s > kAlpaObjectiveSlack * found.front().choice.objective_s) break;
        if (search.choice.stages.size() == 1 && search.microbatches == 1 && whole_intra_planned) {
            keep(whole.front());  // the same plan, kept here so ties go as before
            whole.erase(whole.begin());
            whole_intra_planned = false;
            continue;
        }
        PipelinePlan p;
        p.schedule = po.schedule;
        p.microbatches = search.microbatches;
        p.microbatch_size = batch / search.microbatches;
        p.objective_s = search.choice.objective_s;
        std::vector<std::vector<double>> layer_s(search.choice.stages.size());
        std::size_t first_block = 0;
        for (std::size_t s = 0; s < search.choice.stages.size(); ++s) {
            const auto [end_block, m] = search.choice.stages[s];
            p.stages.push_back(plan_stage(block_in, options, bounds[first_block], bounds[end_block],
                                          stage_cluster(in, meshes[m].first, meshes[m].end), p.microbatch_size,
                                          &layer_s[s]));
            first_block = end_block;
        }
        finish_pipeline(in, p);
        keep(assemble(in, options, std::move(p), layer_s));
    }
    for (Plan& candidate : whole) keep(std::move(candidate));
    // The `pipeline` planner's stages (placed on the groups, cut by estimated time) are a
    // candidate too, so alpa never loses to it on its objective.
    try {
        keep(plan_given_stages(in, options));
    } catch (const PlanError&) {
        // e.g. more stages asked for than the network has layers: not a candidate
    }
    // A choice is planned unless it is the intra planner's whole-cluster plan, which is kept.
    if (!best_plan) throw std::logic_error("alpa kept no plan");
    // Alpa's objective is the predicted step of the plan it keeps.
    auto kept = std::make_shared<PipelinePlan>(*best_plan->pipeline);
    kept->objective_s = best_plan->step_s;
    best_plan->pipeline = std::move(kept);
    return std::move(*best_plan);
}

// ---- schedule ---------------------------------------------------------------------------

void append_transfer(std::vector<interconnect::NodeProgram>& programs, const PipelinePlan& p, std::size_t x,
                     std::size_t microbatch, bool forward, bool sending, bool conversions) {
    // Transfer tags: above the exchanges' (id << 21 | ...) and below the collectives' (1 << 62).
    constexpr std::uint64_t kTransferTags = std::uint64_t{1} << 61;
    const StageTransfer& t = p.transfers[x];
    const auto pairs = transfer_pairs(p, t, forward);
    const double bytes = forward ? t.forward_bytes : t.backward_bytes;
    const auto each = static_cast<std::uint64_t>(std::ceil(bytes / static_cast<double>(pairs.size())));
    if (each == 0) return;
    const StepLabels labels{p.stages.back().end_layer};  // the stages cover the network in order
    const LayerId boundary(forward ? p.stages[t.to].first_layer : p.stages[t.from].end_layer - 1);
    const std::uint32_t label = labels.label(boundary, StepPart::stage_transfer, microbatch);
    for (std::size_t i = 0; i < pairs.size(); ++i) {
        const NodeId from(pairs[i].first), to(pairs[i].second);
        const std::uint64_t tag = kTransferTags | (static_cast<std::uint64_t>(x) << 40) |
                                  (static_cast<std::uint64_t>(microbatch) << 21) |
                                  (static_cast<std::uint64_t>(i) << 1) | (forward ? 0 : 1);
        if (sending)
            programs[from.value()].ops.push_back(interconnect::Send{to, each, tag, label});
        else
            programs[to.value()].ops.push_back(interconnect::Recv{from, tag, label});
    }
    if (sending || !conversions) return;
    for (const auto& [receiver, seconds] : transfer_conversions(p, t, forward))  // after its receives
        programs[receiver].ops.push_back(
            interconnect::Compute{Picoseconds(checked_round(seconds * 1e12, "picoseconds of a conversion")), label});
}

StepWalk stage_task_walk(const PipelinePlan& p, std::size_t stage, StageTask task, bool sync,
                         std::uint64_t bucket_bytes) {
    StepWalk walk;
    walk.first_layer = p.stages[stage].first_layer;
    walk.network_layers = p.stages.back().end_layer;
    walk.microbatch = task.microbatch;
    walk.bucket_bytes = bucket_bytes;
    walk.forward = task.forward;
    walk.backward = !task.forward;
    walk.sync = !task.forward && sync;
    return walk;
}

std::vector<interconnect::NodeProgram> build_pipeline_schedule(const Plan& plan, std::size_t node_count,
                                                               const ComputePicoseconds& compute_ps,
                                                               GradientSync& gradient_sync) {
    const PipelinePlan& p = *plan.pipeline;
    const std::size_t stages = p.stages.size();
    std::vector<interconnect::NodeProgram> programs(node_count);
    for (std::size_t s = 0; s < stages; ++s) {
        const PipelineStage& stage = p.stages[s];
        ScheduleBuilder builder(stage.plan, node_count, compute_ps, gradient_sync);
        auto& ops = builder.programs();
        const std::vector<StageTask> order = stage_order(p.schedule, stages, s, p.microbatches);
        std::size_t backwards_left = p.microbatches;
        for (const StageTask& task : order) {
            // Gradients accumulate over the micro-batches; one synchronisation per step.
            const bool sync = !task.forward && --backwards_left == 0;
            for (std::size_t x = 0; x < p.transfers.size(); ++x)
                if (task.forward ? p.transfers[x].to == s : p.transfers[x].from == s)
                    append_transfer(ops, p, x, task.microbatch, task.forward, false, true);
            walk_step(stage.graph, stage.plan, builder,
                      stage_task_walk(p, s, task, sync, gradient_sync.bucket_bytes()));
            for (std::size_t x = 0; x < p.transfers.size(); ++x)
                if (task.forward ? p.transfers[x].from == s : p.transfers[x].to == s)
                    append_transfer(ops, p, x, task.microbatch, task.forward, true, true);
        }
        std::vector<interconnect::NodeProgram> built = builder.finish();
        for (const std::size_t n : stage.nodes) programs[n] = std::move(built[n]);
    }
    return programs;
}

}  // namespace fastsim::planner
