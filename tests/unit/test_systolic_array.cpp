// SPDX-License-Identifier: MIT
// The stepped SystemC array against its two references: bfp::gemm (bit for bit) and the
// analytic cycle formula (exactly).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <utility>

#include "array/systolic_array.h"
#include "fmac/training_gemm.h"
#include "node/node.h"
#include "support/array_driver.h"
#include "support/systemc_fixture.h"

using namespace fastsim;

namespace {

struct SteppedRun {
    std::vector<float> out;
    std::uint64_t cycles;
    array::ArrayStats stats;
};

/// One job on a fresh array; with `start`, the job accumulates onto those m x n partial sums.
SteppedRun run_stepped(const fmac::ArrayGeometry& geometry, const bfp::BfpMatrix& x, const bfp::BfpMatrix& y_t,
                       fmac::Dataflow dataflow = fmac::Dataflow::weight_stationary,
                       const std::vector<float>* start = nullptr) {
    test::FreshSimContext kernel;  // declared first: destroyed after the modules below
    const fmac::ChunkPlanes px(x), py(y_t);
    array::ArrayParams params;
    params.geometry = geometry;
    array::SystolicArray arr("array", params);
    test::ArrayDriver driver("driver");
    std::vector<float> out;
    if (start) out = *start;
    driver.array = &arr;
    driver.job = {&px, &py, &out, start != nullptr, dataflow};
    sc_core::sc_start();
    return {out, static_cast<std::uint64_t>(driver.finished / params.clock_period), arr.stats()};
}

constexpr fmac::Dataflow kDataflows[] = {fmac::Dataflow::weight_stationary, fmac::Dataflow::output_stationary,
                                         fmac::Dataflow::input_stationary};

bool bit_equal(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

std::vector<float> random_tensor(std::size_t n, std::mt19937_64& rng, float scale) {
    std::normal_distribution<float> normal(0.0f, scale);
    std::vector<float> v(n);
    for (auto& x : v) x = normal(rng);
    return v;
}

/// The hand-timed cases' operands: X 3 x 8 and Y^T 2 x 8, g = 4, 4-bit mantissas (P = 4).
std::pair<bfp::BfpMatrix, bfp::BfpMatrix> hand_timed_operands() {
    std::mt19937_64 rng(1);
    bfp::Format f;
    f.group_size = 4;
    f.mantissa_bits = 4;
    bfp::Quantizer q(f, bfp::Rounding::nearest);
    const auto a = random_tensor(3 * 8, rng, 1.0f), w = random_tensor(8 * 2, rng, 1.0f);
    return {bfp::quantize_rows(a.data(), 3, 8, 8, 1, q), bfp::quantize_rows(w.data(), 2, 8, 1, 2, q)};
}

}  // namespace

TEST_CASE("a hand-timed single fold: R + P (M + R + C - 2) cycles", "[array]") {
    // 2 x 2 array, g = 4: K = 8 -> 2 groups (R' = 2), N = 2 (C' = 2), M = 3, m = 4 x 4 -> P = 4.
    // Cycles = 2 (weight load) + 4 * (3 + 2 + 2 - 2) = 22.
    const auto [x, y_t] = hand_timed_operands();
    const SteppedRun run = run_stepped({2, 2, 4}, x, y_t);
    CHECK(run.cycles == 22);
    CHECK(run.stats.counts.stationary_cycles == 2);
    CHECK(run.stats.counts.pe_passes == 3 * 2 * 2 * 4);  // every (row, group, column) product, 4 passes each
    CHECK(fmac::analytic_gemm_timing({3, 8, 2}, {2, 2, 4}, 4, 4).cycles == 22);
    CHECK(bit_equal(run.out, bfp::gemm(x, y_t)));
}

TEST_CASE("hand-timed output- and input-stationary folds", "[array]") {
    // 2 x 2 array, g = 4, X 3 x 8 (2 groups), Y^T 2 x 8, m = 4 x 4 -> P = 4.
    // os: rows hold X rows (3: folds of 2 and 1), columns Y^T rows (2), 2 k-groups stream;
    //   fold 1: 2 (drain) + 4 (2 + 2 + 2 - 2) = 18, fold 2: 1 + 4 (2 + 1 + 2 - 2) = 13; 31 in all.
    // is: rows hold k-groups (2), columns X rows (3: folds of 2 and 1), Y^T's 2 rows stream;
    //   fold 1: 2 (load) + 4 (2 + 2 + 2 - 2) = 18, fold 2: 2 + 4 (2 + 2 + 1 - 2) = 14; 32 in all.
    const auto [x, y_t] = hand_timed_operands();
    const SteppedRun os = run_stepped({2, 2, 4}, x, y_t, fmac::Dataflow::output_stationary);
    CHECK(os.cycles == 31);
    CHECK(os.stats.counts.stationary_cycles == 3);
    CHECK(os.stats.counts.folds == 2);
    CHECK(bit_equal(os.out, bfp::gemm(x, y_t)));
    const SteppedRun is = run_stepped({2, 2, 4}, x, y_t, fmac::Dataflow::input_stationary);
    CHECK(is.cycles == 32);
    CHECK(is.stats.counts.stationary_cycles == 4);
    CHECK(is.stats.counts.folds == 2);
    CHECK(bit_equal(is.out, bfp::gemm(x, y_t)));
    for (const SteppedRun* run : {&os, &is}) CHECK(run->stats.counts.pe_passes == 3 * 2 * 2 * 4);
    CHECK(fmac::analytic_gemm_timing({3, 8, 2}, {2, 2, 4}, 4, 4, fmac::Dataflow::output_stationary).cycles == 31);
    CHECK(fmac::analytic_gemm_timing({3, 8, 2}, {2, 2, 4}, 4, 4, fmac::Dataflow::input_stationary).cycles == 32);
    // SRAM passes: os streams X past every column fold and Y past every row fold, writes
    // each output once; is holds X, streams Y^T once per column fold, writes per k-fold.
    const auto passes = [](fmac::Dataflow d) {
        const fmac::OperandPasses p = fmac::analytic_gemm_timing({3, 8, 2}, {2, 2, 4}, 4, 4, d).passes_of_operands;
        return std::vector<std::uint64_t>{p.x_reads, p.y_reads, p.psum_writes};
    };
    CHECK(passes(fmac::Dataflow::output_stationary) == std::vector<std::uint64_t>{1, 2, 1});
    CHECK(passes(fmac::Dataflow::input_stationary) == std::vector<std::uint64_t>{1, 2, 1});
    CHECK(passes(fmac::Dataflow::weight_stationary) == std::vector<std::uint64_t>{1, 1, 1});
}

TEST_CASE("stepped array equals bfp::gemm and the cycle formula on ragged shapes, every dataflow", "[array]") {
    std::mt19937_64 rng(2024);
    std::uniform_int_distribution<int> array_dim(1, 9), gemm_dim(1, 60);
    std::uniform_int_distribution<int> width(1, 4);
    // g = 1 takes the scalar path; 4, 8, 16 and 24: 1, 1, 2 (unrolled) and 3 (generic) lane blocks.
    const int groups[] = {1, 4, 8, 16, 24};
    for (int trial = 0; trial < 45; ++trial) {
        const fmac::Dataflow dataflow = kDataflows[trial % 3];
        const fmac::ArrayGeometry geometry{array_dim(rng), array_dim(rng), groups[trial % 5]};
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
                      << k << "x" << n << ", m " << mx << "x" << my << ", " << name_of(dataflow));
        const SteppedRun run = run_stepped(geometry, x, y_t, dataflow);
        const fmac::GemmTiming expected = fmac::analytic_gemm_timing({m, k, n}, geometry, mx, my, dataflow);
        REQUIRE(bit_equal(run.out, bfp::gemm(x, y_t)));
        REQUIRE(run.cycles == expected.cycles);
        CHECK(run.stats.busy_cycles == expected.cycles);
        CHECK(run.stats.counts == expected.counts);
    }
}

