// SPDX-License-Identifier: MIT
#include "learning/gemm.h"

#include <cblas.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "bfp/dot.h"

namespace fastsim::learning {
namespace {

void quantize_rows_dequantized(const float* values, std::size_t rows, std::size_t cols, bfp::Quantizer& q,
                               std::vector<float>& out) {
    out.resize(rows * cols);
    for (std::size_t r = 0; r < rows; ++r) q.quantize_dequantize(values + r * cols, cols, out.data() + r * cols);
}

}  // namespace

const EnumNames<GemmPath, 2>& enum_names(GemmPath) {
    static constexpr EnumNames<GemmPath, 2> kNames{{{"exact", GemmPath::exact}, {"fast", GemmPath::fast}}};
    return kNames;
}

void sgemm_abt(const float* a, const float* bt, std::size_t m, std::size_t n, std::size_t k, float* c) {
    if (m == 0 || n == 0) return;
    if (k == 0) {
        std::fill(c, c + m * n, 0.0f);
        return;
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<blasint>(m), static_cast<blasint>(n),
                static_cast<blasint>(k), 1.0f, a, static_cast<blasint>(k), bt, static_cast<blasint>(k), 0.0f, c,
                static_cast<blasint>(n));
}

void sgemm_ab(const float* a, const float* b, std::size_t m, std::size_t n, std::size_t k, float* c) {
    if (m == 0 || n == 0) return;
    if (k == 0) return std::fill(c, c + m * n, 0.0f);
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<blasint>(m), static_cast<blasint>(n),
                static_cast<blasint>(k), 1.0f, a, static_cast<blasint>(k), b, static_cast<blasint>(n), 0.0f, c,
                static_cast<blasint>(n));
}

void sgemm_atb(const float* at, const float* b, std::size_t m, std::size_t n, std::size_t k, float* c) {
    if (m == 0 || n == 0) return;
    if (k == 0) return std::fill(c, c + m * n, 0.0f);
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, static_cast<blasint>(m), static_cast<blasint>(n),
                static_cast<blasint>(k), 1.0f, at, static_cast<blasint>(m), b, static_cast<blasint>(n), 0.0f, c,
                static_cast<blasint>(n));
}

void sgemm_atbt(const float* at, const float* bt, std::size_t m, std::size_t n, std::size_t k, float* c) {
    if (m == 0 || n == 0) return;
    if (k == 0) return std::fill(c, c + m * n, 0.0f);
    cblas_sgemm(CblasRowMajor, CblasTrans, CblasTrans, static_cast<blasint>(m), static_cast<blasint>(n),
                static_cast<blasint>(k), 1.0f, at, static_cast<blasint>(m), bt, static_cast<blasint>(k), 0.0f, c,
                static_cast<blasint>(n));
}

void gemm_abt(GemmPath path, const float* a, const float* bt, std::size_t m, std::size_t n, std::size_t k,
              bfp::Quantizer* qa, bfp::Quantizer* qb, float* c, GemmScratch& scratch) {
    if (qa == nullptr && qb == nullptr) return sgemm_abt(a, bt, m, n, k, c);
    if (qa == nullptr || qb == nullptr) throw std::invalid_argument("gemm_abt: quantise both operands or neither");
    if (path == GemmPath::exact) {
        const bfp::BfpMatrix qa_rows = bfp::quantize_rows(a, m, k, k, 1, *qa);
        const bfp::BfpMatrix qb_rows = bfp::quantize_rows(bt, n, k, k, 1, *qb);
        const std::vector<float> out = bfp::gemm(qa_rows, qb_rows);
        std::copy(out.begin(), out.end(), c);
        return;
    }
    quantize_rows_dequantized(a, m, k, *qa, scratch.a);
    quantize_rows_dequantized(bt, n, k, *qb, scratch.bt);
    sgemm_abt(scratch.a.data(), scratch.bt.data(), m, n, k, c);
}

double gemm_agreement_bound(std::size_t k, std::size_t groups, double abs_product_sum) {
    return static_cast<double>(k + groups) * std::ldexp(1.0, -24) * abs_product_sum;
}

void set_blas_threads(int threads) { openblas_set_num_threads(std::max(1, threads)); }

}  // namespace fastsim::learning
