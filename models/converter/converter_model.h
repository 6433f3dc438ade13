// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <iterator>

#include "bfp/format.h"
#include "common/checked.h"

namespace fastsim::converter {

/// The FAST BFP converter (docs/converter.md): per group, a max-exponent comparator tree
/// (ceil(log2 g) levels), exponent subtractors, alignment shifters, LFSR noise adders
/// (stochastic rounding) and truncation, pipelined.
struct ConverterParams {
    int group_size = 16;               ///< g
    int lanes = 16;                    ///< values accepted per cycle (default g: a group per cycle)
    int pipeline_latency_cycles = 7;   ///< fill latency (default ceil(log2 g) + 3)

    /// The defaults derived from g: lanes = g, latency = ceil(log2 g) comparator levels + 1
    /// subtract + 1 shift + 1 noise-add/truncate.
    static ConverterParams derived_from(int group_size);
};

/// Work and time of one conversion job (a tensor of `values` fp32 values into BFP).
struct ConversionCost {
    std::uint64_t cycles = 0;             ///< pipeline latency + issue cycles
    std::uint64_t groups = 0;
    std::uint64_t comparator_ops = 0;     ///< (g - 1) per group
    std::uint64_t subtractor_ops = 0;     ///< one per element: E - e_i, the alignment distance
    std::uint64_t shifter_ops = 0;        ///< one per element
    std::uint64_t noise_adds = 0;         ///< one per element, stochastic rounding only
    std::uint64_t lfsr_steps = 0;         ///< noise_bits per element, stochastic rounding only

    /// Two jobs run back to back on one converter: every count adds, cycles included.
    /// Two jobs run back to back on one converter: every count adds, cycles included; SizeOverflow
    /// if a count leaves 64 bits.
    ConversionCost& operator+=(const ConversionCost& o);
    friend bool operator==(const ConversionCost& a, const ConversionCost& b);
};

/// Every counter of ConversionCost: the one list that +=, == and PhaseCounters::repeated walk.
inline constexpr std::uint64_t ConversionCost::*kConversionCostFields[] = {
    &ConversionCost::cycles,         &ConversionCost::groups,      &ConversionCost::comparator_ops,
    &ConversionCost::subtractor_ops, &ConversionCost::shifter_ops, &ConversionCost::noise_adds,
    &ConversionCost::lfsr_steps,
};
static_assert(sizeof(ConversionCost) == std::size(kConversionCostFields) * sizeof(std::uint64_t),
              "every ConversionCost member is in kConversionCostFields");

inline ConversionCost& ConversionCost::operator+=(const ConversionCost& o) {
    for (const auto field : kConversionCostFields) checked_accumulate(this->*field, o.*field, "converter counts");
    return *this;
}

inline bool operator==(const ConversionCost& a, const ConversionCost& b) {
    for (const auto field : kConversionCostFields)
        if (a.*field != b.*field) return false;
    return true;
}

/// Cost of converting `values` values (zero-padded to whole groups) with `rounding`:
/// cycles = latency + ceil(groups * g / lanes); a job of 0 values costs nothing.
/// Throws std::invalid_argument for group_size or lanes < 1 or a negative latency.
ConversionCost conversion_cost(const ConverterParams& params, std::uint64_t values, bfp::Rounding rounding,
                               int noise_bits);

}  // namespace fastsim::converter
