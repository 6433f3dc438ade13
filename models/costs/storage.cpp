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

std::vector<planner::NodeFormat> node_formats(const std::vector<NodeType>& types,
                                              const std::vector<std::size_t>& node_type) {
    std::vector<planner::NodeFormat> out;
    out.reserve(node_type.size());
    for (const std::size_t t : node_type) {
        const NodeType& type = types.at(t);
        const auto hz = static_cast<double>(type.node.clock_hz);
        out.push_back({{type.precision.activations, type.precision.gradients},
                       1 / (static_cast<double>(type.node.converter.lanes) * type.arrays * hz),
                       type.node.converter.pipeline_latency_cycles / hz});
    }
    return out;
}

void set_boundary_formats(planner::ExchangeCost& x,
                          const std::shared_ptr<const std::vector<planner::NodeFormat>>& nodes, const BfpStorage& bfp,
                          bool comm_only, const std::vector<std::size_t>& side_a,
                          const std::vector<std::size_t>& side_b) {
    const auto widest = [&](const std::vector<std::size_t>& side, std::size_t k) {
        int m = 0;
        for (const std::size_t n : side) m = std::max(m, (*nodes)[n].mantissa_bits[k]);
        return m;
    };
    const auto from = [&](const std::vector<std::size_t>& senders, const std::vector<std::size_t>& receivers,
                          std::size_t k) {
        planner::BoundaryFormat f;
        f.tensor = k;
        if (comm_only) {  // AccPar's accounting: volume only
            f.wire_bytes = 2;
            return f;
        }
        f.wire_bits = widest(senders, k);
        const auto width = memory::bfp_bits(1, bfp.group_size, f.wire_bits, bfp.exponent_bits);
        f.wire_bytes = static_cast<double>(width.exponent + width.mantissa) / bfp.group_size / 8;
        // The table only where some receiver converts, so that the others skip the check.
        if (std::any_of(receivers.begin(), receivers.end(),
                        [&](std::size_t n) { return (*nodes)[n].mantissa_bits[k] != f.wire_bits; }))
            f.nodes = nodes;
        return f;
    };
    for (std::size_t k = 0; k < 2; ++k) {
        x.into_a[k] = from(side_b, side_a, k);
        x.into_b[k] = from(side_a, side_b, k);
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
