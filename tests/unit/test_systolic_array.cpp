// SPDX-License-Identifier: MIT
// The stepped SystemC array against its two references: bfp::gemm (bit for bit) and the
// analytic cycle formula (exactly).
#include <catch2/catch.hpp>

#include <cstring>
#include <random>

#include "array/systolic_array.h"
#include "fmac/training_gemm.h"
#include "support/array_driver.h"
#include "support/systemc_fixture.h"

using namespace fastsim;

namespace {


struct SteppedRun {
    std::vector<float> out;
    std::uint64_t cycles;
    array::ArrayStats stats;
};

SteppedRun run_stepped(const fmac::ArrayGeometry& geometry, const bfp::BfpMatrix& x, const bfp::BfpMatrix& y_t) {
    test::FreshSimContext kernel;  // declared first: destroyed after the modules below
    const fmac::ChunkPlanes px(x), py(y_t);
    array::ArrayParams params;
    params.geometry = geometry;
    array::SystolicArray arr("array", params);
    test::ArrayDriver driver("driver");
    std::vector<float> out;
    driver.array = &arr;
    driver.job = {&px, &py, &out};
    sc_core::sc_start();
    return {out, static_cast<std::uint64_t>(driver.finished / params.clock_period), arr.stats()};
}

bool bit_equal(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

std::vector<float> random_tensor(std::size_t n, std::mt19937_64& rng, float scale) {
    std::normal_distribution<float> normal(0.0f, scale);
    std::vector<float> v(n);
    for (auto& x : v) x = normal(rng);
    return v;
}

}  // namespace

TEST_CASE("a hand-timed single fold: R + P (M + R + C - 2) cycles", "[array]") {
    // 2 x 2 array, g = 4: K = 8 -> 2 groups (R' = 2), N = 2 (C' = 2), M = 3, m = 4 x 4 -> P = 4.
    // Cycles = 2 (weight load) + 4 * (3 + 2 + 2 - 2) = 22.
    std::mt19937_64 rng(1);
    bfp::Format f;
    f.group_size = 4;
    f.mantissa_bits = 4;
    bfp::Quantizer q(f, bfp::Rounding::nearest);
    const auto a = random_tensor(3 * 8, rng, 1.0f), w = random_tensor(8 * 2, rng, 1.0f);
    const auto x = bfp::quantize_rows(a.data(), 3, 8, 8, 1, q);
    const auto y_t = bfp::quantize_rows(w.data(), 2, 8, 1, 2, q);
    const SteppedRun run = run_stepped({2, 2, 4}, x, y_t);
    CHECK(run.cycles == 22);
    CHECK(run.stats.weight_load_cycles == 2);
    CHECK(run.stats.pe_passes == 3 * 2 * 2 * 4);  // every (row, group, column) product, 4 passes each
    CHECK(fmac::analytic_gemm_timing({3, 8, 2}, {2, 2, 4}, 4, 4).cycles == 22);
    CHECK(bit_equal(run.out, bfp::gemm(x, y_t)));
}

TEST_CASE("stepped array equals bfp::gemm and the cycle formula on ragged shapes",
                 "[array]") {
    std::mt19937_64 rng(2024);
    std::uniform_int_distribution<int> array_dim(1, 9), gemm_dim(1, 60);
    std::uniform_int_distribution<int> width(1, 4);
    const int groups[] = {4, 8, 16};
    for (int trial = 0; trial < 24; ++trial) {
        const fmac::ArrayGeometry geometry{array_dim(rng), array_dim(rng), groups[trial % 3]};
        const std::size_t m = static_cast<std::size_t>(gemm_dim(rng)), k = static_cast<std::size_t>(gemm_dim(rng)),
                          n = static_cast<std::size_t>(gemm_dim(rng));
        const int mx = 2 * width(rng), my = 2 * width(rng);
        bfp::Format fx, fy;
        fx.group_size = fy.group_size = geometry.group_size;
        fx.mantissa_bits = mx;
        fy.mantissa_bits = my;
        bfp::Quantizer qx(fx, bfp::Rounding::nearest), qy(fy, bfp::Rounding::stochastic);
        const auto xs = random_tensor(m * k, rng, 1.0f), ys = random_tensor(k * n, rng, 0.1f);
        const auto x = bfp::quantize_rows(xs.data(), m, k, k, 1, qx);
        const auto y_t = bfp::quantize_rows(ys.data(), n, k, 1, n, qy);
        INFO("array " << geometry.rows << "x" << geometry.cols << " g=" << geometry.group_size << ", gemm " << m << "x"
                      << k << "x" << n << ", m " << mx << "x" << my);
        const SteppedRun run = run_stepped(geometry, x, y_t);
        const fmac::GemmTiming expected = fmac::analytic_gemm_timing({m, k, n}, geometry, mx, my);
        REQUIRE(bit_equal(run.out, bfp::gemm(x, y_t)));
        REQUIRE(run.cycles == expected.cycles);
        CHECK(run.stats.busy_cycles == expected.cycles);
        CHECK(run.stats.weight_load_cycles == expected.weight_load_cycles);
        CHECK(run.stats.folds == expected.folds);
        CHECK(run.stats.pe_passes == expected.pe_passes);
        CHECK(run.stats.group_products == expected.group_products);
    }
}

TEST_CASE("all three training GEMMs run bit-exactly on the stationary-W array",
                 "[array]") {
    std::mt19937_64 rng(99);
    const fmac::LayerDims dims{37, 45, 29};  // none a multiple of R, C or g
    const fmac::ArrayGeometry geometry{4, 3, 16};
    const auto a = random_tensor(dims.batch * dims.in, rng, 1.0f);
    const auto w = random_tensor(dims.in * dims.out, rng, 0.05f);
    const auto d_out = random_tensor(dims.batch * dims.out, rng, 1e-3f);
    bfp::Format fa, fw, fg;
    fa.mantissa_bits = 4;
    fw.mantissa_bits = 6;
    fg.mantissa_bits = 8;
    bfp::Quantizer qa(fa, bfp::Rounding::nearest), qw(fw, bfp::Rounding::nearest),
        qg(fg, bfp::Rounding::stochastic, bfp::NoiseSpec{8, 16, 3});
    for (auto phase : {fmac::TrainingPhase::forward, fmac::TrainingPhase::backward_data,
                       fmac::TrainingPhase::weight_gradient}) {
        INFO(fmac::to_string(phase));
        const fmac::PhaseOperands ops = fmac::lower_phase(phase, dims, a.data(), w.data(), d_out.data(), qa, qw, qg);
        // The mapping computes the intended product: compare with fp32 within the BFP error.
        std::vector<double> exact(ops.shape.m * ops.shape.n, 0.0);
        double scale = 0;
        for (std::size_t i = 0; i < ops.shape.m; ++i)
            for (std::size_t j = 0; j < ops.shape.n; ++j) {
                double s = 0, mag = 0;
                for (std::size_t p = 0; p < ops.shape.k; ++p) {
                    double u = 0, v = 0;
                    switch (phase) {
                    case fmac::TrainingPhase::forward: u = a[i * dims.in + p]; v = w[p * dims.out + j]; break;
                    case fmac::TrainingPhase::backward_data: u = d_out[i * dims.out + p]; v = w[j * dims.out + p]; break;
                    case fmac::TrainingPhase::weight_gradient: u = a[p * dims.in + i]; v = d_out[p * dims.out + j]; break;
                    }
                    s += u * v;
                    mag += std::abs(u * v);
                }
                exact[i * ops.shape.n + j] = s;
                scale = std::max(scale, mag);
            }
        const SteppedRun run = run_stepped(geometry, ops.x, ops.y_transposed);
        REQUIRE(bit_equal(run.out, bfp::gemm(ops.x, ops.y_transposed)));
        double worst = 0;
        for (std::size_t i = 0; i < exact.size(); ++i) worst = std::max(worst, std::abs(run.out[i] - exact[i]));
        CHECK(worst < scale * 0.25);
        CHECK(run.cycles == fmac::analytic_gemm_timing(ops.shape, geometry, ops.x.data.format.mantissa_bits,
                                                       ops.y_transposed.data.format.mantissa_bits)
                                .cycles);
    }
}
