// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "bfp/quantize.h"
#include "common/enum_names.h"

namespace fastsim::learning {

/// How a BFP GEMM is computed (docs/fast-training.md, "Two arithmetic paths").
enum class GemmPath : std::uint8_t {
    exact,  ///< bfp::gemm: integer group products, one fp32 rounding per group, groups summed in order
    fast    ///< the same quantised values, dequantised (exact in fp32), multiplied by OpenBLAS sgemm
};

const EnumNames<GemmPath, 2>& enum_names(GemmPath);
inline std::string_view to_string(GemmPath path) { return name_of(path); }
inline std::optional<GemmPath> parse_gemm_path(std::string_view name) { return parse_name<GemmPath>(name); }

/// Reused buffers of the fast path (dequantised operands, and one block of rows being built).
struct GemmScratch {
    std::vector<float> a, bt, block;
};

/// A GEMM operand of `rows` rows of k values each, row-major, grouped along k: either stored
/// (`matrix`) or built on demand by `fill(first, count, out)`, which writes rows first ..
/// first + count - 1 (count * k floats) to out. On the fast path a built operand is quantised
/// block by block while the block is in cache, so its unquantised matrix never exists whole;
/// the exact and fp32 paths build it whole first.
struct RowSource {
    std::size_t rows = 0;
    const float* matrix = nullptr;
    std::function<void(std::size_t first, std::size_t count, float* out)> fill;
};
inline RowSource stored_rows(const float* matrix, std::size_t rows) { return RowSource{rows, matrix, {}}; }

/// C (m x n, row-major) = A (m x k, row-major) * B, with B given as its transpose `bt`
/// (n x k, row-major), so both operands are grouped along k as the FAST array reads them.
/// A is quantised by `qa` row by row, then `bt` by `qb` (the LFSR draw order of
/// bfp::quantize_rows). With both quantisers null the operands are used as fp32 (the FP32
/// policy); otherwise both must be given. Both paths quantise identically; they differ only
/// in how the exact products are summed (see gemm_agreement_bound).
void gemm_abt(GemmPath path, const float* a, const float* bt, std::size_t m, std::size_t n, std::size_t k,
              bfp::Quantizer* qa, bfp::Quantizer* qb, float* c, GemmScratch& scratch);
/// The same with either operand built on demand: C (a.rows x bt.rows).
void gemm_abt(GemmPath path, const RowSource& a, const RowSource& bt, std::size_t k, bfp::Quantizer* qa,
              bfp::Quantizer* qb, float* c, GemmScratch& scratch);

/// Plain fp32 products through OpenBLAS (the FP32 policy and the fast path's multiply), all
/// row-major: C (m x n) = A (m x k) * Bt^T, = A (m x k) * B (k x n), = At^T * B with At k x m,
/// = At^T * Bt^T.
void sgemm_abt(const float* a, const float* bt, std::size_t m, std::size_t n, std::size_t k, float* c);
void sgemm_ab(const float* a, const float* b, std::size_t m, std::size_t n, std::size_t k, float* c);
void sgemm_atb(const float* at, const float* b, std::size_t m, std::size_t n, std::size_t k, float* c);
void sgemm_atbt(const float* at, const float* bt, std::size_t m, std::size_t n, std::size_t k, float* c);

/// Bound on |C_fast - C_exact| for one output whose quantised operands give
/// S = sum_q |a_q * b_q| over k terms in `groups` groups: both results are within
/// (k + groups) * 2^-24 * S of the exact real sum (fast: k fp32 roundings of partial sums,
/// each at most S; exact: one rounding per group product plus groups - 1 additions), so
/// they differ by at most the sum of the two. Valid while no partial sum overflows or
/// becomes subnormal.
double gemm_agreement_bound(std::size_t k, std::size_t groups, double abs_product_sum);

/// Threads OpenBLAS may use (1 = the single-core figures of docs/performance.md).
void set_blas_threads(int threads);

}  // namespace fastsim::learning
