// SPDX-License-Identifier: MIT
#include "planner/footprint.h"

#include <algorithm>

#include "planner/planner.h"

namespace fastsim::planner {

std::vector<Footprint> plan_footprint(const LayerGraph& graph, const Plan& plan,
                                      const std::vector<std::size_t>& node_type, const MemoryModel& memory) {
    std::vector<Footprint> out(node_type.size());
    if (!memory.bytes) return out;
    for (const std::size_t n : plan.groups.front().nodes) {
        Footprint& f = out[n];
        const std::size_t t = node_type[n];
        for (std::size_t l = 0; l < graph.layers.size(); ++l) {
            const PlanLayer& layer = graph.layers[l];
            const LayerDims& d = plan.node_dims[n][l];
            const std::uint64_t w = layer.weight_elements(d);
            f.weights += memory.bytes(t, Stored::weights, w);
            f.weight_gradients += memory.bytes(t, Stored::weight_gradients, w);
            f.optimizer_state += memory.optimizer_copies * memory.bytes(t, Stored::optimizer_state, w);
            f.stashed_activations += memory.bytes(t, Stored::activations, layer.input_elements(d));
            f.buffers = std::max(f.buffers, memory.bytes(t, Stored::activations, layer.output_elements(d)) +
                                                memory.bytes(t, Stored::gradients, layer.output_elements(d)) +
                                                memory.bytes(t, Stored::gradients, layer.input_elements(d)));
        }
    }
    return out;
}

std::vector<MemoryShortfall> memory_shortfalls(const std::vector<Footprint>& footprint,
                                               const std::vector<std::size_t>& node_type, const MemoryModel& memory) {
    std::vector<MemoryShortfall> out;
    for (std::size_t n = 0; n < footprint.size(); ++n) {
        const double capacity = memory.capacity_bytes.empty() ? 0 : memory.capacity_bytes[node_type[n]];
        if (capacity > 0 && footprint[n].total() > capacity) out.push_back({n, footprint[n].total(), capacity});
    }
    std::sort(out.begin(), out.end(), [](const MemoryShortfall& a, const MemoryShortfall& b) {
        return a.footprint_bytes - a.capacity_bytes > b.footprint_bytes - b.capacity_bytes;
    });
    return out;
}

}  // namespace fastsim::planner
