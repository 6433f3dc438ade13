// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <iterator>

#include "common/counter_fields.h"

namespace fastsim::fmac {

/// Shape of one GEMM on the array: X (m x k) streams in, Y (k x n) is stationary, and the
/// reduction dimension k is grouped in BFP groups of g.
struct GemmShape {
    std::uint64_t m = 0;  ///< rows of X streamed through the array (batch x spatial)
    std::uint64_t k = 0;  ///< reduction length, in elements
    std::uint64_t n = 0;  ///< output columns
};

/// The array's geometry: rows hold k-groups, columns hold output columns.
struct ArrayGeometry {
    int rows = 32;        ///< R: k-groups resident per fold
    int cols = 32;        ///< C: output columns resident per fold
    int group_size = 16;  ///< g: elements per BFP group, one group per fMAC
};

/// fMAC passes for one group product: ceil(m_x / 2) * ceil(m_y / 2) 2-bit chunk pairs.
inline int passes_per_group(int mantissa_bits_x, int mantissa_bits_y) {
    return ((mantissa_bits_x + 1) / 2) * ((mantissa_bits_y + 1) / 2);
}

/// What the array did, counted alike by the analytic formula (analytic_gemm_timing) and by the
/// stepped array (array::SystolicArray); node::PhaseCounters sums it per phase and energy
/// charges for its actions.
struct ArrayCounters {
    std::uint64_t weight_load_cycles = 0;  ///< loading stationary groups, one array row per cycle
    std::uint64_t folds = 0;
    std::uint64_t group_products = 0;      ///< m * groups(k) * n: fMAC group operations
    std::uint64_t pe_passes = 0;           ///< group_products * P: chunk passes actually done

    /// Share of the PE-cycles of `cycles` wall cycles on `array` that did a chunk pass: pe_passes /
    /// (cycles x R x C), 0 for no cycles.
    [[nodiscard]] double utilisation(std::uint64_t cycles, const ArrayGeometry& array) const {
        const double pe_cycles = static_cast<double>(cycles) * array.rows * array.cols;
        return pe_cycles > 0 ? static_cast<double>(pe_passes) / pe_cycles : 0.0;
    }
    /// Every count adds; SizeOverflow if one leaves 64 bits.
    ArrayCounters& operator+=(const ArrayCounters& o);
    /// The counts between an earlier reading `b` and a later one `a` of the same array.
    friend ArrayCounters operator-(ArrayCounters a, const ArrayCounters& b);
    friend bool operator==(const ArrayCounters& a, const ArrayCounters& b);
};

/// Every counter of ArrayCounters, in report order (common/counter_fields.h): the one list that
/// +=, -, == and node::PhaseCounters walk.
inline constexpr CounterField<ArrayCounters> kArrayCounterFields[] = {
    {&ArrayCounters::weight_load_cycles, {"weight_load_cycles", "weight-load cycles", CounterKind::work, CounterShow::hidden}},
    {&ArrayCounters::folds, {"folds", "folds", CounterKind::work, CounterShow::hidden}},
    {&ArrayCounters::group_products, {"group_products", "group products", CounterKind::action, CounterShow::hidden}},
    {&ArrayCounters::pe_passes, {"pe_passes", "PE passes", CounterKind::action, CounterShow::detail}},
};
static_assert(sizeof(ArrayCounters) == std::size(kArrayCounterFields) * sizeof(std::uint64_t),
              "every ArrayCounters member is in kArrayCounterFields");

inline ArrayCounters& ArrayCounters::operator+=(const ArrayCounters& o) {
    add_counters(*this, o, kArrayCounterFields, "array counters");
    return *this;
}

inline ArrayCounters operator-(ArrayCounters a, const ArrayCounters& b) {
    subtract_counters(a, b, kArrayCounterFields);
    return a;
}

inline bool operator==(const ArrayCounters& a, const ArrayCounters& b) {
    return equal_counters(a, b, kArrayCounterFields);
}

/// Cycles and work of one GEMM, by the analytic formula of docs/array.md:
/// for every fold f (k-groups r_f <= R by columns c_f <= C),
///   cycles_f = r_f                              weight load, one array row per cycle
///            + P * (m + r_f + c_f - 2)          fill + stream + drain, each hop P cycles
/// where P = passes_per_group. Folds run back to back, n-fold outer, k-fold inner (no overlap).
struct GemmTiming {
    std::uint64_t cycles = 0;
    std::uint64_t stream_cycles = 0;   ///< cycles - counts.weight_load_cycles
    std::uint64_t macs = 0;            ///< m * k * n useful multiply-accumulates
    ArrayCounters counts;
    int passes = 0;                    ///< P
};

GemmTiming analytic_gemm_timing(const GemmShape& shape, const ArrayGeometry& array, int mantissa_bits_x,
                                int mantissa_bits_y);

}  // namespace fastsim::fmac
