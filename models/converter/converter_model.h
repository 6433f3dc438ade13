// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <iterator>

#include "bfp/format.h"
#include "common/checked.h"
#include "common/counter_fields.h"

namespace fastsim::converter {

/// The FAST BFP converter (docs/converter.md): per group, a max-exponent comparator tree
/// (ceil(log2 g) levels), exponent subtractors, alignment shifters, LFSR noise adders
/// (stochastic rounding) and truncation, pipelined.
struct ConverterParams {
    int group_size = 16;              ///< g
    int lanes = 16;                   ///< values accepted per cycle (default g: a group per cycle)
    int pipeline_latency_cycles = 7;  ///< fill latency (default ceil(log2 g) + 3)

    /// The defaults derived from g: lanes = g, latency = ceil(log2 g) comparator levels + 1
    /// subtract + 1 shift + 1 noise-add/truncate.
    static ConverterParams derived_from(int group_size);
    /// derived_from(g) with lanes_to_feed(g, array_cols) lanes: a node's default converter.
    static ConverterParams feeding(int group_size, int array_cols);
};

/// Lanes enough to keep up with an array of `array_cols` columns at its peak output rate
/// (docs/converter.md, "Lanes"): at 2-bit mantissas (one pass a group product) a fold emits up
/// to array_cols values a cycle, each converted twice (one per grouping), so 2 x array_cols,
/// rounded up to whole groups of `group_size`. Both arguments >= 1.
[[nodiscard]] int lanes_to_feed(int group_size, int array_cols);

/// Work and time of one conversion job (a tensor of `values` fp32 values into BFP).
struct ConversionCost {
    std::uint64_t cycles = 0;  ///< pipeline latency + issue cycles
    std::uint64_t groups = 0;
    std::uint64_t comparator_ops = 0;  ///< (g - 1) per group
    std::uint64_t subtractor_ops = 0;  ///< one per element: E - e_i, the alignment distance
    std::uint64_t shifter_ops = 0;     ///< one per element
    std::uint64_t noise_adds = 0;      ///< one per element, stochastic rounding only
    std::uint64_t lfsr_steps = 0;      ///< noise_bits per element, stochastic rounding only

    /// Two jobs run back to back on one converter: every count adds, cycles included; SizeOverflow
    /// if a count leaves 64 bits.
    ConversionCost& operator+=(const ConversionCost& o);
    friend bool operator==(const ConversionCost& a, const ConversionCost& b);
};

/// Every counter of ConversionCost, in report order (common/counter_fields.h): the one list that
/// +=, == and node::PhaseCounters walk.
inline constexpr CounterField<ConversionCost> kConversionCostFields[] = {
    {&ConversionCost::cycles, {"converter_cycles", "converter cycles", CounterKind::work, CounterShow::detail}},
    {&ConversionCost::groups, {"converter_groups", "converter groups", CounterKind::work, CounterShow::hidden}},
    {&ConversionCost::comparator_ops, {"comparator_ops", "comparator ops", CounterKind::action, CounterShow::hidden}},
    {&ConversionCost::subtractor_ops, {"subtractor_ops", "subtractor ops", CounterKind::action, CounterShow::hidden}},
    {&ConversionCost::shifter_ops, {"shifter_ops", "shifter ops", CounterKind::action, CounterShow::hidden}},
    {&ConversionCost::noise_adds, {"noise_adds", "noise adds", CounterKind::action, CounterShow::hidden}},
    {&ConversionCost::lfsr_steps, {"lfsr_steps", "LFSR steps", CounterKind::action, CounterShow::hidden}},
};
static_assert(sizeof(ConversionCost) == std::size(kConversionCostFields) * sizeof(std::uint64_t),
              "every ConversionCost member is in kConversionCostFields");

inline ConversionCost& ConversionCost::operator+=(const ConversionCost& o) {
    add_counters(*this, o, kConversionCostFields, "converter counts");
    return *this;
}

inline bool operator==(const ConversionCost& a, const ConversionCost& b) {
    return equal_counters(a, b, kConversionCostFields);
}

/// Cost of converting `values` values (zero-padded to whole groups) with `rounding`:
/// cycles = latency + ceil(groups * g / lanes); a job of 0 values costs nothing.
/// Throws std::invalid_argument for group_size or lanes < 1 or a negative latency.
ConversionCost conversion_cost(const ConverterParams& params, std::uint64_t values, bfp::Rounding rounding,
                               int noise_bits);

}  // namespace fastsim::converter
