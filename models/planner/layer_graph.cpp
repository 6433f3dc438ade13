// SPDX-License-Identifier: MIT
#include "planner/layer_graph.h"

#include <algorithm>
#include <stdexcept>

namespace fastsim::planner {

const char* to_string(PartitionType type) {
    switch (type) {
    case PartitionType::batch: return "I";
    case PartitionType::in_channels: return "II";
    case PartitionType::out_channels: return "III";
    case PartitionType::spatial: return "IV";
    }
    return "?";
}

const EnumNames<PartitionType, kPartitionTypes>& enum_names(PartitionType) {
    static constexpr EnumNames<PartitionType, kPartitionTypes> kNames{{
        {"batch", PartitionType::batch},
        {"in_channels", PartitionType::in_channels},
        {"out_channels", PartitionType::out_channels},
        {"spatial", PartitionType::spatial},
    }};
    return kNames;
}

std::uint64_t& LayerDims::along(PartitionType type) {
    switch (type) {
    case PartitionType::batch: return batch;
    case PartitionType::in_channels: return in_channels;
    case PartitionType::out_channels: return out_channels;
    case PartitionType::spatial: return out_rows;
    }
    return batch;
}

std::uint64_t LayerDims::along(PartitionType type) const {
    switch (type) {
    case PartitionType::batch: return batch;
    case PartitionType::in_channels: return in_channels;
    case PartitionType::out_channels: return out_channels;
    case PartitionType::spatial: return out_rows;
    }
    return batch;
}

std::uint64_t PlanLayer::input_rows(std::uint64_t out_rows) const {
    if (out_rows >= dims.out_rows) return in_height;
    return std::min(in_height, (out_rows - 1) * stride + kernel_height);
}

SpatialInputRows PlanLayer::spatial_input_rows(const LayerDims& d, std::uint64_t split_a) const {
    SpatialInputRows r;
    r.height = input_rows(d.out_rows);
    // The padded window of d.out_rows output rows is (out_rows - 1) * stride + k_h rows; those it
    // lacks of the input are zero padding, above it by the layer's padding at most.
    const std::uint64_t padded = (d.out_rows - 1) * stride + kernel_height;
    const std::uint64_t above =
        d.out_rows >= dims.out_rows ? padding : std::min(padding, padded > r.height ? padded - r.height : 0);
    const auto clamp_row = [&](std::uint64_t padded_row) {  // a row of the padded window as an input row
        return std::min(r.height, padded_row > above ? padded_row - above : 0);
    };
    r.a_end = clamp_row(split_a == 0 ? 0 : (split_a - 1) * stride + kernel_height);
    r.b_begin = clamp_row(split_a * stride);
    return r;
}

GroupedShare PlanLayer::grouped_share(const LayerDims& d) const {
    const auto in_per_group = static_cast<std::uint64_t>(layer.in_channels) / groups;
    const auto out_per_group = static_cast<std::uint64_t>(layer.filters) / groups;
    GroupedShare s;
    s.in_per_group = std::max<std::uint64_t>(1, std::min(in_per_group, d.in_channels));
    s.out_per_group = std::max<std::uint64_t>(1, std::min(out_per_group, d.out_channels));
    // The share's weights at the layer's density 1 / groups, in whole groups of the reduced shape.
    const std::uint64_t weights = d.in_channels * d.out_channels;
    const std::uint64_t per_group = groups * s.in_per_group * s.out_per_group;
    s.groups = std::max<std::uint64_t>(1, (weights + per_group - 1) / per_group);
    return s;
}

const std::vector<workload::HostedLayer>& PlanLayer::carried() const {
    static const std::vector<workload::HostedLayer> kNone;
    return vector_layers ? *vector_layers : kNone;
}

bool PlanLayer::has_backward_data() const {
    const auto& c = carried();
    return !producers.empty() || std::any_of(c.begin(), c.end(), [](const auto& h) { return h.on_input; });
}

std::pair<std::uint64_t, std::uint64_t> PlanLayer::vector_share(const LayerDims& d, bool on_input) const {
    if (on_input) return {d.in_channels * input_rows(d.out_rows), dims.in_channels * in_height};
    return {d.out_channels * d.out_rows, dims.out_channels * dims.out_rows};
}

workload::Layer PlanLayer::with_dims(const LayerDims& d) const {
    workload::Layer l = layer;
    switch (l.kind) {
    case workload::LayerKind::conv:
        if (l.groups > 1) {
            const GroupedShare share = grouped_share(d);
            l.groups = static_cast<int>(share.groups);
            l.in_channels = static_cast<int>(share.groups * share.in_per_group);
            l.filters = static_cast<int>(share.groups * share.out_per_group);
        } else {
            l.in_channels = static_cast<int>(d.in_channels);
            l.filters = static_cast<int>(d.out_channels);
        }
        if (d.out_rows < dims.out_rows) {  // a Type IV share: its padded input window
            l.in_height = static_cast<int>((d.out_rows - 1) * stride + kernel_height);
            l.in_width += 2 * l.padding;
            l.padding = 0;
        }
        break;
    case workload::LayerKind::fc:
        l.in_features = static_cast<int>(d.in_channels);
        l.out_features = static_cast<int>(d.out_channels);
        break;
    case workload::LayerKind::matmul:
    case workload::LayerKind::gemm:
        l.k = static_cast<int>(d.in_channels);
        l.n = static_cast<int>(d.out_channels);
        break;
    case workload::LayerKind::pool:
    case workload::LayerKind::batchnorm:
    case workload::LayerKind::relu:
    case workload::LayerKind::gelu:
    case workload::LayerKind::add:
    case workload::LayerKind::softmax:
    case workload::LayerKind::layernorm:
    case workload::LayerKind::concat:
    case workload::LayerKind::embedding: break;  // build_layer_graph takes no vector-unit layer
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
            p.dims.out_rows = u64(l.out_height());
            p.in_height = u64(l.in_height);
            p.in_width = u64(l.in_width);
            p.out_width = u64(l.out_width());
            p.kernel_height = u64(l.window_height());  // a dilated kernel's rows span its taps' gaps
            p.stride = u64(l.stride);
            p.padding = u64(l.padding);
            p.groups = u64(l.groups);
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
        case workload::LayerKind::gemm:  // not scaled by the batch: configs refuse it in cluster runs
            p.dims.in_channels = u64(l.k);
            p.dims.out_channels = u64(l.n);
            p.in_positions = p.out_positions = u64(l.m);
            break;
        case workload::LayerKind::pool:
        case workload::LayerKind::batchnorm:
        case workload::LayerKind::relu:
        case workload::LayerKind::gelu:
        case workload::LayerKind::add:
        case workload::LayerKind::softmax:
        case workload::LayerKind::layernorm:
        case workload::LayerKind::concat:
        case workload::LayerKind::embedding:
            throw std::invalid_argument("build_layer_graph: layer '" + l.name +
                                        "' runs on the vector unit; plan workload::without_vector_layers(workload)");
        }
        if (l.kind != workload::LayerKind::conv) {  // one row holding every position
            p.in_width = p.in_positions;
            p.out_width = p.out_positions;
        }
        if (l.inputs.empty()) {
            if (i > 0) p.producers.push_back({i - 1, EdgeKind::producer_output});
        } else {
            for (std::size_t k = 0; k < l.inputs.size(); ++k) {
                const std::string& input = l.inputs[k];
                if (input == workload::kNetworkInput) continue;
                std::size_t from = i;
                for (std::size_t j = 0; j < i; ++j)
                    if (layers[j].name == input) from = j;
                if (from == i)
                    throw std::invalid_argument("layer '" + l.name + "' reads '" + input +
                                                "', which is no earlier layer");
                const bool block = !p.producers.empty() && workload.shortcuts == workload::ShortcutConvention::accpar;
                const double share = k < l.input_shares.size() ? l.input_shares[k] : 1.0;
                p.producers.push_back({from, block ? EdgeKind::accpar_block : EdgeKind::producer_output, share});
            }
        }
        graph.layers.push_back(std::move(p));
    }
    std::vector<std::vector<workload::HostedLayer>> carried(graph.layers.size());
    for (const workload::HostedLayer& h : workload.hosted) {
        if (h.host >= graph.layers.size())
            throw std::invalid_argument("build_layer_graph: vector-unit layer '" + h.layer.name +
                                        "' is carried by no layer of the network");
        carried[h.host].push_back(h);
    }
    for (std::size_t l = 0; l < graph.layers.size(); ++l)
        if (!carried[l].empty())
            graph.layers[l].vector_layers =
                std::make_shared<const std::vector<workload::HostedLayer>>(std::move(carried[l]));
    graph.last_consumer = last_consumers(graph.layers);
    return graph;
}

std::vector<std::size_t> last_consumers(const std::vector<PlanLayer>& layers) {
    std::vector<std::size_t> last(layers.size());
    for (std::size_t i = 0; i < layers.size(); ++i) last[i] = i;
    for (std::size_t i = 0; i < layers.size(); ++i)
        for (const Edge& e : layers[i].producers) last[e.from] = std::max(last[e.from], i);
    return last;
}

LayerGraph stage_graph(const LayerGraph& graph, std::size_t first, std::size_t end, std::uint64_t batch) {
    LayerGraph g;
    for (std::size_t l = first; l < end; ++l) {
        PlanLayer p = graph.layers[l];
        p.dims.batch = batch;
        p.producers.clear();
        for (const Edge& e : graph.layers[l].producers)
            if (e.from >= first) p.producers.push_back({e.from - first, e.kind, e.share});
        g.layers.push_back(std::move(p));
    }
    g.last_consumer = last_consumers(g.layers);
    return g;
}

}  // namespace fastsim::planner
