// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <iterator>

#include "common/counter_fields.h"
#include "common/enum_names.h"

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

/// Which operand a PE holds while the other streams through (docs/array.md, "Dataflows").
///   weight_stationary  PE (r, c) holds Y group (k-group r, column c); X rows stream from the
///                      left, partial sums flow down and leave the bottom row.
///   input_stationary   PE (r, c) holds X group (k-group r, X row c); Y columns stream from the
///                      left, partial sums flow down and leave the bottom row.
///   output_stationary  PE (r, c) holds output (X row r, column c); X groups stream from the
///                      left and Y groups from the top, k-group by k-group, and the finished
///                      outputs drain down and out, one array row per cycle.
enum class Dataflow : std::uint8_t { weight_stationary, output_stationary, input_stationary };

/// Config and report names: ws, os, is (as SCALE-Sim spells them).
const EnumNames<Dataflow, 3>& enum_names(Dataflow);

/// fMAC passes for one group product: ceil(m_x / 2) * ceil(m_y / 2) 2-bit chunk pairs.
inline int passes_per_group(int mantissa_bits_x, int mantissa_bits_y) {
    return ((mantissa_bits_x + 1) / 2) * ((mantissa_bits_y + 1) / 2);
}

/// What the array did, counted alike by the analytic formula (analytic_gemm_timing) and by the
/// stepped array (array::SystolicArray); node::PhaseCounters sums it per phase and energy
/// charges for its actions.
struct ArrayCounters {
    /// Moving the stationary operand, one array row per cycle: loading weights (ws) or inputs
    /// (is) before a fold, draining the outputs (os) after it.
    std::uint64_t stationary_cycles = 0;
    std::uint64_t folds = 0;
    std::uint64_t group_products = 0;  ///< m * groups(k) * n: fMAC group operations
    std::uint64_t pe_passes = 0;       ///< group_products * P: chunk passes actually done

    /// The counts of a block-diagonal GEMM of `blocks` equal blocks with only its diagonal blocks'
    /// group products and PE passes (1 / blocks of them): a PE holding a zero block does not fire.
    [[nodiscard]] ArrayCounters diagonal_blocks(std::uint64_t blocks) const {
        ArrayCounters c = *this;
        c.group_products /= blocks;
        c.pe_passes /= blocks;
        return c;
    }
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
    {&ArrayCounters::stationary_cycles,
     {"stationary_cycles", "stationary load/drain cycles", CounterKind::work, CounterShow::hidden}},
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

/// How a dataflow lays one GEMM (m x k x n, `groups` = ceil(k / g)) on the array: the
/// dimension spread over the array's rows, the one over its columns, and the one streamed.
///   ws: rows = groups, cols = n, stream = m      is: rows = groups, cols = m, stream = n
///   os: rows = m,      cols = n, stream = groups
struct FoldMapping {
    std::uint64_t row_dim = 0, col_dim = 0, stream = 0;
    std::uint64_t row_folds = 0, col_folds = 0;  ///< ceil(row_dim / R), ceil(col_dim / C)
};
FoldMapping fold_mapping(const GemmShape& shape, const ArrayGeometry& array, Dataflow dataflow);

/// How often a GEMM's operands pass between the array and the SRAM (the node charges SRAM
/// bits from these): every fold reads its stationary slice once and streams the other
/// operand's slice once; partial sums leave the array once per fold that covers k (ws, is) or
/// once per output (os, whose PEs reduce all of k in place).
struct OperandPasses {
    std::uint64_t x_reads = 0;      ///< times all of X is read
    std::uint64_t y_reads = 0;      ///< times all of Y is read
    std::uint64_t psum_writes = 0;  ///< times all m x n partial sums are written
};

/// Cycles and work of one GEMM, by the analytic formula of docs/array.md. With the dataflow's
/// FoldMapping, every fold f (r_f <= R array rows by c_f <= C columns) takes
///   cycles_f = r_f                              stationary load (ws, is) or drain (os)
///            + P * (stream + r_f + c_f - 2)     fill + stream + drain, each hop P cycles
/// where P = passes_per_group. Folds run back to back, column folds outer, row folds inner.
struct GemmTiming {
    std::uint64_t cycles = 0;
    std::uint64_t stream_cycles = 0;  ///< cycles - counts.stationary_cycles
    std::uint64_t macs = 0;           ///< m * k * n useful multiply-accumulates
    ArrayCounters counts;
    OperandPasses passes_of_operands;
    int passes = 0;  ///< P
};

GemmTiming analytic_gemm_timing(const GemmShape& shape, const ArrayGeometry& array, int mantissa_bits_x,
                                int mantissa_bits_y, Dataflow dataflow = Dataflow::weight_stationary);

}  // namespace fastsim::fmac
