// SPDX-License-Identifier: MIT
#include "learning/gemm.h"

#include <cblas.h>
#include <dlfcn.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

#include "bfp/dot.h"
#include "common/errors.h"

namespace fastsim::learning {
namespace {

/// OpenBLAS, loaded at the first GEMM rather than with the program: its start-up (16 k
/// relocations, a thread pool that spins for a while) would otherwise be paid by every fastsim
/// process, most of which never train. FASTSIM_OPENBLAS is the library the build compiled
/// against (its pkg-config libdir).
struct Blas {
    decltype(&cblas_sgemm) sgemm;
    decltype(&openblas_set_num_threads) set_num_threads;
};

const Blas& blas() {
    static const Blas loaded = [] {
        std::string tried;
        void* library = nullptr;
        const char* path = nullptr;
        for (const char* candidate : {FASTSIM_OPENBLAS, "libopenblas.so.0"}) {
            if ((library = dlopen(candidate, RTLD_NOW | RTLD_LOCAL)) != nullptr) {
                path = candidate;
                break;
            }
            tried += std::string(tried.empty() ? "" : "; ") + dlerror();
        }
        if (library == nullptr)
            throw UserError("cannot load OpenBLAS (" + tried + "): install it with bash scripts/setup.sh");
        const auto symbol = [&](const char* name) {
            void* address = dlsym(library, name);
            if (address == nullptr) throw UserError(std::string("the OpenBLAS library ") + path + " has no " + name);
            return address;
        };
        return Blas{reinterpret_cast<decltype(&cblas_sgemm)>(symbol("cblas_sgemm")),
                    reinterpret_cast<decltype(&openblas_set_num_threads)>(symbol("openblas_set_num_threads"))};
    }();
    return loaded;
}

/// Rows of at most this many floats are built at a time (a block that stays in L1/L2).
constexpr std::size_t kBlockFloats = 4096;

/// Room for `count` floats in `scratch`, which only grows: the GEMMs of a network share it,
/// and regrowing a vector that shrank would zero-fill it again at every layer.
float* room(std::vector<float>& scratch, std::size_t count) {
    if (scratch.size() < count) scratch.resize(count);
    return scratch.data();
}

/// `source` (rows x k) quantised row by row by `q` (none: copied), dequantised, into `out`
/// (rows x k floats).
void quantize_rows_dequantized(const RowSource& source, std::size_t k, bfp::Quantizer* q, float* out,
                               std::vector<float>& block) {
    if (source.matrix != nullptr) {
        if (q == nullptr) return (void)std::copy_n(source.matrix, source.rows * k, out);
        return q->quantize_dequantize_rows(source.matrix, source.rows, k, out);
    }
    if (q == nullptr) return source.fill(0, source.rows, out);
    const std::size_t block_rows = std::max<std::size_t>(1, kBlockFloats / std::max<std::size_t>(1, k));
    float* rows = room(block, block_rows * k);
    for (std::size_t first = 0; first < source.rows; first += block_rows) {
        const std::size_t count = std::min(block_rows, source.rows - first);
        source.fill(first, count, rows);
        q->quantize_dequantize_rows(rows, count, k, out + first * k);
    }
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
    blas().sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, static_cast<blasint>(m), static_cast<blasint>(n),
                 static_cast<blasint>(k), 1.0f, a, static_cast<blasint>(k), bt, static_cast<blasint>(k), 0.0f, c,
                 static_cast<blasint>(n));
}

void sgemm_ab(const float* a, const float* b, std::size_t m, std::size_t n, std::size_t k, float* c) {
    if (m == 0 || n == 0) return;
    if (k == 0) return std::fill(c, c + m * n, 0.0f);
    blas().sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<blasint>(m), static_cast<blasint>(n),
                 static_cast<blasint>(k), 1.0f, a, static_cast<blasint>(k), b, static_cast<blasint>(n), 0.0f, c,
                 static_cast<blasint>(n));
}

