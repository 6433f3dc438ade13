// SPDX-License-Identifier: MIT
#include "costs/compression_cost.h"

#include <cmath>

namespace fastsim::costs {

CompressionCost compression_cost(const NodeType& type, const compression::Work& work) {
    const node::NodeParams& node = type.node;
    const auto arrays = static_cast<std::uint64_t>(type.arrays);
    // The whole node's DRAM bandwidth (each array is modelled with an equal share of it).
    const double dram_bits_per_cycle = static_cast<double>(node.dram.bandwidth_bits_per_s) *
                                       static_cast<double>(arrays) / static_cast<double>(node.clock_hz);
    const double lanes = static_cast<double>(node.converter.lanes) * static_cast<double>(arrays);
    const int m = type.precision.gradients;
    const double passes = static_cast<double>((m / 2) * (m / 2));  // gradient x factor, both at the gradients' width
    const double pes =
        static_cast<double>(node.array.rows) * static_cast<double>(node.array.cols) * static_cast<double>(arrays);
    const double stream_cycles = std::max(static_cast<double>(work.dram_bytes) * 8 / dram_bits_per_cycle,
                                          static_cast<double>(work.vector_values) / lanes);
    const double array_cycles = static_cast<double>(work.macs) * passes / pes;
    const double cycles = std::ceil(stream_cycles + array_cycles);
    const energy::EnergyTable& e = type.energy;
    CompressionCost c;
    c.time =
        to_picoseconds(Cycles(static_cast<std::uint64_t>(cycles)), node.clock_hz, "picoseconds of compression work");
    c.energy_pj = static_cast<double>(work.dram_bytes) * 8 * e.dram_pj_per_bit +
                  static_cast<double>(work.vector_values) * (e.comparator_pj + e.shifter_pj) +
                  static_cast<double>(work.macs) * passes * (e.chunk_multiply_pj + e.pass_accumulate_pj);
    return c;
}

}  // namespace fastsim::costs
