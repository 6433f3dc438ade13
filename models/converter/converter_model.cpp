// SPDX-License-Identifier: MIT
#include "converter/converter_model.h"

#include <stdexcept>

#include "common/checked.h"

namespace fastsim::converter {

ConverterParams ConverterParams::derived_from(int group_size) {
    int levels = 0;
    while ((1 << levels) < group_size) ++levels;
    return {group_size, group_size, levels + 3};
}

int lanes_to_feed(int group_size, int array_cols) {
    if (group_size < 1 || array_cols < 1)
        throw std::invalid_argument("converter: group_size and array columns must be >= 1");
    const std::int64_t values_per_cycle = 2 * static_cast<std::int64_t>(array_cols);
    return static_cast<int>((values_per_cycle + group_size - 1) / group_size * group_size);
}

ConverterParams ConverterParams::feeding(int group_size, int array_cols) {
    ConverterParams p = derived_from(group_size);
    p.lanes = lanes_to_feed(group_size, array_cols);
    return p;
}

ConversionCost conversion_cost(const ConverterParams& p, std::uint64_t values, bfp::Rounding rounding, int noise_bits) {
    if (p.group_size < 1 || p.lanes < 1 || p.pipeline_latency_cycles < 0)
        throw std::invalid_argument("converter: group_size and lanes must be >= 1 and the latency >= 0");
    ConversionCost c;
    if (values == 0) return c;
    const auto g = static_cast<std::uint64_t>(p.group_size);
    const auto lanes = static_cast<std::uint64_t>(p.lanes);
    c.groups = values / g + (values % g != 0 ? 1 : 0);
    const std::uint64_t slots = checked_mul(c.groups, g, "converter slots");  // padded elements use lanes too
    c.cycles = checked_add(static_cast<std::uint64_t>(p.pipeline_latency_cycles),
                           slots / lanes + (slots % lanes != 0 ? 1 : 0), "converter cycles");
    c.comparator_ops = c.groups * (g - 1);  // <= slots
    c.subtractor_ops = slots;
    c.shifter_ops = slots;
    if (rounding == bfp::Rounding::stochastic) {
        c.noise_adds = slots;
        c.lfsr_steps = checked_mul(slots, static_cast<std::uint64_t>(noise_bits), "LFSR steps");
    }
    return c;
}

}  // namespace fastsim::converter