void sgemm_atb(const float* at, const float* b, std::size_t m, std::size_t n, std::size_t k, float* c) {
    if (m == 0 || n == 0) return;
    if (k == 0) return std::fill(c, c + m * n, 0.0f);
    blas().sgemm(CblasRowMajor, CblasTrans, CblasNoTrans, static_cast<blasint>(m), static_cast<blasint>(n),
                 static_cast<blasint>(k), 1.0f, at, static_cast<blasint>(m), b, static_cast<blasint>(n), 0.0f, c,
                 static_cast<blasint>(n));
}

void sgemm_atbt(const float* at, const float* bt, std::size_t m, std::size_t n, std::size_t k, float* c) {
    if (m == 0 || n == 0) return;
    if (k == 0) return std::fill(c, c + m * n, 0.0f);
    blas().sgemm(CblasRowMajor, CblasTrans, CblasTrans, static_cast<blasint>(m), static_cast<blasint>(n),
                 static_cast<blasint>(k), 1.0f, at, static_cast<blasint>(m), bt, static_cast<blasint>(k), 0.0f, c,
                 static_cast<blasint>(n));
}

void gemm_abt(GemmPath path, const float* a, const float* bt, std::size_t m, std::size_t n, std::size_t k,
              bfp::Quantizer* qa, bfp::Quantizer* qb, float* c, GemmScratch& scratch) {
    gemm_abt(path, stored_rows(a, m), stored_rows(bt, n), k, qa, qb, c, scratch);
}

void GemmOperand::prepare(GemmPath path, const RowSource& source, std::size_t k, bfp::Quantizer* q) {
    m_path = path;
    m_quantized = q != nullptr;
    m_rows = source.rows;
    m_k = k;
    if (q == nullptr && source.matrix != nullptr) {
        m_values = source.matrix;  // fp32 and stored: used where it is
        return;
    }
    if (q != nullptr && path == GemmPath::exact) {
        const float* values = source.matrix;
        if (values == nullptr) {
            float* rows = room(m_storage, m_rows * k);
            source.fill(0, m_rows, rows);
            values = rows;
        }
        m_exact = bfp::quantize_rows(values, m_rows, k, k, 1, *q);
        return;
    }
    float* rows = room(m_storage, m_rows * k);
    quantize_rows_dequantized(source, k, q, rows, m_block);
    m_values = rows;
}

void gemm_abt(const GemmOperand& a, const GemmOperand& bt, float* c) {
    if (a.m_quantized != bt.m_quantized || (a.m_quantized && a.m_path != bt.m_path) || a.m_k != bt.m_k)
        throw std::invalid_argument("gemm_abt: operands prepared with different k, or not both quantised the same way");
    if (a.m_quantized && a.m_path == GemmPath::exact) {
        const std::vector<float> out = bfp::gemm(a.m_exact, bt.m_exact);
        std::copy(out.begin(), out.end(), c);
        return;
    }
    sgemm_abt(a.m_values, bt.m_values, a.m_rows, bt.m_rows, a.m_k, c);
}

void gemm_abt(GemmPath path, const RowSource& a, const RowSource& bt, std::size_t k, bfp::Quantizer* qa,
              bfp::Quantizer* qb, float* c, GemmScratch& scratch) {
    if ((qa == nullptr) != (qb == nullptr)) throw std::invalid_argument("gemm_abt: quantise both operands or neither");
    scratch.a.prepare(path, a, k, qa);
    scratch.bt.prepare(path, bt, k, qb);
    gemm_abt(scratch.a, scratch.bt, c);
}

double gemm_agreement_bound(std::size_t k, std::size_t groups, double abs_product_sum) {
    return static_cast<double>(k + groups) * std::ldexp(1.0, -24) * abs_product_sum;
}

void set_blas_threads(int threads) { blas().set_num_threads(std::max(1, threads)); }

}  // namespace fastsim::learning
