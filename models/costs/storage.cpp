// SPDX-License-Identifier: MIT
#include "costs/storage.h"

#include <algorithm>

#include "memory/memory.h"

namespace fastsim::costs {

planner::ElementBytes element_bytes(const std::vector<NodeType>& types, const BfpStorage& bfp, bool comm_only) {
    // AccPar's code counts every element as bf16 (NUM_BYTE_BFLT = 2).
    constexpr double kAccParElementBytes = 2;
    if (comm_only) return {kAccParElementBytes, kAccParElementBytes, kAccParElementBytes, kAccParElementBytes};
    int activations = 0, gradients = 0;
    for (const NodeType& t : types) {
        activations = std::max(activations, t.precision.activations);
        gradients = std::max(gradients, t.precision.gradients);
    }
    const auto bytes = [&](int m) {
        const auto bits = memory::bfp_bits(1, bfp.group_size, m, bfp.exponent_bits);
        return static_cast<double>(bits.exponent + bits.mantissa) / bfp.group_size / 8;
    };
    const double fp32 = static_cast<double>(memory::kFp32Bits) / 8;
    return {bytes(activations), bytes(gradients), fp32, fp32};
}

void set_boundary_formats(planner::ExchangeCost& x, const std::vector<NodeType>& types,
                          const std::vector<std::size_t>& node_type, const BfpStorage& bfp, bool comm_only,
                          const std::vector<std::size_t>& side_a, const std::vector<std::size_t>& side_b) {
    // [0] F at the activations' mantissa width, [1] E at the gradients'.
    const auto bits = [&](std::size_t node, std::size_t k) {
        const node::TensorPrecision& p = types[node_type[node]].precision;
        return k == 0 ? p.activations : p.gradients;
    };
    const auto widest = [&](const std::vector<std::size_t>& side, std::size_t k) {
        int m = 0;
        for (const std::size_t n : side) m = std::max(m, bits(n, k));
        return m;
    };
    const auto into = [&](planner::BoundaryFormat& f, const std::vector<std::size_t>& receivers,
                          const std::vector<std::size_t>& senders, std::size_t k) {
        const int wire = widest(senders, k);
        const auto width = memory::bfp_bits(1, bfp.group_size, wire, bfp.exponent_bits);
        f.wire_bytes = comm_only ? 2.0 : static_cast<double>(width.exponent + width.mantissa) / bfp.group_size / 8;
        f.convert_s_per_value.assign(receivers.size(), 0.0);
        f.convert_latency_s.assign(receivers.size(), 0.0);
        if (comm_only) return;  // AccPar's accounting: volume only
        for (std::size_t i = 0; i < receivers.size(); ++i) {
            if (bits(receivers[i], k) == wire) continue;
            const NodeType& t = types[node_type[receivers[i]]];
            const auto hz = static_cast<double>(t.node.clock_hz);
            f.convert_s_per_value[i] = 1 / (static_cast<double>(t.node.converter.lanes) * t.arrays * hz);
            f.convert_latency_s[i] = t.node.converter.pipeline_latency_cycles / hz;
        }
    };
    for (std::size_t k = 0; k < 2; ++k) {
        into(x.into_a[k], side_a, side_b, k);
        into(x.into_b[k], side_b, side_a, k);
    }
}

planner::MemoryModel memory_model(const std::vector<NodeType>& types, const BfpStorage& bfp, int optimizer_copies) {
    planner::MemoryModel m;
    for (const NodeType& t : types) m.capacity_bytes.push_back(t.dram_capacity_gib * 0x1p30);
    m.optimizer_copies = optimizer_copies;
    const int g = bfp.group_size, e = bfp.exponent_bits;
    std::vector<node::TensorPrecision> precision;
    for (const NodeType& t : types) precision.push_back(t.precision);
    m.bytes = [precision, g, e](std::size_t type, planner::Stored what, std::uint64_t elements) {
        const auto stored = [&](int mantissa_bits) {
            const std::uint64_t groups =
                elements / static_cast<std::uint64_t>(g) + (elements % static_cast<std::uint64_t>(g) != 0);
            const memory::BfpBits bits = memory::bfp_bits_saturated(groups, g, mantissa_bits, e);
            return (static_cast<double>(bits.exponent) + static_cast<double>(bits.mantissa)) / 8;
        };
        const node::TensorPrecision& p = precision[type];
        switch (what) {
        case planner::Stored::weights: return stored(p.weights);
        case planner::Stored::activations: return stored(p.activations);
        case planner::Stored::gradients: return stored(p.gradients);
        case planner::Stored::weight_gradients:
        case planner::Stored::optimizer_state: return static_cast<double>(elements) * memory::kFp32Bits / 8;
        }
        return 0.0;
    };
    return m;
}

}  // namespace fastsim::costs
