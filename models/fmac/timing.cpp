// SPDX-License-Identifier: MIT
#include "fmac/timing.h"

#include <algorithm>

#include "common/checked.h"

namespace fastsim::fmac {

const EnumNames<Dataflow, 3>& enum_names(Dataflow) {
    static constexpr EnumNames<Dataflow, 3> kNames{{
        {"ws", Dataflow::weight_stationary},
        {"os", Dataflow::output_stationary},
        {"is", Dataflow::input_stationary},
    }};
    return kNames;
}

FoldMapping fold_mapping(const GemmShape& shape, const ArrayGeometry& array, Dataflow dataflow) {
    const auto g = static_cast<std::uint64_t>(array.group_size);
    const std::uint64_t groups = ceil_div(shape.k, g);
    FoldMapping f;
    switch (dataflow) {
    case Dataflow::weight_stationary: f = {groups, shape.n, shape.m}; break;
    case Dataflow::input_stationary: f = {groups, shape.m, shape.n}; break;
    case Dataflow::output_stationary: f = {shape.m, shape.n, groups}; break;
    }
    const auto rows = static_cast<std::uint64_t>(array.rows);
    const auto cols = static_cast<std::uint64_t>(array.cols);
    f.row_folds = ceil_div(f.row_dim, rows);
    f.col_folds = ceil_div(f.col_dim, cols);
    return f;
}

GemmTiming analytic_gemm_timing(const GemmShape& shape, const ArrayGeometry& array, int mantissa_bits_x,
                                int mantissa_bits_y, Dataflow dataflow) {
    GemmTiming t;
    t.passes = passes_per_group(mantissa_bits_x, mantissa_bits_y);
    const FoldMapping f = fold_mapping(shape, array, dataflow);
    if (f.row_dim == 0 || f.col_dim == 0 || f.stream == 0) return t;
    const auto p = static_cast<std::uint64_t>(t.passes);
    // The sum over folds in closed form: fold (i, j) uses r_i array rows and c_j columns, with
    // sum_i r_i = row_dim and sum_j c_j = col_dim, so
    //   sum r_f over all folds = col_folds * row_dim,   sum c_f = row_folds * col_dim,
    //   stream = P * (folds * stream + col_folds * row_dim + row_folds * col_dim - 2 * folds).
    constexpr const char* kCycles = "array cycles of a tile";
    ArrayCounters& counts = t.counts;
    counts.folds = checked_mul(f.row_folds, f.col_folds, "array folds");
    counts.stationary_cycles = checked_mul(f.col_folds, f.row_dim, kCycles);
    const std::uint64_t hops =
        checked_add(checked_add(checked_mul(counts.folds, f.stream, kCycles), counts.stationary_cycles, kCycles),
                    checked_mul(f.row_folds, f.col_dim, kCycles), kCycles) -
        2 * counts.folds;  // every fold has r + c >= 2
    t.stream_cycles = checked_mul(p, hops, kCycles);
    t.cycles = checked_add(counts.stationary_cycles, t.stream_cycles, kCycles);
    const std::uint64_t groups = ceil_div(shape.k, static_cast<std::uint64_t>(array.group_size));
    counts.group_products = checked_mul(checked_mul(shape.m, groups, "group products"), shape.n, "group products");
    counts.pe_passes = checked_mul(counts.group_products, p, "PE passes");
    t.macs = checked_mul(checked_mul(shape.m, shape.k, "MACs"), shape.n, "MACs");
    // Each column fold streams the whole of its streamed operand past the stationary one.
    switch (dataflow) {
    case Dataflow::weight_stationary: t.passes_of_operands = {f.col_folds, 1, f.row_folds}; break;
    case Dataflow::input_stationary: t.passes_of_operands = {1, f.col_folds, f.row_folds}; break;
    case Dataflow::output_stationary: t.passes_of_operands = {f.col_folds, f.row_folds, 1}; break;
    }
    return t;
}

}  // namespace fastsim::fmac
