// SPDX-License-Identifier: MIT
#include "planner/schedule.h"

#include "planner/replicas.h"
#include "planner/step_plan.h"

#include <cmath>
#include <utility>

#include "common/checked.h"

namespace fastsim::planner {
namespace {

using interconnect::Compute;
using interconnect::NodeProgram;
using interconnect::Recv;
using interconnect::Send;

}  // namespace

ScheduleBuilder::ScheduleBuilder(const Plan& plan, std::size_t node_count, const ComputePicoseconds& compute_ps,
                                 GradientSync& gradient_sync)
    : m_plan(plan),
      m_compute_ps(compute_ps),
      m_sync(gradient_sync),
      m_programs(node_count),
      m_scratch(node_count),
      m_synced(node_count),
      m_times(node_count) {}

double values_per_pair(double bytes, std::size_t pairs, const BoundaryFormat& format) {
    if (format.wire_bytes <= 0 || pairs == 0) return 0;
    return std::ceil(bytes / static_cast<double>(pairs)) / format.wire_bytes;
}

std::vector<std::pair<std::size_t, double>> exchange_conversions(const Plan& plan, std::size_t g,
                                                                 const SideVolumes& bytes, ExchangeTensor tensor) {
    if (tensor == ExchangeTensor::fp32) return {};
    const auto k = static_cast<std::size_t>(tensor);
    const Group& group = plan.groups[g];
    const ExchangeCost& x = group.exchange;
    if (!x.into_a[k].nodes && !x.into_b[k].nodes) return {};  // no receiver converts
    const auto& a = plan.groups[static_cast<std::size_t>(group.side_a)].nodes;
    const auto& b = plan.groups[static_cast<std::size_t>(group.side_b)].nodes;
    const std::size_t pairs = std::max(a.size(), b.size());
    const double into_a = values_per_pair(bytes.to_a, pairs, x.into_a[k]);
    const double into_b = values_per_pair(bytes.to_b, pairs, x.into_b[k]);
    std::vector<double> side_a(a.size(), 0.0), side_b(b.size(), 0.0);  // by place in the side
    for (std::size_t i = 0; i < pairs; ++i) {
        side_a[i % a.size()] += x.into_a[k].convert_s(a[i % a.size()], into_a);
        side_b[i % b.size()] += x.into_b[k].convert_s(b[i % b.size()], into_b);
    }
    std::vector<std::pair<std::size_t, double>> out;
    for (std::size_t i = 0; i < a.size(); ++i)
        if (side_a[i] > 0) out.emplace_back(a[i], side_a[i]);
    for (std::size_t i = 0; i < b.size(); ++i)
        if (side_b[i] > 0) out.emplace_back(b[i], side_b[i]);
    return out;
}

void ScheduleBuilder::exchange(std::size_t g, const SideVolumes& bytes, const StepTag& step, ExchangeTensor tensor) {
    const std::uint32_t label = step.label;
    const Group& group = m_plan.groups[g];
    const auto& a = m_plan.groups[static_cast<std::size_t>(group.side_a)].nodes;
    const auto& b = m_plan.groups[static_cast<std::size_t>(group.side_b)].nodes;
    const std::size_t pairs = std::max(a.size(), b.size());
    const auto share = [pairs](double total) {
        return static_cast<std::uint64_t>(std::ceil(total / static_cast<double>(pairs)));
    };
    const std::uint64_t to_a = share(bytes.to_a), to_b = share(bytes.to_b);
    const std::uint64_t id = m_next_exchange++;
    for (std::size_t i = 0; i < pairs; ++i) {
        const NodeId na(a[i % a.size()]), nb(b[i % b.size()]);
        const std::uint64_t tag = (id << 21) | (static_cast<std::uint64_t>(i) << 1);
        if (to_b > 0) m_programs[na.value()].ops.push_back(Send{nb, to_b, tag, label});
        if (to_a > 0) m_programs[nb.value()].ops.push_back(Send{na, to_a, tag | 1, label});
        if (to_a > 0) m_pending.emplace_back(na, Recv{nb, tag | 1, label});
        if (to_b > 0) m_pending.emplace_back(nb, Recv{na, tag, label});
    }
    // Receives after all of this exchange's sends, so no node waits on a send it has not issued.
    for (const auto& [node, r] : m_pending) m_programs[node.value()].ops.push_back(r);
    m_pending.clear();
    // Then each receiver converts what it received into its own format where that differs.
    for (const auto& [node, seconds] : exchange_conversions(m_plan, g, bytes, tensor))
        m_programs[node].ops.push_back(
            Compute{Picoseconds(checked_round(seconds * 1e12, "picoseconds of a conversion")), label});
}

void ScheduleBuilder::compute(std::size_t phase, const StepTag& step) {
    const auto& nodes = m_plan.groups.front().nodes;
    if (step.network_layer != m_times_layer) {
        for (const std::size_t node : nodes) m_times[node] = m_compute_ps(NodeId(node), step.network_layer);
        m_times_layer = step.network_layer;
    }
    for (const std::size_t node : nodes)
        if (m_times[node][phase] > Picoseconds(0))
            m_programs[node].ops.push_back(Compute{m_times[node][phase], step.label});
}

/// After a layer's weight-gradient phase: its all-reduces over `sets` on the comm stream of
/// every node in them, each node's comm stream first waiting for its own weight gradient.
void ScheduleBuilder::all_reduce(const std::vector<ReplicaSet>& sets, const StepTag& step) {
    const std::uint32_t label = step.label;
    std::vector<bool> taking_part(m_programs.size(), false);
    for (const ReplicaSet& set : sets)
        for (const NodeId n : set.nodes) taking_part[n.value()] = true;
    for (std::size_t n = 0; n < m_programs.size(); ++n)
        if (taking_part[n]) {
            m_programs[n].ops.push_back(interconnect::Signal{gradient_ready_event(step.layer), label});
            m_programs[n].comm_ops.push_back(interconnect::WaitFor{gradient_ready_event(step.layer), label});
        }
    for (const ReplicaSet& set : sets)
        m_collective_tag = m_sync.lower(m_scratch, sync_job(m_plan, set), m_collective_tag, label);
    // Every node the scheme gave ops (a parameter server may be outside the sets), in order.
    for (std::size_t n = 0; n < m_scratch.size() && n < m_programs.size(); ++n) {
        auto& ops = m_scratch[n].ops;
        if (ops.empty()) continue;
        auto& comm_ops = m_programs[n].comm_ops;
        comm_ops.insert(comm_ops.end(), ops.begin(), ops.end());
        ops.clear();
    }
    for (std::size_t n = 0; n < m_programs.size(); ++n)
        if (taking_part[n]) {
            m_programs[n].comm_ops.push_back(interconnect::Signal{gradient_synced_event(step.layer), label});
            m_synced[n].push_back(interconnect::WaitFor{gradient_synced_event(step.layer), label});
        }
}

void ScheduleBuilder::weight_update(const StepTag& step) { m_updates.push_back(step); }

std::vector<NodeProgram> ScheduleBuilder::finish() {
    if (m_sync.staleness() == 0)
        for (std::size_t n = 0; n < m_programs.size(); ++n)
            for (const interconnect::WaitFor& w : m_synced[n]) m_programs[n].ops.push_back(w);
    for (const StepTag& step : m_updates)
        for (const std::size_t node : m_plan.groups.front().nodes) {
            const Picoseconds ps = m_compute_ps(NodeId(node), step.network_layer)[kWeightUpdate];
            if (ps > Picoseconds(0)) m_programs[node].ops.push_back(Compute{ps, step.label});
        }
    m_updates.clear();
    return std::move(m_programs);
}

void walk_step(const LayerGraph& graph, const Plan& plan, StepVisitor& visitor, const StepWalk& walk) {
    // Each layer's non-empty exchanges, per part, root first: gathered group by group (each
    // group's choices are contiguous), then visited layer by layer.
    const std::size_t n = graph.layers.size();
    const StepLabels labels{walk.network_layers > 0 ? walk.network_layers : n};
    const auto tag = [&](std::size_t l, StepPart part) {
        const LayerId network(walk.first_layer + l);
        return StepTag{LayerId(l), network, labels.label(network, part, walk.microbatch)};
    };
    struct Exchange {
        std::size_t group;
        const SideVolumes* bytes;
    };
    std::vector<std::vector<Exchange>> forward_in(n), forward_out(n), backward_in(n), backward_out(n);
    for (std::size_t g = 0; g < plan.groups.size(); ++g) {  // parents first (bisect's order)
        if (plan.groups[g].leaf()) continue;
        for (std::size_t l = 0; l < n; ++l) {
            const LayerChoice& c = plan.choices[g][l];
            if (walk.forward) {
                for (const SideVolumes& v : c.forward_in)
                    if (!v.empty()) forward_in[l].push_back({g, &v});
                if (!c.forward_out.empty()) forward_out[l].push_back({g, &c.forward_out});
            }
            if (walk.backward) {
                for (const SideVolumes& v : c.backward_in)
                    if (!v.empty()) backward_in[l].push_back({g, &v});
                if (!c.backward_out.empty()) backward_out[l].push_back({g, &c.backward_out});
            }
        }
    }
    const auto exchanges = [&](const std::vector<Exchange>& list, const StepTag& t, ExchangeTensor tensor) {
        for (const Exchange& x : list) visitor.exchange(x.group, *x.bytes, t, tensor);
    };
    if (walk.forward)
        for (std::size_t l = 0; l < n; ++l) {
            const StepTag t = tag(l, StepPart::forward);
            exchanges(forward_in[l], t, ExchangeTensor::activations);
            visitor.compute(0, t);
            exchanges(forward_out[l], t, ExchangeTensor::fp32);
        }
    if (!walk.backward) return;
    GradientBuckets buckets(walk.bucket_bytes, plan.bytes.weight_gradients);
    for (std::size_t l = n; l-- > 0;) {
        const StepTag t = tag(l, StepPart::backward);
        exchanges(backward_in[l], t, ExchangeTensor::gradients);
        visitor.compute(1, t);
        exchanges(backward_out[l], t, ExchangeTensor::fp32);
        visitor.compute(2, t);
        if (!walk.sync) continue;
        // The buckets this layer's gradients fill; after the last layer, every one still open.
        std::vector<ReplicaSet> sets = buckets.add(weight_replica_sets(graph, plan, LayerId(l)));
        if (l == 0)
            for (ReplicaSet& open : buckets.flush()) sets.push_back(std::move(open));
        if (!sets.empty()) visitor.all_reduce(sets, tag(l, StepPart::weight_sync));
        visitor.weight_update(tag(l, StepPart::weight_update));
    }
}

std::uint64_t gradient_bytes(const Plan& plan, const ReplicaSet& set) {
    return static_cast<std::uint64_t>(std::ceil(static_cast<double>(set.elements) * plan.bytes.weight_gradients));
}

SyncJob sync_job(const Plan& plan, const ReplicaSet& set) {
    return {set.nodes, set.elements, gradient_bytes(plan, set), set.factor_rows, set.factor_cols};
}

std::vector<SyncJob> step_sync_jobs(const LayerGraph& graph, const Plan& plan, std::uint64_t bucket_bytes) {
    return step_plan_of(plan).sync_jobs(graph, plan, bucket_bytes);
}

std::vector<interconnect::NodeProgram> build_schedule(const LayerGraph& graph, const Plan& plan, std::size_t node_count,
                                                      const ComputePicoseconds& compute_ps,
                                                      GradientSync& gradient_sync) {
    return step_plan_of(plan).lower(graph, plan, node_count, compute_ps, gradient_sync);
}

std::vector<interconnect::NodeProgram> build_hierarchy_schedule(const LayerGraph& graph, const Plan& plan,
                                                                std::size_t node_count,
                                                                const ComputePicoseconds& compute_ps,
                                                                GradientSync& gradient_sync) {
    ScheduleBuilder builder(plan, node_count, compute_ps, gradient_sync);
    StepWalk walk;
    walk.bucket_bytes = gradient_sync.bucket_bytes();
    walk_step(graph, plan, builder, walk);
    return builder.finish();
}

}  // namespace fastsim::planner
