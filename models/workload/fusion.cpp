// SPDX-License-Identifier: MIT
#include "workload/fusion.h"

#include <algorithm>

namespace fastsim::workload {
namespace {

/// The producers of layer `i`: its inputs, or the layer before it (the network input for the first).
std::vector<std::string> producers(const Workload& w, std::size_t i) {
    if (!w.layers[i].inputs.empty()) return w.layers[i].inputs;
    return {i == 0 ? std::string(kNetworkInput) : w.layers[i - 1].name};
}

bool elementwise(LayerKind kind) {
    return kind == LayerKind::relu || kind == LayerKind::gelu || kind == LayerKind::add;
}

}  // namespace

std::vector<LayerFusion> plan_fusion(const Workload& w) {
    std::vector<LayerFusion> fusion(w.layers.size());
    for (std::size_t i = 1; i < w.layers.size(); ++i) {
        const Layer& layer = w.layers[i];
        const Layer& previous = w.layers[i - 1];
        const std::vector<std::string> inputs = producers(w, i);
        if (!elementwise(layer.kind) || std::find(inputs.begin(), inputs.end(), previous.name) == inputs.end())
            continue;
        fusion[i].streams_input = true;
        std::size_t readers = 0;  // every read of the previous layer's output, this one's included
        for (std::size_t j = i; j < w.layers.size(); ++j) {
            const std::vector<std::string> p = producers(w, j);
            readers += static_cast<std::size_t>(std::count(p.begin(), p.end(), previous.name));
        }
        fusion[i - 1].output_streamed = readers == 1 && layer.kind != LayerKind::gelu &&
                                        previous.kind != LayerKind::relu && previous.kind != LayerKind::softmax;
    }
    return fusion;
}

}  // namespace fastsim::workload
