// SPDX-License-Identifier: MIT
// Throughput of the BFP reference library on one core. Run: scripts/bench.sh
#include <benchmark/benchmark.h>

#include <random>
#include <vector>

#include "bfp/dot.h"
#include "bfp/quantize.h"

using namespace fastsim::bfp;

namespace {

std::vector<float> normal_values(std::size_t n, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> v(n);
    for (auto& x : v) x = normal(rng);
    return v;
}

void quantize_throughput(benchmark::State& state, Rounding rounding) {
    Format f;
    f.mantissa_bits = static_cast<int>(state.range(0));
    Quantizer q(f, rounding);
    const auto x = normal_values(1 << 20, 1);
    for (auto _ : state) {
        BfpTensor t = q.quantize(x.data(), x.size());
        benchmark::DoNotOptimize(t.magnitudes.data());
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * x.size()));
    state.counters["values/s"] =
        benchmark::Counter(static_cast<double>(state.iterations() * x.size()), benchmark::Counter::kIsRate);
}

void BM_quantize_nearest(benchmark::State& state) { quantize_throughput(state, Rounding::nearest); }
void BM_quantize_stochastic(benchmark::State& state) { quantize_throughput(state, Rounding::stochastic); }

/// quantize_dequantize: the training fast path's conversion (float in, the BFP grid's floats out).
void quantize_dequantize_throughput(benchmark::State& state, Rounding rounding) {
    Format f;
    f.mantissa_bits = static_cast<int>(state.range(0));
    Quantizer q(f, rounding);
    const auto x = normal_values(1 << 20, 1);
    std::vector<float> out(x.size());
    for (auto _ : state) {
        q.quantize_dequantize(x.data(), x.size(), out.data());
        benchmark::DoNotOptimize(out.data());
    }
    state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * x.size()));
    state.counters["values/s"] =
        benchmark::Counter(static_cast<double>(state.iterations() * x.size()), benchmark::Counter::kIsRate);
}

void BM_quantize_dequantize_nearest(benchmark::State& state) {
    quantize_dequantize_throughput(state, Rounding::nearest);
}
void BM_quantize_dequantize_stochastic(benchmark::State& state) {
    quantize_dequantize_throughput(state, Rounding::stochastic);
}

void BM_gemm(benchmark::State& state) {
    const auto n = static_cast<std::size_t>(state.range(0));
    Format f;
    f.mantissa_bits = static_cast<int>(state.range(1));
    Quantizer qa(f, Rounding::nearest), qb(f, Rounding::nearest);
    const auto a = normal_values(n * n, 2), b = normal_values(n * n, 3);
    const BfpMatrix ma = quantize_rows(a.data(), n, n, n, 1, qa);
    const BfpMatrix mb = quantize_rows(b.data(), n, n, 1, n, qb);
    for (auto _ : state) {
        auto c = gemm(ma, mb);
        benchmark::DoNotOptimize(c.data());
    }
    state.counters["MAC/s"] =
        benchmark::Counter(static_cast<double>(state.iterations() * n * n * n), benchmark::Counter::kIsRate);
}

}  // namespace

BENCHMARK(BM_quantize_nearest)->Arg(4)->Arg(8)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_quantize_stochastic)->Arg(4)->Arg(8)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_quantize_dequantize_nearest)->Arg(8)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_quantize_dequantize_stochastic)->Arg(8)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_gemm)->Args({256, 4})->Args({256, 8})->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
