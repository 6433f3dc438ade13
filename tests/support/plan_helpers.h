// SPDX-License-Identifier: MIT
#pragma once

// Small layer graphs and clusters for the planner and schedule tests.

#include <initializer_list>
#include <string>
#include <vector>

#include "common/units.h"
#include "planner/planner.h"
#include "workload/layer.h"

namespace fastsim::test {

inline workload::Layer fc(const std::string& name, int in, int out, std::vector<std::string> inputs = {}) {
    workload::Layer l;
    l.name = name;
    l.kind = workload::LayerKind::fc;
    l.in_features = in;
    l.out_features = out;
    l.inputs = std::move(inputs);
    return l;
}

inline workload::Layer conv(const std::string& name, int hw, int c_in, int filters, int kernel) {
    workload::Layer l;
    l.name = name;
    l.kind = workload::LayerKind::conv;
    l.in_height = l.in_width = hw;
    l.in_channels = c_in;
    l.kernel_height = l.kernel_width = kernel;
    l.filters = filters;
    l.padding = kernel / 2;
    return l;
}

/// Time proportional to the layer's MACs over the node type's speed (MACs per second).
inline planner::ComputeModel linear_compute(const planner::LayerGraph& graph, std::vector<double> speed) {
    return [&graph, speed](std::size_t type, LayerId l, const planner::LayerDims& d) {
        const auto& layer = graph.layers[l.value()];
        const double macs = static_cast<double>(d.batch * d.in_channels * d.out_channels * layer.kernel_area *
                                                d.out_rows * layer.out_width);
        const double s = macs / speed[type];
        return planner::PhaseSeconds{s, s, s};
    };
}

inline planner::ClusterView uniform_cluster(std::size_t nodes, std::size_t type = 0) {
    planner::ClusterView v;
    v.node_type.assign(nodes, type);
    for (std::size_t i = 0; i < nodes; ++i) v.order.push_back(i);
    return v;
}

inline planner::ExchangeModel flat_exchange(double latency_s, double bytes_per_s) {
    return [=](const std::vector<std::size_t>&, const std::vector<std::size_t>&) {
        return planner::ExchangeCost{latency_s, 1 / bytes_per_s, 1 / bytes_per_s};
    };
}

/// Node ids from plain numbers, e.g. for a ReplicaSet's expected nodes.
inline std::vector<NodeId> node_ids(std::initializer_list<std::size_t> ids) {
    std::vector<NodeId> out;
    for (const std::size_t id : ids) out.emplace_back(id);
    return out;
}

/// Gradient synchronisation that takes no time and lowers to nothing, for tests about
/// something else.
class FreeSync final : public planner::GradientSync {
public:
    std::uint64_t lower(std::vector<interconnect::NodeProgram>&, const planner::SyncJob&, std::uint64_t tag,
                        std::uint32_t) override {
        return tag;
    }
    double seconds(const planner::SyncJob&) override { return 0; }
};
inline planner::GradientSync* free_all_reduce() {
    static FreeSync sync;
    return &sync;
}

/// make_plan with free all-reduces and memory not checked.
inline planner::Plan plan_with(const planner::LayerGraph& graph, const planner::ClusterView& cluster,
                               const std::vector<planner::Group>& groups, const planner::ComputeModel& compute,
                               const planner::ElementBytes& bytes, const planner::PlannerOptions& options) {
    return planner::make_plan({graph, cluster, groups, compute, bytes, free_all_reduce(), {}, {}, {}, {}, {}}, options);
}

}  // namespace fastsim::test