TEST_CASE("k split in two accumulating jobs equals one whole-K bfp::gemm, every dataflow", "[array]") {
    // The node chains k-tiles this way: the second job starts every output from the first's sums.
    std::mt19937_64 rng(77);
    std::uniform_int_distribution<int> array_dim(1, 6), gemm_dim(1, 30), width(1, 4);
    for (int trial = 0; trial < 18; ++trial) {
        const fmac::Dataflow dataflow = kDataflows[trial % 3];
        const int g = trial % 2 ? 1 : 8;
        const fmac::ArrayGeometry geometry{array_dim(rng), array_dim(rng), g};
        const std::size_t m = static_cast<std::size_t>(gemm_dim(rng)), n = static_cast<std::size_t>(gemm_dim(rng));
        const std::size_t groups_first = static_cast<std::size_t>(gemm_dim(rng) % 5 + 1);
        const std::size_t groups = groups_first + static_cast<std::size_t>(gemm_dim(rng) % 5 + 1);
        const std::size_t k = groups * static_cast<std::size_t>(g);
        bfp::Format f;
        f.group_size = g;
        f.mantissa_bits = 2 * width(rng);
        bfp::Quantizer q(f, bfp::Rounding::nearest);
        const auto xs = random_tensor(m * k, rng, 1.0f), ys = random_tensor(k * n, rng, 0.3f);
        const auto x = bfp::quantize_rows(xs.data(), m, k, k, 1, q);
        const auto y_t = bfp::quantize_rows(ys.data(), n, k, 1, n, q);
        INFO("array " << geometry.rows << "x" << geometry.cols << " g=" << g << ", gemm " << m << "x" << k << "x" << n
                      << ", " << name_of(dataflow));
        const SteppedRun first = run_stepped(geometry, node::slice(x, 0, m, 0, groups_first),
                                             node::slice(y_t, 0, n, 0, groups_first), dataflow);
        const SteppedRun second =
            run_stepped(geometry, node::slice(x, 0, m, groups_first, groups - groups_first),
                        node::slice(y_t, 0, n, groups_first, groups - groups_first), dataflow, &first.out);
        CHECK(bit_equal(second.out, bfp::gemm(x, y_t)));
    }
}

