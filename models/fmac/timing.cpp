// SPDX-License-Identifier: MIT
#include "fmac/timing.h"

#include <algorithm>

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
    // Sum over folds; each is full or the last one along each dimension.
    for (std::uint64_t kf = 0; kf < k_folds; ++kf) {
        const std::uint64_t r = std::min(rows, groups - kf * rows);
        for (std::uint64_t nf = 0; nf < n_folds; ++nf) {
            const std::uint64_t c = std::min(cols, shape.n - nf * cols);
            t.weight_load_cycles += r;
            t.stream_cycles += p * (shape.m + r + c - 2);
        }
    }
    t.cycles = t.weight_load_cycles + t.stream_cycles;
    t.folds = k_folds * n_folds;
    t.group_products = shape.m * groups * shape.n;
    t.pe_passes = t.group_products * p;
    t.macs = shape.m * shape.k * shape.n;
    return t;
}

}  // namespace fastsim::fmac
