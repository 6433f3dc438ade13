// SPDX-License-Identifier: MIT
// Speed of the stepped (bit-exact, cycle-by-cycle) array engine: wall time per PE-pass.
// Usage: fastsim_bench_array [ROWS COLS M K N MANTISSA_BITS GROUP_SIZE DATAFLOW]
//        (default 128 128 512 2048 128 8 16 ws; DATAFLOW is ws, os or is)
// Prints simulated MAC/s too: m*k*n over the wall time of sc_start().
// One SystemC elaboration per process, so this is a program, not a Google Benchmark.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <systemc>

#include "array/systolic_array.h"
#include "support/array_driver.h"

using namespace fastsim;

int sc_main(int argc, char* argv[]) {
    const auto arg = [&](int i, long fallback) { return argc > i ? std::atol(argv[i]) : fallback; };
    const fmac::ArrayGeometry geometry{static_cast<int>(arg(1, 128)), static_cast<int>(arg(2, 128)),
                                       static_cast<int>(arg(7, 16))};
    const auto m = static_cast<std::size_t>(arg(3, 512)), k = static_cast<std::size_t>(arg(4, 2048)),
               n = static_cast<std::size_t>(arg(5, 128));
    const int bits = static_cast<int>(arg(6, 8));
    const auto dataflow = parse_name<fmac::Dataflow>(argc > 8 ? argv[8] : "ws");
    if (!dataflow) {
        std::fprintf(stderr, "fastsim_bench_array: DATAFLOW must be ws, os or is\n");
        return 2;
    }

    std::mt19937_64 rng(1);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> xs(m * k), ys(k * n);
    for (auto& v : xs) v = normal(rng);
    for (auto& v : ys) v = normal(rng);
    bfp::Format f;
    f.mantissa_bits = bits;
    f.group_size = geometry.group_size;
    bfp::Quantizer q(f, bfp::Rounding::nearest);
    const fmac::ChunkPlanes x(bfp::quantize_rows(xs.data(), m, k, k, 1, q));
    const fmac::ChunkPlanes y(bfp::quantize_rows(ys.data(), n, k, 1, n, q));

    array::ArrayParams params;
    params.geometry = geometry;
    array::SystolicArray arr("array", params);
    test::ArrayDriver driver("driver");
    std::vector<float> out;
    driver.array = &arr;
    driver.job = {&x, &y, &out, false, *dataflow};

    const auto t0 = std::chrono::steady_clock::now();
    sc_core::sc_start();
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const auto& s = arr.stats();
    const double pe_cycles = double(s.busy_cycles) * geometry.rows * geometry.cols;
    std::printf(
        "array %dx%d %s g=%d, gemm %zux%zux%zu, m=%d: %llu cycles, %llu PE-passes, %.3f s, %.1f M simulated MAC/s\n",
        geometry.rows, geometry.cols, name_of(*dataflow).data(), geometry.group_size, m, k, n, bits,
        static_cast<unsigned long long>(s.busy_cycles), static_cast<unsigned long long>(s.counts.pe_passes), seconds,
        double(m) * double(k) * double(n) / seconds / 1e6);
    std::printf("%.3f ns per PE-pass, %.3f ns per PE-cycle (utilisation %.1f%%)\n",
                seconds * 1e9 / double(s.counts.pe_passes), seconds * 1e9 / pe_cycles,
                100.0 * double(s.counts.pe_passes) / pe_cycles);
    return 0;
}