TEST_CASE("all three training GEMMs run bit-exactly on the stationary-W array", "[array]") {
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
    for (auto phase :
         {fmac::TrainingPhase::forward, fmac::TrainingPhase::backward_data, fmac::TrainingPhase::weight_gradient}) {
        INFO(fmac::to_string(phase));
        const fmac::PhaseOperands ops = fmac::lower_phase(phase, dims, a.data(), w.data(), d_out.data(), qa, qw, qg);
        // Each operand went through its tensor class's quantiser (activations m=4, weights m=6,
        // gradients m=8, the latter with stochastic rounding).
        const int expected_x = phase == fmac::TrainingPhase::backward_data ? 8 : 4;
        const int expected_y = phase == fmac::TrainingPhase::weight_gradient ? 8 : 6;
        CHECK(ops.x.data.format.mantissa_bits == expected_x);
        CHECK(ops.y_transposed.data.format.mantissa_bits == expected_y);
        // The mapping computes the intended product: compare with fp32 within the BFP error.
        std::vector<double> exact(ops.shape.m * ops.shape.n, 0.0);
        double scale = 0;
        for (std::size_t i = 0; i < ops.shape.m; ++i)
            for (std::size_t j = 0; j < ops.shape.n; ++j) {
                double s = 0, mag = 0;
                for (std::size_t p = 0; p < ops.shape.k; ++p) {
                    double u = 0, v = 0;
                    switch (phase) {
                    case fmac::TrainingPhase::forward:
                        u = a[i * dims.in + p];
                        v = w[p * dims.out + j];
                        break;
                    case fmac::TrainingPhase::backward_data:
                        u = d_out[i * dims.out + p];
                        v = w[j * dims.out + p];
                        break;
                    case fmac::TrainingPhase::weight_gradient:
                        u = a[p * dims.in + i];
                        v = d_out[p * dims.out + j];
                        break;
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

namespace {

/// Runs two jobs back to back on one array: the second starts the moment busy() drops.
SC_MODULE(TwoJobDriver) {
    array::SystolicArray* array = nullptr;
    array::ArrayJob first, second;
    sc_core::sc_time second_started, second_done;
    SC_CTOR(TwoJobDriver) { SC_THREAD(drive); }
    void drive() {
        array->start(first);
        while (array->busy()) wait(array->params().clock_period);
        second_started = sc_core::sc_time_stamp();
        array->start(second);
        wait(array->done());
        second_done = sc_core::sc_time_stamp();
    }
};

/// Records when done() fires, independently of the driver.
SC_MODULE(DoneWatcher) {
    array::SystolicArray* array = nullptr;
    std::vector<sc_core::sc_time> fired;
    SC_CTOR(DoneWatcher) { SC_THREAD(watch); }
    void watch() {
        for (;;) {
            wait(array->done());
            fired.push_back(sc_core::sc_time_stamp());
        }
    }
};

}  // namespace

TEST_CASE("back-to-back jobs: busy() holds until done and the second job is exact", "[array]") {
    test::FreshSimContext kernel;
    std::mt19937_64 rng(8);
    bfp::Format f;
    f.mantissa_bits = 8;
    bfp::Quantizer q(f, bfp::Rounding::nearest);
    const auto a1 = random_tensor(8 * 32, rng, 1.0f), w1 = random_tensor(32 * 4, rng, 1.0f);
    const auto a2 = random_tensor(5 * 40, rng, 1.0f), w2 = random_tensor(40 * 3, rng, 1.0f);
    const auto x1 = bfp::quantize_rows(a1.data(), 8, 32, 32, 1, q), y1 = bfp::quantize_rows(w1.data(), 4, 32, 1, 4, q);
    const auto x2 = bfp::quantize_rows(a2.data(), 5, 40, 40, 1, q), y2 = bfp::quantize_rows(w2.data(), 3, 40, 1, 3, q);
    const fmac::ChunkPlanes px1(x1), py1(y1), px2(x2), py2(y2);
    array::ArrayParams params;
    params.geometry = {2, 2, 16};
    array::SystolicArray arr("array", params);
    TwoJobDriver driver("driver");
    DoneWatcher watcher("watcher");
    std::vector<float> out1, out2;
    driver.array = &arr;
    watcher.array = &arr;
    driver.first = {&px1, &py1, &out1};
    driver.second = {&px2, &py2, &out2};
    sc_core::sc_start();
    const auto t1 = fmac::analytic_gemm_timing({8, 32, 4}, params.geometry, 8, 8).cycles;
    const auto t2 = fmac::analytic_gemm_timing({5, 40, 3}, params.geometry, 8, 8).cycles;
    REQUIRE(watcher.fired.size() == 2);
    CHECK(watcher.fired[0] == params.clock_period * double(t1));
    CHECK(driver.second_started == watcher.fired[0]);  // busy() dropped exactly when done fired
    CHECK(driver.second_done - driver.second_started == params.clock_period * double(t2));
    CHECK(bit_equal(out1, bfp::gemm(x1, y1)));
    CHECK(bit_equal(out2, bfp::gemm(x2, y2)));
}

TEST_CASE("the array rejects operands it cannot compute exactly, in every build", "[array]") {
    test::FreshSimContext kernel;
    std::mt19937_64 rng(4);
    const auto v = random_tensor(4 * 16, rng, 1.0f);
    bfp::Format wide, g8;
    wide.mantissa_bits = 10;
    g8.group_size = 8;
    bfp::Quantizer qwide(wide, bfp::Rounding::nearest), q8(g8, bfp::Rounding::nearest),
        q(bfp::Format{}, bfp::Rounding::nearest);
    const fmac::ChunkPlanes x_wide(bfp::quantize_rows(v.data(), 4, 16, 16, 1, qwide));
    const fmac::ChunkPlanes x(bfp::quantize_rows(v.data(), 4, 16, 16, 1, q));
    const fmac::ChunkPlanes y_g8(bfp::quantize_rows(v.data(), 2, 16, 16, 1, q8));
    array::ArrayParams params;
    params.geometry = {2, 2, 16};
    array::SystolicArray arr("array", params);
    std::vector<float> out;
    CHECK_THROWS_AS(arr.start({&x_wide, &x, &out}), std::invalid_argument);
    CHECK_THROWS_AS(arr.start({&x, &y_g8, &out}), std::invalid_argument);
    CHECK_FALSE(arr.busy());
    std::vector<float> too_few(3);  // an accumulating job needs m x n = 16 partial sums
    CHECK_THROWS_AS(arr.start({&x, &x, &too_few, true}), std::invalid_argument);
    CHECK_FALSE(arr.busy());
}

TEST_CASE("NaN groups give the same canonical NaN outputs as bfp::gemm", "[array]") {
    for (const int g : {4, 1}) {
        std::mt19937_64 rng(12);
        bfp::Format f;
        f.group_size = g;
        f.mantissa_bits = 4;
        bfp::Quantizer q(f, bfp::Rounding::nearest);
        auto a = random_tensor(9 * 13, rng, 1.0f), w = random_tensor(13 * 7, rng, 1.0f);
        a[5] = std::numeric_limits<float>::quiet_NaN();
        a[30] = -std::numeric_limits<float>::infinity();
        w[20] = std::numeric_limits<float>::infinity();
        const auto x = bfp::quantize_rows(a.data(), 9, 13, 13, 1, q);
        const auto y_t = bfp::quantize_rows(w.data(), 7, 13, 1, 7, q);
        const auto reference = bfp::gemm(x, y_t);
        std::size_t nans = 0;
        for (float v : reference) nans += std::isnan(v);
        CHECK(nans > 0);
        CHECK(nans < reference.size());
        for (const fmac::Dataflow dataflow : kDataflows) {
            INFO("g " << g << ", " << name_of(dataflow));
            CHECK(bit_equal(run_stepped({3, 2, g}, x, y_t, dataflow).out, reference));
        }
    }
}
