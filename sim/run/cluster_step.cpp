// SPDX-License-Identifier: MIT
#include "run/cluster_step.h"
#include "run/work.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <unordered_set>

#include <systemc>

#include "common/units.h"
#include "compression/compressor.h"
#include "costs/compression_cost.h"
#include "converter/converter_model.h"
#include "costs/exchange_cost.h"
#include "costs/storage.h"
#include "planner/pipeline_plan.h"
#include "planner/plan_view.h"
#include "planner/replicas.h"
#include "interconnect/collective_cost.h"
#include "interconnect/replay.h"
#include "memory/memory.h"
#include "node/training_step.h"
#include "planner/schedule.h"
#include "run/cluster_timeline.h"
#include "run/fresh_kernel.h"
#include "run/layer_errors.h"
#include "run/stage_level_run.h"
#include "run/training_step.h"

namespace fastsim::run {
namespace {

double seconds_since(std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

/// Bytes every comm stream sends: the gradient synchronisation on the wire.
std::uint64_t comm_stream_bytes(const std::vector<interconnect::NodeProgram>& programs) {
    std::uint64_t bytes = 0;
    for (const auto& p : programs)
        for (const auto& op : p.comm_ops)
            if (const auto* s = std::get_if<interconnect::Send>(&op))
                bytes = checked_add(bytes, s->bytes, "bytes of a step's sync");
    return bytes;
}

/// Every node's compression work over the step's replica sets (one synchronisation per
/// mini-batch), in picojoules.
double compression_energy_pj(const config::Params& params, const std::vector<costs::NodeType>& types,
                             const planner::LayerGraph& graph, const planner::Plan& plan) {
    const config::GradientSyncParams& sync = params.cluster.gradient_sync;
    if (sync.scheme == compression::Scheme::none) return 0;
    const compression::Params cp = sync.compression_params();
    double pj = 0;
    planner::for_each_part(plan, graph, [&](const planner::PlanPart& part) {
        for (std::size_t l = 0; l < part.graph.layers.size(); ++l)
            for (const planner::ReplicaSet& set : planner::weight_replica_sets(part.graph, part.plan, LayerId(l))) {
                const compression::Work work = compression::compressor_of(cp.scheme).node_work(
                    cp, set.elements, set.factor_rows + set.factor_cols);
                for (const NodeId n : set.nodes)
                    pj += costs::compression_cost(types[params.cluster.node_type[n.value()]], work).energy_pj;
            }
    });
    return pj;
}

/// `times` conversions of `values` values on a node of `type`, added to its converter's work.
void add_conversion(const costs::NodeType& type, std::uint64_t values, bfp::Rounding rounding, std::uint64_t times,
                    NodeReport& node) {
    node::PhaseCounters one;
    one.conversion = converter::conversion_cost(type.node.converter, values, rounding, type.node.noise_bits);
    node.counters += one.repeated(times);
}

/// Each node's conversions of the boundary tensors it receives in another format, as
/// ScheduleBuilder::exchange times them (the same pairs and values), added to its converter's
/// work for its energy: activations rounded to nearest, gradients stochastically.
class ConversionCounter final : public planner::StepVisitor {
public:
    ConversionCounter(const planner::Plan& plan, const std::vector<costs::NodeType>& types,
                      const std::vector<std::size_t>& node_type, std::uint64_t times, std::vector<NodeReport>& nodes)
        : m_plan(plan), m_types(types), m_node_type(node_type), m_times(times), m_nodes(nodes) {}

    void exchange(std::size_t g, const planner::SideVolumes& bytes, const planner::StepTag& /*tag*/,
                  planner::ExchangeTensor tensor) override {
        if (tensor == planner::ExchangeTensor::fp32) return;
        const planner::Group& group = m_plan.groups[g];
        const auto& a = m_plan.groups[static_cast<std::size_t>(group.side_a)].nodes;
        const auto& b = m_plan.groups[static_cast<std::size_t>(group.side_b)].nodes;
        const std::size_t pairs = std::max(a.size(), b.size());
        const auto k = static_cast<std::size_t>(tensor);
        const bfp::Rounding rounding =
            tensor == planner::ExchangeTensor::activations ? bfp::Rounding::nearest : bfp::Rounding::stochastic;
        const auto convert = [&](const std::vector<std::size_t>& side, const planner::BoundaryFormat& format,
                                 double total) {
            const auto values = static_cast<std::uint64_t>(std::ceil(planner::values_per_pair(total, pairs, format)));
            for (std::size_t i = 0; i < pairs; ++i) {
                const std::size_t at = i % side.size();
                if (format.convert_s(side[at], static_cast<double>(values)) == 0) continue;
                add_conversion(m_types[m_node_type[side[at]]], values, rounding, m_times, m_nodes[side[at]]);
            }
        };
        convert(a, group.exchange.into_a[k], bytes.to_a);
        convert(b, group.exchange.into_b[k], bytes.to_b);
    }
    void compute(std::size_t /*phase*/, const planner::StepTag& /*tag*/) override {}
    void all_reduce(const std::vector<planner::ReplicaSet>& /*sets*/, const planner::StepTag& /*tag*/) override {}

private:
    const planner::Plan& m_plan;
    const std::vector<costs::NodeType>& m_types;
    const std::vector<std::size_t>& m_node_type;
    std::uint64_t m_times;  ///< micro-batches: each exchange happens once per micro-batch
    std::vector<NodeReport>& m_nodes;
};

/// The vector-unit update of cluster.optimizer.
workload::Optimizer update_optimizer(config::OptimizerKind kind) {
    switch (kind) {
    case config::OptimizerKind::sgd: return workload::Optimizer::sgd;
    case config::OptimizerKind::momentum: return workload::Optimizer::sgd_momentum;
    case config::OptimizerKind::adam: return workload::Optimizer::adam;
    }
    return workload::Optimizer::none;
}

}  // namespace

std::unique_ptr<planner::GradientSync> make_gradient_sync(interconnect::AllReduceChooser& chooser,
                                                          const config::GradientSyncParams& sync,
                                                          planner::CompressionSeconds work_seconds) {
    const bool server = sync.algorithm == config::GradientSyncAlgorithm::parameter_server;
    planner::SyncScheme scheme;
    scheme.compression = sync.compression_params();
    scheme.parameter_server = server;
    for (const std::size_t id : sync.server_ids) scheme.servers.emplace_back(id);
    scheme.staleness = static_cast<std::size_t>(sync.staleness);
    scheme.bucket_bytes = sync.bucket_bytes();
    scheme.message_level_max_ranks = static_cast<std::size_t>(sync.message_level_max_ranks);
    return std::make_unique<planner::SchemeSync>(chooser, std::move(scheme), std::move(work_seconds));
}

std::unique_ptr<planner::GradientSync> make_gradient_sync(const config::Params& params,
                                                          interconnect::AllReduceChooser& chooser,
                                                          const config::GradientSyncParams& sync) {
    return make_gradient_sync(
        chooser, sync, [types = cost_node_types(params), &params](NodeId node, const compression::Work& work) {
            return costs::compression_cost(types[params.cluster.node_type[node.value()]], work).time;
        });
}

ClusterCosts::ClusterCosts(const config::Params& params, const planner::LayerGraph& graph)
    : types(cost_node_types(params)),
      compute(types, graph, update_optimizer(params.cluster.optimizer)),
      all_reduce(*params.cluster.topology, config::forced_all_reduce(params.cluster.gradient_sync.algorithm)),
      gradient_sync(make_gradient_sync(params, all_reduce, params.cluster.gradient_sync)) {}

std::vector<costs::NodeType> cost_node_types(const config::Params& params) {
    std::vector<costs::NodeType> types;
    for (const config::NodeTypeParams& t : params.cluster.node_types)
        types.push_back({t.arrays, t.node.resolved, t.precision, t.energy, t.dram_capacity_gib});
    return types;
}

planner::ClusterView cluster_view(const config::ClusterParams& cluster) {
    planner::ClusterView view;
    view.node_type = cluster.node_type;
    for (std::size_t n = 0; n < cluster.node_type.size(); ++n) view.order.push_back(n);
    view.preferred_cuts.assign(cluster.group_first_node.begin() + 1, cluster.group_first_node.end());
    return view;
}

costs::BfpStorage bfp_storage(const config::Params& params) {
    return {params.bfp.group_size, params.bfp.exponent_bits};
}

/// Each node's phases under `plan` at its share, in its own clock's picoseconds: what the run
/// simulates, and what the planner's replay of a plan times.
planner::ComputePicoseconds phase_picoseconds(const config::Params& params,
                                              costs::NodeCharacterisation& characterisation,
                                              const planner::Plan& plan) {
    return [&params, &characterisation, &plan](NodeId node, LayerId layer) {
        const config::ClusterParams& c = params.cluster;
        const std::size_t type = c.node_type[node.value()];
        const auto& cycles = with_layer_named(params, layer.value(), [&]() -> const std::array<std::uint64_t, 4>& {
            return characterisation.cycles(type, layer.value(), plan.node_dims[node.value()][layer.value()]);
        });
        const std::uint64_t hz = c.node_types[type].node.resolved.clock_hz;
        planner::PhasePicoseconds ps{};
        with_layer_named(params, layer.value(), [&] {
            for (std::size_t p = 0; p < ps.size(); ++p)
                ps[p] = to_picoseconds(Cycles(cycles[p]), hz, "picoseconds of a phase");
        });
        return ps;
    };
}

ClusterPlan plan_cluster(const config::Params& params, const planner::PlannerOptions& requested, ClusterCosts& costs,
                         const WorkProgress& progress, const planner::PlanDecisions* given) {
    const planner::PlannerOptions& options = given ? given->options : requested;
    costs::NodeCharacterisation& characterisation = costs.compute;
    const auto start = std::chrono::steady_clock::now();
    ClusterPlan out;
    out.graph = characterisation.graph();
    const config::ClusterParams& c = params.cluster;
    const planner::ClusterView view = cluster_view(c);
    const interconnect::Topology& topology = *c.topology;
    const costs::BfpStorage storage = bfp_storage(params);
    const bool comm_only = options.comm_only;
    const auto formats =
        std::make_shared<const std::vector<planner::NodeFormat>>(costs::node_formats(costs.types, c.node_type));
    const planner::ExchangeModel exchange = [&topology, formats, storage, comm_only](
                                                const std::vector<std::size_t>& a, const std::vector<std::size_t>& b) {
        planner::ExchangeCost x = costs::exchange_cost(topology, a, b);
        costs::set_boundary_formats(x, formats, storage, comm_only, a, b);
        return x;
    };
    const auto groups = planner::bisect(view, exchange);
    planner::PlanningInputs inputs{
        out.graph,
        view,
        groups,
        [&](std::size_t type, LayerId layer, const planner::LayerDims& d) {
            return with_layer_named(params, layer.value(),
                                    [&] { return characterisation.seconds(type, layer.value(), d); });
        },
        costs::element_bytes(costs.types, bfp_storage(params), options.comm_only),
        costs.gradient_sync.get(),
        costs::memory_model(costs.types, bfp_storage(params), config::optimizer_state_copies(params.cluster.optimizer)),
        {},
        {},
        exchange,
        {},
        &costs.plans};
    for (const auto& t : c.node_types) inputs.node_type_names.push_back(t.name);
    // The planners rank and report a plan by its schedule replayed on the network, in plain C++
    // (docs/planner.md, "Predictions"); a delayed update's steady state keeps the walk's.
    interconnect::Network replay_network(topology);
    std::vector<NodeId> identity;
    for (std::size_t n = 0; n < c.node_type.size(); ++n) identity.emplace_back(n);
    if (costs.gradient_sync->staleness() == 0)
        inputs.replay = [&](const planner::Plan& plan, double give_up_after_s) {
            const planner::ComputePicoseconds compute_ps = phase_picoseconds(params, characterisation, plan);
            // A pipeline simulated at stage level is predicted at stage level, from the same pieces.
            if (const std::optional<StagePieces> pieces = stage_level_pieces(
                    c.pipeline_simulation, plan, c.node_type.size(), compute_ps, *costs.gradient_sync))
                return planner::ReplayedStep{replay_by_stage(plan, *pieces, replay_network), pieces->held_ops};
            const auto programs =
                planner::build_schedule(out.graph, plan, c.node_type.size(), compute_ps, *costs.gradient_sync);
            const std::uint64_t ops = interconnect::op_count(programs);
            // One picosecond past the bound, so a step that ends at it (rounded) is replayed whole.
            const Picoseconds give_up =
                give_up_after_s < 1e6 ? Picoseconds(static_cast<std::uint64_t>(std::ceil(give_up_after_s * 1e12)) + 1)
                                      : interconnect::kNeverPs;
            const Picoseconds end =
                interconnect::replay_messages(replay_network, programs, identity, nullptr, true, give_up);
            return planner::ReplayedStep{
                end == interconnect::kNeverPs ? std::numeric_limits<double>::infinity() : to_seconds(end), ops};
        };
    std::size_t made = 0;
    const auto expected =
        given ? 1.0
              : static_cast<double>(plans_made(options.kind, options.kind == planner::PlannerKind::accpar &&
                                                                 !options.comm_only && !view.preferred_cuts.empty() &&
                                                                 view.order.size() <= planner::kAccParWeighsAlpaNodes));
    if (progress) inputs.plan_made = [&] { progress(std::min(0.99, static_cast<double>(++made) / expected)); };
    out.plan = given ? planner::evaluate_plan(inputs, *given) : planner::make_plan(inputs, options);
    out.planning_s = seconds_since(start);
    return out;
}

ClusterStepResult run_cluster_step(const config::Params& params, const planner::PlannerOptions& options,
                                   const std::optional<TimelineRequest>& timeline, const WorkProgress& progress,
                                   const planner::PlanDecisions* given) {
    const planner::LayerGraph graph = planner::build_layer_graph(params.workload.network, params.workload.batch);
    ClusterCosts costs(params, graph);
    return run_cluster_step(params, options, costs, timeline, progress, given);
}

ClusterStepResult run_cluster_step(const config::Params& params, const planner::PlannerOptions& options,
                                   ClusterCosts& costs, const std::optional<TimelineRequest>& timeline,
                                   const WorkProgress& progress, const planner::PlanDecisions* given) {
    const auto report = [&](double fraction) {
        if (progress) progress(fraction);
    };
    ClusterStepResult r;
    const config::ClusterParams& c = params.cluster;
    const std::size_t node_count = c.node_type.size();
    costs::NodeCharacterisation& characterisation = costs.compute;
    const planner::LayerGraph& graph = characterisation.graph();
    r.planned = plan_cluster(
        params, options, costs, [&](double planned) { report(0.5 * planned); }, given);
    const planner::Plan& plan = r.planned.plan;
    // The simulation holds the programs the planner replayed: their count decides whether it fits
    // (the estimate before planning could only bound them; run/work.h).
    if (plan.replayed_ops > 0) check_simulation_memory(params, plan.replayed_ops, plan.pipeline != nullptr);
    const std::size_t layers = graph.layers.size();
    report(0.5);

    // (1) The schedule: each node's phases at its share, in its own clock's picoseconds.
    const auto start = std::chrono::steady_clock::now();
    r.nodes.resize(node_count);
    const planner::ComputePicoseconds compute_ps = phase_picoseconds(params, characterisation, plan);
    // A pipeline of many micro-batches is simulated at stage level, from its pieces (docs/pipeline.md).
    const std::optional<StagePieces> pieces =
        stage_level_pieces(c.pipeline_simulation, plan, node_count, compute_ps, *costs.gradient_sync);
    r.stage_level = pieces.has_value();
    if (r.stage_level && timeline)
        throw UserError("--trace: a timeline needs the message-level simulation, and this pipeline's step of " +
                        std::to_string(pieces->step_ops) +
                        " ops is simulated at stage level (docs/pipeline.md, \"Stage-level simulation\"); leave "
                        "out --trace, or pass -p cluster.pipeline_simulation=message_level");
    const auto programs = r.stage_level
                              ? std::vector<interconnect::NodeProgram>{}
                              : planner::build_schedule(graph, plan, node_count, compute_ps, *costs.gradient_sync);
    // The programs that carry the step's gradient synchronisation: the whole step's, or at stage
    // level each stage's last backward (the only pieces with all-reduces).
    const auto sync_programs = [&](planner::GradientSync& sync) {
        if (!r.stage_level) return planner::build_schedule(graph, plan, node_count, compute_ps, sync);
        std::vector<interconnect::NodeProgram> all(node_count);
        for (std::size_t s = 0; s < plan.pipeline->stages.size(); ++s) {
            auto built = planner::stage_piece_programs(plan, s, planner::StagePiece::last_backward, node_count,
                                                       compute_ps, sync);
            for (std::size_t n = 0; n < node_count; ++n)
                all[n].comm_ops.insert(all[n].comm_ops.end(), built[n].comm_ops.begin(), built[n].comm_ops.end());
        }
        return all;
    };
    r.all_reduces = planned_all_reduces(r.planned, costs, node_count);
    if (const compression::Scheme scheme = c.gradient_sync.scheme; scheme == compression::Scheme::topk ||
                                                                   scheme == compression::Scheme::dgc ||
                                                                   scheme == compression::Scheme::threshold) {
        for (const planner::SyncJob& job : planner::step_sync_jobs(graph, plan, costs.gradient_sync->bucket_bytes())) {
            if (job.ranks.size() < 2) continue;
            ++r.sparse_gathers;
            if (static_cast<double>(job.ranks.size()) * c.gradient_sync.density > 1) ++r.sparse_gathers_over_dense;
        }
    }
    // Flow-level all-reduces: distinct tags (each stage's own at stage level, whose pieces
    // number their collectives from the same first tag).
    const auto flow_collectives = [](const std::vector<interconnect::NodeProgram>& in) {
        std::unordered_set<std::uint64_t> tags;
        for (const interconnect::NodeProgram& p : in)
            for (const interconnect::Op& op : p.comm_ops)
                if (const auto* f = std::get_if<interconnect::FlowCollective>(&op)) tags.insert(f->tag);
        return tags.size();
    };
    // At stage level the all-reduces are each stage's last backward's: counted, and their bytes
    // on the wire summed, in one visit of each (a piece may be built again for it).
    std::uint64_t last_backward_bytes = 0;
    if (r.stage_level)
        for (std::size_t s = 0; s < pieces->stages; ++s)
            pieces->visit(pieces->piece_index(s, planner::StagePiece::last_backward),
                          [&](const std::vector<interconnect::NodeProgram>& last) {
                              r.flow_level_all_reduces += flow_collectives(last);
                              last_backward_bytes += comm_stream_bytes(last);
                          });
    else
        r.flow_level_all_reduces = flow_collectives(programs);
    // Gradient synchronisation on the wire (every comm stream's sends), and the same algorithm
    // with uncompressed gradients; each node's compression work, for its energy. A flow-level
    // all-reduce sends nothing in the programs: its bytes are its message-level lowering's,
    // built (not run) for the count.
    const auto zero_ps = [](NodeId, LayerId) { return planner::PhasePicoseconds{}; };
    const auto message_level_bytes = [&](config::GradientSyncParams sync) {
        sync.staleness = 0;
        sync.message_level_max_ranks = std::numeric_limits<std::uint64_t>::max();
        const auto lowered = make_gradient_sync(params, costs.all_reduce, sync);
        return comm_stream_bytes(r.stage_level ? sync_programs(*lowered)
                                               : planner::build_schedule(graph, plan, node_count, zero_ps, *lowered));
    };
    r.sync_bytes = r.flow_level_all_reduces > 0 ? message_level_bytes(c.gradient_sync)
                   : r.stage_level              ? last_backward_bytes
                                                : comm_stream_bytes(programs);
    if (c.gradient_sync.scheme == compression::Scheme::none) {
        r.sync_bytes_uncompressed = r.sync_bytes;
    } else {
        config::GradientSyncParams plain = c.gradient_sync;
        plain.scheme = compression::Scheme::none;
        r.sync_bytes_uncompressed = message_level_bytes(plain);
    }
    r.compression_energy_pj = compression_energy_pj(params, costs.types, graph, plan);
    // Every layer a node works on, once per micro-batch (a pipeline's other stages' layers it has none of).
    const std::uint64_t passes = planner::microbatches(plan);
    std::vector<double> vector_cycles(node_count, 0.0);
    for (std::size_t n = 0; n < node_count; ++n)
        for (std::size_t l = 0; l < layers; ++l) {
            const planner::LayerDims& d = plan.node_dims[n][l];
            if (d.batch == 0 || d.in_channels == 0 || d.out_channels == 0) continue;
            const auto& counters =
                with_layer_named(params, l, [&]() -> const costs::NodeCharacterisation::LayerCounters& {
                    return characterisation.counters(c.node_type[n], l, d);
                });
            for (std::size_t p = 0; p < planner::kWeightUpdate; ++p)
                r.nodes[n].counters += counters[p].repeated(passes);
            r.nodes[n].counters += counters[planner::kWeightUpdate];  // once a step
            const std::array<std::uint64_t, 2> carried = characterisation.carried_cycles(c.node_type[n], l, d);
            vector_cycles[n] += static_cast<double>(passes) * static_cast<double>(carried[0] + carried[1]) +
                                static_cast<double>(characterisation.update_cycles(c.node_type[n], l, d));
        }
    // Each node's conversions of what it receives in another format, for its energy.
    planner::for_each_part(plan, graph, [&](const planner::PlanPart& part) {
        ConversionCounter counter(part.plan, costs.types, c.node_type, passes, r.nodes);
        planner::StepWalk walk;
        walk.sync = false;
        walk.first_layer = part.first_layer;
        walk.network_layers = layers;
        planner::walk_step(part.graph, part.plan, counter, walk);
    });
    if (plan.pipeline)  // and of the stage transfers, once per micro-batch each way
        for (const planner::StageTransfer& t : plan.pipeline->transfers)
            for (const bool forward : {true, false}) {
                const planner::BoundaryFormat& f = forward ? t.cost.into_b[0] : t.cost.into_a[1];
                const auto pairs = planner::transfer_pairs(*plan.pipeline, t, forward);
                const auto values = static_cast<std::uint64_t>(
                    std::ceil(planner::values_per_pair(forward ? t.forward_bytes : t.backward_bytes, pairs.size(), f)));
                for (const auto& [sender, receiver] : pairs)
                    if (f.convert_s(receiver, static_cast<double>(values)) > 0)
                        add_conversion(costs.types[c.node_type[receiver]], values,
                                       forward ? bfp::Rounding::nearest : bfp::Rounding::stochastic, passes,
                                       r.nodes[receiver]);
            }
    r.ops = interconnect::op_count(programs);
    if (r.stage_level) {
        r.ops = pieces->step_ops;
        r.piece_ops = pieces->piece_ops;
    }
    report(0.6);

    // (2) One SystemC simulation of the whole step.
    std::optional<ClusterTimeline> recorder;
    if (timeline) recorder.emplace(c, graph, *timeline, planner::microbatches(plan));
    try {
        r.simulated = r.stage_level ? simulate_by_stage_on_systemc(*c.topology, plan, *pieces)
                                    : cluster::run_cluster(*c.topology, programs, recorder ? &*recorder : nullptr);
    } catch (const SizeOverflow&) {
        throw ConfigError(params.workload.batch_where,
                          "the simulated step could last more than 2^62 ps (53 days), more than the simulation counts: "
                          "the cluster's links or clocks are too slow for this batch and network");
    }
    if (recorder) r.timeline = recorder->finish(r.simulated.end_ps);
    r.simulation_s = seconds_since(start);
    report(1);
    r.step_s = to_seconds(r.simulated.end_ps);
    // The main streams' end, and with a delayed update the steady-state step (docs/compression.md,
    // "Delayed updates"): no shorter than the main streams, the busiest link's busy time, or the
    // last synchronisation's end spread over D + 1 steps.
    // Without a delayed update a node waits for its all-reduces and then updates its weights, so
    // the undelayed step ends at max(main end before the updates, its all-reduces' end) + updates.
    double main_end = 0, sync_end = 0, undelayed = 0;
    for (std::size_t n = 0; n < node_count; ++n) {
        const cluster::NodeStats& s = r.simulated.nodes[n];
        // Each main stream's end, less its final waits for the all-reduces (its only WaitFors).
        const double main_n = to_seconds(s.main_finish_ps - std::min(s.main_finish_ps, s.main_event_wait_ps));
        Picoseconds update{0};
        for (std::size_t l = 0; l < layers; ++l)
            if (plan.node_dims[n][l].batch > 0) update += compute_ps(NodeId(n), LayerId(l))[planner::kWeightUpdate];
        main_end = std::max(main_end, main_n);
        sync_end = std::max(sync_end, to_seconds(s.comm_finish_ps));
        undelayed = std::max(undelayed,
                             std::max(main_n - to_seconds(update), to_seconds(s.comm_finish_ps)) + to_seconds(update));
    }
    if (const std::size_t staleness = costs.gradient_sync->staleness(); staleness > 0) {
        Picoseconds busiest{0};
        for (const auto& ch : r.simulated.channels) busiest = std::max(busiest, ch.busy_ps);
        r.step_s = std::max({main_end, to_seconds(busiest), sync_end / static_cast<double>(staleness + 1)});
        r.staleness_overlap_s = undelayed - r.step_s;
        // What the step waits for beyond its own streams: none of it is the final waits.
        main_end = std::min(main_end, r.step_s);
    }
    r.exposed_sync_s = std::max(0.0, r.step_s - main_end);

    // (3) Per node time and energy (leakage over the whole step), per link energy.
    for (std::size_t n = 0; n < node_count; ++n) {
        NodeReport& node = r.nodes[n];
        const cluster::NodeStats& s = r.simulated.nodes[n];
        node.compute_s = to_seconds(s.compute_ps);
        node.wait_s = to_seconds(s.wait_ps);
        node.idle_s = std::max(0.0, r.step_s - node.compute_s - node.wait_s);
        const config::NodeTypeParams& t = c.node_types[c.node_type[n]];
        node.vector_s = std::min(node.compute_s, vector_cycles[n] / static_cast<double>(t.node.resolved.clock_hz));
        node::PhaseCounters for_energy = node.counters;
        for_energy.cycles = to_cycles(r.simulated.end_ps, t.node.resolved.clock_hz).count();
        node.energy = counters_energy(for_energy, t.node.resolved, t.node.sram_exponent_kib + t.node.sram_mantissa_kib,
                                      static_cast<std::uint64_t>(t.arrays), t.energy);
        r.compute_energy += node.energy;
    }
    for (const auto& ch : r.simulated.channels) r.link_energy_pj += ch.energy_pj;

    // (4) Simulated time per layer: the mean node's compute and waits under the layer's labels
    // (forward and backward, with their exchanges and conversions; its exposed weight-gradient
    // sum; its weight update). Spans would overlap once the nodes drift apart.
    r.layer_simulated_s.assign(layers, 0);
    const planner::StepLabels labels{layers};
    for (const auto& [label, stats] : r.simulated.labels) {
        if (labels.part(label) == planner::StepPart::stage_transfer) continue;
        r.layer_simulated_s[labels.layer(label).value()] +=
            to_seconds(stats.compute_ps + stats.wait_ps) / static_cast<double>(node_count);
    }

    // (5) Each part of the plan (a pipeline's stages; a hierarchy plan's one): busy = its mean
    // node's compute and waits under its layers' forward, backward and weight-update labels (its
    // micro-batches' work and its weight updates, not the bubble).
    std::vector<std::size_t> part_of(layers, 0), part_nodes;
    planner::for_each_part(plan, graph, [&](const planner::PlanPart& part) {
        for (std::size_t l = 0; l < part.graph.layers.size(); ++l) part_of[part.first_layer + l] = part_nodes.size();
        part_nodes.push_back(part.nodes.size());
    });
    r.stages.assign(part_nodes.size(), StageReport{});
    for (const auto& [label, stats] : r.simulated.labels) {
        const planner::StepPart part = labels.part(label);
        if (part != planner::StepPart::forward && part != planner::StepPart::backward &&
            part != planner::StepPart::weight_update)
            continue;
        const std::size_t s = part_of[labels.layer(label).value()];
        r.stages[s].busy_s += to_seconds(stats.compute_ps + stats.wait_ps) / static_cast<double>(part_nodes[s]);
    }
    std::vector<std::vector<StageSpan>> spans = stage_spans(r.simulated, labels, part_of, part_nodes.size());
    double busy = 0;
    for (std::size_t s = 0; s < r.stages.size(); ++s) {
        r.stages[s].idle_s = std::max(0.0, r.step_s - r.stages[s].busy_s);
        r.stages[s].spans = std::move(spans[s]);
        busy += r.stages[s].busy_s;
    }
    r.bubble_fraction = r.step_s > 0 ? 1 - busy / (static_cast<double>(r.stages.size()) * r.step_s) : 0;
    return r;
}

std::vector<std::vector<StageSpan>> stage_spans(const cluster::ClusterResult& simulated,
                                                const planner::StepLabels& labels,
                                                const std::vector<std::size_t>& part_of, std::size_t parts) {
    // One span per (part, step part, micro-batch): the union of its layers' label spans.
    std::map<std::tuple<std::size_t, planner::StepPart, std::size_t>, std::pair<Picoseconds, Picoseconds>> found;
    for (const auto& [label, stats] : simulated.labels) {
        const planner::StepPart part = labels.part(label);
        if ((part != planner::StepPart::forward && part != planner::StepPart::backward &&
             part != planner::StepPart::weight_update) ||
            stats.op_count == 0)
            continue;
        const std::size_t microbatch = part == planner::StepPart::weight_update ? 0 : labels.microbatch(label);
        const auto key = std::make_tuple(part_of.at(labels.layer(label).value()), part, microbatch);
        const auto [it, fresh] = found.try_emplace(key, stats.first_start_ps, stats.last_end_ps);
        if (!fresh) {
            it->second.first = std::min(it->second.first, stats.first_start_ps);
            it->second.second = std::max(it->second.second, stats.last_end_ps);
        }
    }
    std::vector<std::vector<StageSpan>> spans(parts);
    for (const auto& [key, span] : found)
        spans.at(std::get<0>(key))
            .push_back({std::get<1>(key), std::get<2>(key), to_seconds(span.first), to_seconds(span.second)});
    for (auto& stage : spans)
        std::stable_sort(stage.begin(), stage.end(),
                         [](const StageSpan& a, const StageSpan& b) { return a.start_s < b.start_s; });
    return spans;
}

std::vector<interconnect::AllReduceUse> planned_all_reduces(const ClusterPlan& planned, ClusterCosts& costs,
                                                            std::size_t node_count) {
    const std::vector<planner::SyncJob> jobs =
        planner::step_sync_jobs(planned.graph, planned.plan, costs.gradient_sync->bucket_bytes());
    std::vector<interconnect::NodeProgram> scratch(node_count);
    costs.all_reduce.record(true);
    for (const planner::SyncJob& job : jobs) {
        costs.gradient_sync->lower(scratch, job, 0, 0);
        for (interconnect::NodeProgram& p : scratch) p.ops.clear();
    }
    costs.all_reduce.record(false);
    return costs.all_reduce.uses();
}

ClusterStepResult run_cluster_step_in_fresh_kernel(const config::Params& params,
                                                   const planner::PlannerOptions& options) {
    ClusterStepResult r;
    in_fresh_kernel([&] { r = run_cluster_step(params, options); });
    return r;
}

ClusterStepResult run_cluster_step_in_fresh_kernel(const config::Params& params, const planner::PlannerOptions& options,
                                                   ClusterCosts& costs) {
    ClusterStepResult r;
    in_fresh_kernel([&] { r = run_cluster_step(params, options, costs); });
    return r;
}

}  // namespace fastsim::run
