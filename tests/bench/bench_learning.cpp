// SPDX-License-Identifier: MIT
// The fast path of BFP training against plain fp32 SGEMM from the same OpenBLAS, on the
// GEMM shapes one MLP training iteration runs (batch 64, 784-256-128-10), one thread:
//   build/tests/bench/fastsim_bench_learning --benchmark_counters_tabular=true
// Each BFP case quantises both operands (the stochastic-rounding one, like gradients,
// draws LFSR noise) and multiplies; the SGEMM case only multiplies. Figures: docs/performance.md.
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "learning/gemm.h"

using namespace fastsim;

namespace {

struct Shape {
    const char* name;
    std::size_t m, n, k;
};

// C (m x n) = A (m x k) * Bt^T, grouped along k, as network.cpp calls gemm_abt.
constexpr Shape kShapes[] = {
    {"fc1_forward", 64, 256, 784},  {"fc1_wgrad", 256, 784, 64}, {"fc2_forward", 64, 128, 256},
    {"fc2_backward", 64, 256, 128}, {"fc2_wgrad", 128, 256, 64},
};

struct Operands {
    std::vector<float> a, bt, c;
    explicit Operands(const Shape& s) : a(s.m * s.k), bt(s.n * s.k), c(s.m * s.n) {
        std::mt19937_64 rng(1);
        std::normal_distribution<float> normal(0.0f, 1.0f);
        for (float& v : a) v = normal(rng);
        for (float& v : bt) v = normal(rng) * 0.05f;
    }
};

void set_flops(benchmark::State& state, const Shape& s) {
    state.counters["GFLOP/s"] =
        benchmark::Counter(2.0 * static_cast<double>(s.m * s.n * s.k) * static_cast<double>(state.iterations()),
                           benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
}

void BM_sgemm(benchmark::State& state) {
    const Shape& s = kShapes[state.range(0)];
    learning::set_blas_threads(1);
    Operands o(s);
    for (auto _ : state) {
        learning::sgemm_abt(o.a.data(), o.bt.data(), s.m, s.n, s.k, o.c.data());
        benchmark::DoNotOptimize(o.c.data());
    }
    state.SetLabel(s.name);
    set_flops(state, s);
}

void BM_bfp_fast_path(benchmark::State& state) {
    const Shape& s = kShapes[state.range(0)];
    const auto rounding_a = state.range(1) ? bfp::Rounding::stochastic : bfp::Rounding::nearest;
    learning::set_blas_threads(1);
    Operands o(s);
    bfp::Format f;
    f.mantissa_bits = 4;
    bfp::Quantizer qa(f, rounding_a), qb(f, bfp::Rounding::nearest);
    learning::GemmScratch scratch;
    for (auto _ : state) {
        learning::gemm_abt(learning::GemmPath::fast, o.a.data(), o.bt.data(), s.m, s.n, s.k, &qa, &qb, o.c.data(),
                           scratch);
        benchmark::DoNotOptimize(o.c.data());
    }
    state.SetLabel(std::string(s.name) + (state.range(1) ? " A stochastic" : " nearest"));
    set_flops(state, s);
}

void shapes(benchmark::internal::Benchmark* b) {
    for (int i = 0; i < static_cast<int>(std::size(kShapes)); ++i) b->Args({i, 0});
}
void shapes_both_roundings(benchmark::internal::Benchmark* b) {
    for (int i = 0; i < static_cast<int>(std::size(kShapes)); ++i) {
        b->Args({i, 0});
        b->Args({i, 1});
    }
}

}  // namespace

BENCHMARK(BM_sgemm)->Apply(shapes);
BENCHMARK(BM_bfp_fast_path)->Apply(shapes_both_roundings);
BENCHMARK_MAIN();
