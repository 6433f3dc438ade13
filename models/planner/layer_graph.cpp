// SPDX-License-Identifier: MIT
#include "planner/layer_graph.h"

#include <stdexcept>

namespace fastsim::planner {

const char* to_string(PartitionType type) {
    switch (type) {
    case PartitionType::batch: return "I";
    case PartitionType::in_channels: return "II";
    case PartitionType::out_channels: return "III";
    }
    return "?";
}

std::uint64_t& LayerDims::along(PartitionType type) {
    switch (type) {
    case PartitionType::batch: return batch;
    case PartitionType::in_channels: return in_channels;
    case PartitionType::out_channels: return out_channels;
    }
    return batch;
}

std::uint64_t LayerDims::along(PartitionType type) const {
    switch (type) {
    case PartitionType::batch: return batch;
    case PartitionType::in_channels: return in_channels;
    case PartitionType::out_channels: return out_channels;
    }
    return batch;
}

workload::Layer PlanLayer::with_dims(const LayerDims& d) const {
    workload::Layer l = layer;
    switch (l.kind) {
    case workload::LayerKind::conv:
        l.in_channels = static_cast<int>(d.in_channels);
        l.filters = static_cast<int>(d.out_channels);
        break;
    case workload::LayerKind::fc:
        l.in_features = static_cast<int>(d.in_channels);
        l.out_features = static_cast<int>(d.out_channels);
        break;
    case workload::LayerKind::matmul:
        l.k = static_cast<int>(d.in_channels);
        l.n = static_cast<int>(d.out_channels);
        break;
    }
    return l;
}

LayerGraph build_layer_graph(const workload::Workload& workload, std::uint64_t batch) {
    LayerGraph graph;
    const auto& layers = workload.layers;
    const auto u64 = [](int v) { return static_cast<std::uint64_t>(v); };
    for (std::size_t i = 0; i < layers.size(); ++i) {
        const workload::Layer& l = layers[i];
        PlanLayer p;
        p.name = l.name;
        p.layer = l;
        p.dims.batch = batch;
        switch (l.kind) {
        case workload::LayerKind::conv:
            p.dims.in_channels = u64(l.in_channels);
            p.dims.out_channels = u64(l.filters);
            p.in_positions = u64(l.in_height) * u64(l.in_width);
            p.out_positions = u64(l.out_height()) * u64(l.out_width());
            p.kernel_area = u64(l.kernel_height) * u64(l.kernel_width);
            break;
        case workload::LayerKind::fc:
            p.dims.in_channels = u64(l.in_features);
            p.dims.out_channels = u64(l.out_features);
            p.in_positions = p.out_positions = u64(l.tokens);
            break;
        case workload::LayerKind::matmul:
            p.dims.in_channels = u64(l.k);
            p.dims.out_channels = u64(l.n);
            p.in_positions = p.out_positions = u64(l.m) * u64(l.repeat);
            p.has_weights = false;
            break;
        }
        if (l.inputs.empty()) {
            if (i > 0) p.producers.push_back({i - 1, EdgeKind::producer_output});
        } else {
            for (const std::string& input : l.inputs) {
                if (input == workload::kNetworkInput) continue;
                std::size_t from = i;
                for (std::size_t j = 0; j < i; ++j)
                    if (layers[j].name == input) from = j;
                if (from == i)
                    throw std::invalid_argument("layer '" + l.name + "' reads '" + input + "', which is no earlier layer");
                const bool block = !p.producers.empty() && workload.shortcuts == workload::ShortcutConvention::accpar;
                p.producers.push_back({from, block ? EdgeKind::accpar_block : EdgeKind::producer_output});
            }
        }
        graph.layers.push_back(std::move(p));
    }
    graph.last_consumer.resize(layers.size());
    for (std::size_t i = 0; i < layers.size(); ++i) graph.last_consumer[i] = i;
    for (std::size_t i = 0; i < layers.size(); ++i)
        for (const Edge& e : graph.layers[i].producers) graph.last_consumer[e.from] = std::max(graph.last_consumer[e.from], i);
    return graph;
}

}  // namespace fastsim::planner
