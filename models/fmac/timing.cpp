// SPDX-License-Identifier: MIT
#include "fmac/timing.h"

#include <algorithm>

#include "common/checked.h"

namespace fastsim::fmac {

GemmTiming analytic_gemm_timing(const GemmShape& shape, const ArrayGeometry& array, int mantissa_bits_x,
                                int mantissa_bits_y) {
    GemmTiming t;
    t.passes = passes_per_group(mantissa_bits_x, mantissa_bits_y);
    const auto g = static_cast<std::uint64_t>(array.group_size);
    const auto rows = static_cast<std::uint64_t>(array.rows);
    const auto cols = static_cast<std::uint64_t>(array.cols);
    const std::uint64_t groups = (shape.k + g - 1) / g;
    if (shape.m == 0 || groups == 0 || shape.n == 0) return t;
    const std::uint64_t k_folds = (groups + rows - 1) / rows;
    const std::uint64_t n_folds = (shape.n + cols - 1) / cols;
    const auto p = static_cast<std::uint64_t>(t.passes);
    // The sum over folds in closed form: fold (kf, nf) holds r_kf k-groups and c_nf columns,
    // with sum_kf r_kf = groups and sum_nf c_nf = n, so
    //   sum r_kf over all folds = n_folds * groups,   sum c_nf = k_folds * n,
    //   stream = P * (folds * m + n_folds * groups + k_folds * n - 2 * folds).
    constexpr const char* kCycles = "array cycles of a tile";
    ArrayCounters& counts = t.counts;
    counts.folds = checked_mul(k_folds, n_folds, "array folds");
    counts.weight_load_cycles = checked_mul(n_folds, groups, kCycles);
    const std::uint64_t hops = checked_add(checked_add(checked_mul(counts.folds, shape.m, kCycles), counts.weight_load_cycles, kCycles),
                                           checked_mul(k_folds, shape.n, kCycles), kCycles) -
                               2 * counts.folds;  // every fold has r + c >= 2
    t.stream_cycles = checked_mul(p, hops, kCycles);
    t.cycles = checked_add(counts.weight_load_cycles, t.stream_cycles, kCycles);
    counts.group_products = checked_mul(checked_mul(shape.m, groups, "group products"), shape.n, "group products");
    counts.pe_passes = checked_mul(counts.group_products, p, "PE passes");
    t.macs = checked_mul(checked_mul(shape.m, shape.k, "MACs"), shape.n, "MACs");
    return t;
}

}  // namespace fastsim::fmac
