// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "bfp/dot.h"
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

/// One operand of C = A Bt^T as the multiply reads it, grouped along k: fp32 rows, or rows
/// quantised once by prepare(), so that it can meet several other operands (the slices of a
/// batch) without drawing its stochastic-rounding noise again. Its buffers are reused.
class GemmOperand {
public:
    /// Takes `source` (source.rows x k): as it is with q null, else quantised by q row by row
    /// (for `path`: dequantised on the fast path, bfp::BfpMatrix groups on the exact path).
    void prepare(GemmPath path, const RowSource& source, std::size_t k, bfp::Quantizer* q);

private:
    friend void gemm_abt(const GemmOperand& a, const GemmOperand& bt, float* c);
    GemmPath m_path = GemmPath::fast;
    bool m_quantized = false;
    std::size_t m_rows = 0, m_k = 0;
    const float* m_values = nullptr;  ///< fp32 or dequantised rows (all but the exact path)
    bfp::BfpMatrix m_exact;           ///< the exact path's quantised rows
    std::vector<float> m_storage, m_block;
};

/// C (A's rows x Bt's rows, row-major) = A Bt^T, both operands prepared with the same k, and
/// both quantised on the same path or neither.
void gemm_abt(const GemmOperand& a, const GemmOperand& bt, float* c);

/// The operands of the one-call gemm_abt below, reused from call to call.
struct GemmScratch {
    GemmOperand a, bt;
};

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
