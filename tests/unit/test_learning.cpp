// SPDX-License-Identifier: MIT
// The BFP training engine: data reader, the two GEMM paths, FAST's schedule, training under
// every policy, reproducibility, and the node costing of iterations.
#include <catch2/catch.hpp>

#include <zlib.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <utility>
#include <vector>

#include "bfp/dot.h"
#include "common/errors.h"
#include "config/train_config.h"
#include "run/train_run.h"
#include "support/temp_dir.h"
#include "learning/dataset.h"
#include "learning/gemm.h"
#include "learning/precision.h"
#include "learning/trainer.h"

using namespace fastsim;
using namespace fastsim::learning;
using Catch::Matchers::Contains;

namespace {

const std::string kDataDir = kFashionMnistDir;

std::string data_file(const char* name) { return kDataDir + "/" + name; }

/// A gzip file holding `bytes`.
std::string write_gz(const test::TempDir& dir, const std::string& name, const std::vector<unsigned char>& bytes) {
    const std::string path = dir.path(name);
    gzFile f = gzopen(path.c_str(), "wb");
    gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size()));
    gzclose(f);
    return path;
}

std::vector<unsigned char> idx_header(std::uint32_t magic, std::vector<std::uint32_t> dims) {
    std::vector<unsigned char> out;
    dims.insert(dims.begin(), magic);
    for (std::uint32_t v : dims)
        for (int shift = 24; shift >= 0; shift -= 8) out.push_back(static_cast<unsigned char>(v >> shift));
    return out;
}

/// The loaded training split, cut to `count`, shared by the tests (decompressing takes ~0.3 s).
const Dataset& train_slice() {
    static const Dataset data =
        load_idx(data_file("train-images-idx3-ubyte.gz"), data_file("train-labels-idx1-ubyte.gz"), 1024);
    return data;
}

PolicySpec policy(const std::string& name, ScheduleParams schedule = {}) {
    bfp::Format format;
    return *make_policy(name, format, bfp::NoiseSpec{}, ClassRounding{}, schedule);
}

}  // namespace

TEST_CASE("Fashion-MNIST loads from the Debian package's IDX files", "[training][data]") {
    const Dataset& d = train_slice();
    CHECK(d.count == 1024);
    CHECK(d.height == 28);
    CHECK(d.width == 28);
    // The first training sample is an ankle boot (class 9), the second a T-shirt (0).
    CHECK(int(d.labels[0]) == 9);
    CHECK(int(d.labels[1]) == 0);
    // Pixel 0 of every image is background: (0 / 255 - mean) / std.
    CHECK(d.images[0] == Approx(-kPixelMean / kPixelStd));
    const FashionMnist both = load_fashion_mnist(kDataDir, 10, 20);
    CHECK(both.train.count == 10);
    CHECK(both.test.count == 20);
}

TEST_CASE("a missing, corrupt or inconsistent data file is an error naming the file", "[training][data]") {
    test::TempDir dir;
    const std::string labels = write_gz(dir, "labels.gz", [] {
        auto b = idx_header(0x801, {2});
        b.push_back(1);
        b.push_back(2);
        return b;
    }());
    CHECK_THROWS_WITH(load_idx(dir.path("nothing.gz"), labels),
                      Contains(dir.path("nothing.gz") + ": no such file") && Contains("dataset-fashion-mnist"));
    // Wrong magic (labels given as images).
    CHECK_THROWS_WITH(load_idx(labels, labels), Contains(labels + ": not an IDX image file (magic 0x00000801"));
    // Truncated pixel data: 2 images of 2 x 2 announced, 5 bytes present.
    auto short_images = idx_header(0x803, {2, 2, 2});
    short_images.insert(short_images.end(), 5, 0);
    const std::string truncated = write_gz(dir, "short.gz", short_images);
    CHECK_THROWS_WITH(load_idx(truncated, labels), Contains(truncated + ": file ends inside the pixel data"));
    // Counts that disagree.
    auto three = idx_header(0x803, {3, 2, 2});
    three.insert(three.end(), 12, 0);
    const std::string images3 = write_gz(dir, "three.gz", three);
    CHECK_THROWS_WITH(load_idx(images3, labels), Contains(labels + ": 2 labels for the 3 images"));
    // A label outside 0..9.
    auto two = idx_header(0x803, {2, 2, 2});
    two.insert(two.end(), 8, 0);
    const std::string images2 = write_gz(dir, "two.gz", two);
    auto bad = idx_header(0x801, {2});
    bad.push_back(3);
    bad.push_back(12);
    const std::string bad_labels = write_gz(dir, "bad.gz", bad);
    CHECK_THROWS_WITH(load_idx(images2, bad_labels), Contains(bad_labels + ": label 12 of sample 1"));
    // Not gzip at all but a damaged gzip stream.
    const std::string garbage = dir.write("garbage.gz", std::string("\x1f\x8b\x08\x00garbage-garbage-garbage", 27));
    CHECK_THROWS_AS(load_idx(garbage, labels), DatasetError);
    CHECK_NOTHROW(load_idx(images2, labels));
}

TEST_CASE("the fast and exact BFP GEMM paths agree within the documented bound", "[training][gemm]") {
    std::mt19937_64 rng(5);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    double worst_ratio = 0;
    std::size_t differing = 0;
    for (const auto& [m, n, k] : std::vector<std::array<std::size_t, 3>>{{7, 5, 33}, {32, 24, 256}, {16, 10, 784}}) {
        for (int bits : {2, 4, 8}) {
            std::vector<float> a(m * k), bt(n * k);
            for (float& v : a) v = normal(rng) * std::exp2(static_cast<float>(normal(rng)) * 3);
            for (float& v : bt) v = normal(rng);
            bfp::Format f;
            f.mantissa_bits = bits;
            bfp::Quantizer qa_fast(f, bfp::Rounding::stochastic), qb_fast(f, bfp::Rounding::nearest);
            bfp::Quantizer qa_exact = qa_fast, qb_exact = qb_fast;
            std::vector<float> c_fast(m * n), c_exact(m * n);
            GemmScratch scratch;
            gemm_abt(GemmPath::fast, a.data(), bt.data(), m, n, k, &qa_fast, &qb_fast, c_fast.data(), scratch);
            gemm_abt(GemmPath::exact, a.data(), bt.data(), m, n, k, &qa_exact, &qb_exact, c_exact.data(), scratch);
            // S from the quantised operands, as the bound is stated.
            bfp::Quantizer qa_s = bfp::Quantizer(f, bfp::Rounding::stochastic), qb_s(f, bfp::Rounding::nearest);
            std::vector<float> a_q(m * k), bt_q(n * k);
            for (std::size_t r = 0; r < m; ++r) qa_s.quantize_dequantize(&a[r * k], k, &a_q[r * k]);
            for (std::size_t r = 0; r < n; ++r) qb_s.quantize_dequantize(&bt[r * k], k, &bt_q[r * k]);
            const std::size_t groups = (k + 15) / 16;
            for (std::size_t i = 0; i < m; ++i)
                for (std::size_t j = 0; j < n; ++j) {
                    double s = 0;
                    for (std::size_t q = 0; q < k; ++q)
                        s += std::fabs(double(a_q[i * k + q]) * double(bt_q[j * k + q]));
                    const double diff = std::fabs(double(c_fast[i * n + j]) - double(c_exact[i * n + j]));
                    const double bound = gemm_agreement_bound(k, groups, s);
                    INFO("m n k = " << m << " " << n << " " << k << ", bits " << bits << ", C(" << i << "," << j
                                    << ")");
                    REQUIRE(diff <= bound);
                    if (diff > 0) ++differing;
                    if (bound > 0) worst_ratio = std::max(worst_ratio, diff / bound);
                }
        }
    }
    CHECK(differing > 0);       // the paths really sum differently: the bound is exercised
    CHECK(worst_ratio < 0.25);  // and is not loose by orders of magnitude
}

TEST_CASE("an operand quantised once meets each slice of the other as the whole GEMM would", "[training][gemm]") {
    std::mt19937_64 rng(8);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    const std::size_t m = 6, n = 37, k = 40, slice = 16;
    std::vector<float> a(m * k), bt(n * k);
    for (float& v : a) v = normal(rng);
    for (float& v : bt) v = normal(rng);
    bfp::Format f;
    f.mantissa_bits = 4;
    bfp::Quantizer qa_whole(f, bfp::Rounding::stochastic), qb_whole(f, bfp::Rounding::stochastic);
    bfp::Quantizer qa_sliced = qa_whole, qb_sliced = qb_whole;
    std::vector<float> whole(m * n);  // C = A Bt^T
    GemmScratch scratch;
    gemm_abt(GemmPath::exact, a.data(), bt.data(), m, n, k, &qa_whole, &qb_whole, whole.data(), scratch);
    GemmOperand a_once, bt_slice;
    a_once.prepare(GemmPath::exact, stored_rows(a.data(), m), k, &qa_sliced);
    for (std::size_t first = 0; first < n; first += slice) {  // rows of Bt 0-15, 16-31, 32-36
        const std::size_t rows = std::min(slice, n - first);
        bt_slice.prepare(GemmPath::exact, stored_rows(&bt[first * k], rows), k, &qb_sliced);
        std::vector<float> c(m * rows);
        gemm_abt(a_once, bt_slice, c.data());
        for (std::size_t i = 0; i < m; ++i)
            for (std::size_t j = 0; j < rows; ++j) CHECK(c[i * rows + j] == whole[i * n + first + j]);
    }
    CHECK(qa_sliced.lfsr().lane(0).state() == qa_whole.lfsr().lane(0).state());  // A's noise drawn once
    CHECK(qb_sliced.lfsr().lane(0).state() == qb_whole.lfsr().lane(0).state());

    GemmOperand fp32, other_k;
    fp32.prepare(GemmPath::exact, stored_rows(bt.data(), n), k, nullptr);
    CHECK_THROWS_AS(gemm_abt(a_once, fp32, whole.data()), std::invalid_argument);  // quantised x fp32
    other_k.prepare(GemmPath::exact, stored_rows(bt.data(), 2), 2 * k, &qb_sliced);
    CHECK_THROWS_AS(gemm_abt(a_once, other_k, whole.data()), std::invalid_argument);
}

TEST_CASE("r(X) is 0 for a tensor exact at m and large for one far from it", "[training][schedule]") {
    bfp::Format f;
    // Exactly representable at m = 2: every group is {±3, ±2, ±1, 0} x 2^(E-1).
    std::vector<float> exact(64);
    for (std::size_t i = 0; i < exact.size(); ++i) exact[i] = static_cast<float>(static_cast<int>(i % 7) - 3);
    CHECK(relative_improvement(exact.data(), exact.size(), f, 2, 2, ImprovementNorm::sum_of_abs) == 0.0);
    // One group {1, 1.25, ..}: at m=2 with E = 0 the grid is 0.5, so 1.25 -> 1.5 (nearest, ties away),
    // at m=4 the grid is 0.125 and 1.25 is exact: |1.25 - 1.5| / (1.5 + 1) = 0.1.
    std::vector<float> two{1.25f, 1.0f};
    CHECK(relative_improvement(two.data(), 2, f, 2, 2, ImprovementNorm::sum_of_abs) == Approx(0.25 / 2.5));
    CHECK(relative_improvement(two.data(), 2, f, 2, 2, ImprovementNorm::abs_of_sum) == Approx(0.25 / 2.5));
    std::vector<float> signs{1.25f, -1.0f};  // |sum| = 0.5 but sum of |.| = 2.5
    CHECK(relative_improvement(signs.data(), 2, f, 2, 2, ImprovementNorm::abs_of_sum) == Approx(0.25 / 0.5));
}

TEST_CASE("the schedule raises a width where r(X) is large and keeps it where r(X) is small", "[training][schedule]") {
    ScheduleParams p;
    p.alpha = 0.1;
    p.beta = 0.05;
    p.check_every_iterations = 1;
    AdaptiveSchedule s(p, 4, 100);
    CHECK(s.threshold(0, 0) == Approx(0.1));
    CHECK(s.threshold(2, 50) == Approx(0.1 - 0.05 * 0.5 - 0.05 * 0.5));
    bfp::Format f;
    std::mt19937_64 rng(1);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> noisy(4096);
    for (float& v : noisy) v = normal(rng);
    std::vector<float> exact(4096);
    for (std::size_t i = 0; i < exact.size(); ++i) exact[i] = static_cast<float>(static_cast<int>(i % 7) - 3);

    const double r_noisy = s.consider(0, TensorClass::gradients, 0, noisy.data(), noisy.size(), f);
    CHECK(r_noisy > 0.1);
    CHECK(s.bits(0, TensorClass::gradients) == 4);
    const double r_exact = s.consider(0, TensorClass::weights, 0, exact.data(), exact.size(), f);
    CHECK(r_exact == 0.0);
    CHECK(s.bits(0, TensorClass::weights) == 2);
    // At m = 4, r of normal values (about 0.05) is below 0.1: kept.
    const double r4 = s.consider(0, TensorClass::gradients, 0, noisy.data(), noisy.size(), f);
    CHECK(r4 < 0.1);
    CHECK(r4 < r_noisy / 3);
    CHECK(s.bits(0, TensorClass::gradients) == 4);
    // Late in training the threshold has fallen below r: raised step by step up to max_bits,
    // never beyond, and never lowered when r falls to 0.
    ScheduleParams low = p;
    low.alpha = 0.005;
    AdaptiveSchedule late(low, 4, 100);
    for (int i = 0; i < 10; ++i) (void)late.consider(0, TensorClass::gradients, 0, noisy.data(), noisy.size(), f);
    CHECK(late.bits(0, TensorClass::gradients) == 8);
    CHECK(std::isnan(late.consider(0, TensorClass::gradients, 0, noisy.data(), noisy.size(), f)));
    CHECK(late.bits(0, TensorClass::gradients) == 8);
    // Other layers and classes untouched.
    CHECK(s.bits(1, TensorClass::gradients) == 2);
    CHECK(s.bits(0, TensorClass::activations) == 2);
}

TEST_CASE("a few hundred steps on a data slice lower the loss under every policy", "[training][slow]") {
    const Dataset& data = train_slice();
    for (const char* name : {"fp32", "bfp_m2", "bfp_m4", "bfp_m8", "msfp12", "fast"}) {
        TrainParams params;
        params.batch = 32;
        params.epochs = 10;
        params.max_iterations = 300;
        params.learning_rate = 0.02;
        Trainer trainer(params, policy(name), data);
        const double before = trainer.evaluate(data).loss;
        while (!trainer.finished()) (void)trainer.train_epoch();
        const Evaluation after = trainer.evaluate(data);
        INFO("policy " << name << ": loss " << before << " -> " << after.loss << ", accuracy " << after.accuracy);
        CHECK(trainer.iteration() == 300);
        CHECK(after.loss < 0.5 * before);
        CHECK(after.accuracy > 0.7);
    }
}

TEST_CASE("the same seed gives the same accuracy and precision log, another seed does not", "[training]") {
    const Dataset& data = train_slice();
    ScheduleParams schedule;
    schedule.check_every_iterations = 3;
    const auto run = [&](std::uint64_t seed) {
        TrainParams params;
        params.batch = 32;
        params.epochs = 3;
        params.seed = seed;
        Trainer trainer(params, policy("fast", schedule), data);
        std::vector<std::vector<LayerBits>> log;
        std::vector<double> r;
        while (!trainer.finished())
            (void)trainer.train_epoch([&](const IterationRecord& it) {
                log.push_back(*it.bits);
                for (const auto& c : *it.checks) r.push_back(c.r);
            });
        return std::make_tuple(trainer.evaluate(data).accuracy, log, r);
    };
    const auto [acc1, log1, r1] = run(11);
    const auto [acc2, log2, r2] = run(11);
    CHECK(acc1 == acc2);
    CHECK(log1 == log2);
    CHECK(r1 == r2);
    CHECK(log1.front() != log1.back());  // the schedule did raise something
    const auto [acc3, log3, r3] = run(12);
    CHECK(r3 != r1);
}

TEST_CASE("iteration costs come from the node model and odd widths cost as the next even one", "[training][cost]") {
    const fastsim::config::TrainConfig c =
        fastsim::config::load_train_config(std::string(FASTSIM_SOURCE_DIR) + "/configs/train/mlp.yaml");
    const auto shapes = Network(NetworkKind::mlp, 1).gemm_shapes();
    run::TrainingCostModel model(shapes, c.node, c.energy.resolved, c.rounding);
    const auto uniform = [&](int bits) { return std::vector<LayerBits>(shapes.size(), LayerBits{bits, bits, bits}); };
    const run::IterationCost m2 = model.iteration(64, uniform(2));
    const run::IterationCost m3 = model.iteration(64, uniform(3));
    const run::IterationCost m4 = model.iteration(64, uniform(4));
    const run::IterationCost m8 = model.iteration(64, uniform(8));
    CHECK(m3.cycles == m4.cycles);
    CHECK(m3.energy_pj == m4.energy_pj);
    CHECK(model.distinct_iterations() == 3);
    CHECK(m2.cycles < m4.cycles);
    CHECK(m4.cycles < m8.cycles);
    // MACs of forward, backward-data (fc2, fc3) and weight-gradient GEMMs of 784-256-128-10, batch 64.
    const std::uint64_t forward = 64ull * (784 * 256 + 256 * 128 + 128 * 10);
    CHECK(m8.macs == forward + 64ull * (256 * 128 + 128 * 10) + forward);
    CHECK(m8.energy_pj > m2.energy_pj);
}

TEST_CASE("train config errors name the file and key path", "[training][config]") {
    test::TempDir dir;
    const auto error_of = [&](const std::string& yaml) -> std::string {
        const std::string path = dir.write("bad.yaml", yaml);
        try {
            (void)fastsim::config::load_train_config(path);
        } catch (const fastsim::ConfigError& e) {
            return e.what();
        }
        return "no error";
    };
    CHECK_THAT(error_of("policies: [fp32, fast16]\n"),
               Contains("bad.yaml:1:18: policies[1]: expected one of fp32, bfp_m2, bfp_m4, bfp_m6, bfp_m8, msfp12, "
                        "fast, got 'fast16'"));
    CHECK_THAT(error_of("train:\n  model: resnet\n"), Contains("bad.yaml:2:10: train.model: expected one of mlp, cnn"));
    CHECK_THAT(error_of("train:\n  network: mlp\n"),
               Contains("train.network is the workers' network") && Contains("train.model"));
    CHECK_THAT(error_of("train:\n  workers: 100\n  batch: 64\n"),
               Contains("train.workers") && Contains("at most train.batch (64)"));
    CHECK_THAT(error_of("train:\n  network: {topology: torus2d}\n"),
               Contains("train.network.topology") && Contains("ring, fully_connected or switch"));
    CHECK_THAT(error_of("train:\n  batchsize: 3\n"), Contains("train.batchsize"));
    CHECK_THAT(error_of("schedule:\n  max_bits: 20\n"),
               Contains("schedule.max_bits: expected a value from 2 to 16 bits, got 20"));
    CHECK_THAT(error_of("policies: [fast, fast]\n"), Contains("policies[1]: policy 'fast' is listed twice"));
    CHECK_THAT(error_of("node:\n  array: {rows: 0}\n"), Contains("node.array.rows"));
    // A node key train does not use is refused, not ignored (on or off alike).
    for (const char* value : {"on", "off"})
        CHECK_THAT(error_of("node:\n  fusion: " + std::string(value) + "\n"),
                   Contains("bad.yaml:2:11: node.fusion: applies to run.mode training_step"));
    const fastsim::config::TrainConfig ok =
        fastsim::config::load_train_config(dir.write("ok.yaml", "data:\n  dir: here\n"));
    CHECK(ok.data_dir == dir.path("here"));
    REQUIRE(ok.policies.size() == 1);
    CHECK(ok.policies[0].name == "fast");
}

TEST_CASE("transpose moves every element, in tiles and at ragged edges", "[training][layout]") {
    for (const auto& [rows, cols] :
         {std::pair<std::size_t, std::size_t>{1, 1}, {3, 5}, {4, 4}, {7, 33}, {33, 65}, {64, 1568}, {130, 3}}) {
        std::vector<float> m(rows * cols), t(rows * cols, -1.0f);
        for (std::size_t i = 0; i < m.size(); ++i) m[i] = static_cast<float>(i);
        transpose(m.data(), rows, cols, t.data());
        INFO(rows << " x " << cols);
        bool same = true;
        for (std::size_t r = 0; r < rows; ++r)
            for (std::size_t c = 0; c < cols; ++c) same = same && t[c * rows + r] == m[r * cols + c];
        CHECK(same);
    }
}

TEST_CASE("back-propagated weight gradients match finite differences in both networks", "[training][gradient]") {
    const Dataset& data = train_slice();
    for (NetworkKind kind : {NetworkKind::mlp, NetworkKind::cnn}) {
        Network net(kind, 4);
        Activation input, grad;
        input.reshape(8, 1, 28, 28);
        std::copy_n(data.images.begin(), input.data.size(), input.data.begin());
        GemmContext ctx;
        const auto loss = [&] {
            const Activation& logits = net.forward(input, ctx);
            return softmax_cross_entropy(logits, data.labels.data(), grad).loss;
        };
        (void)loss();
        net.backward(grad, ctx);
        std::vector<Parameters*> params = net.parameters();
        std::vector<std::vector<float>> analytic;
        for (Parameters* p : params) analytic.push_back(p->weight_grad);
        std::mt19937_64 rng(9);
        int non_smooth = 0;
        for (std::size_t l = 0; l < params.size(); ++l) {
            for (int trial = 0; trial < 6; ++trial) {
                // The largest of a few random entries, so the difference is well above rounding.
                std::size_t i = 0;
                for (int pick = 0; pick < 50; ++pick) {
                    const std::size_t j = rng() % params[l]->weights.size();
                    if (std::fabs(analytic[l][j]) > std::fabs(analytic[l][i])) i = j;
                }
                const float saved = params[l]->weights[i];
                const auto central = [&](float h) {
                    params[l]->weights[i] = saved + h;
                    const double up = loss();
                    params[l]->weights[i] = saved - h;
                    const double down = loss();
                    params[l]->weights[i] = saved;
                    return (up - down) / (2 * static_cast<double>(h));
                };
                const double numeric = central(4e-3f);
                // A ReLU input crossing 0 within +-h makes the loss non-smooth there: skip it.
                if (std::fabs(numeric - central(1e-3f)) > 0.02 * std::fabs(numeric) + 1e-4) {
                    ++non_smooth;
                    continue;
                }
                CHECK(analytic[l][i] == Approx(numeric).epsilon(0.02).margin(1e-4));
            }
        }
        CHECK(non_smooth <= 3);
    }
}

namespace {

/// The plain lowering of a stride-1 convolution, the reference of the Conv2d layer: the
/// im2col matrix A row by row, and col2im adding A's rows in order.
struct ConvShape {
    std::size_t batch;
    int channels, height, width, filters, kernel, padding;
    [[nodiscard]] int out_height() const { return height + 2 * padding - kernel + 1; }
    [[nodiscard]] int out_width() const { return width + 2 * padding - kernel + 1; }
    [[nodiscard]] std::size_t rows() const { return batch * static_cast<std::size_t>(out_height() * out_width()); }
    [[nodiscard]] std::size_t fan_in() const { return static_cast<std::size_t>(channels * kernel * kernel); }
    /// Input index read by A(row, col), or -1 in the padding.
    [[nodiscard]] std::ptrdiff_t source(std::size_t row, std::size_t col) const {
        const auto pixels = static_cast<std::size_t>(out_height() * out_width());
        const std::size_t b = row / pixels;
        const int oy = static_cast<int>(row % pixels) / out_width(), ox = static_cast<int>(row % pixels) % out_width();
        const int c = static_cast<int>(col) / (kernel * kernel), ky = static_cast<int>(col) / kernel % kernel,
                  kx = static_cast<int>(col) % kernel;
        const int y = oy + ky - padding, x = ox + kx - padding;
        if (y < 0 || y >= height || x < 0 || x >= width) return -1;
        return static_cast<std::ptrdiff_t>(
            ((b * static_cast<std::size_t>(channels) + static_cast<std::size_t>(c)) * static_cast<std::size_t>(height) +
             static_cast<std::size_t>(y)) *
                static_cast<std::size_t>(width) +
            static_cast<std::size_t>(x));
    }
};

std::vector<float> transposed(const std::vector<float>& m, std::size_t rows, std::size_t cols) {
    std::vector<float> t(m.size());
    transpose(m.data(), rows, cols, t.data());
    return t;
}

std::vector<LayerQuantizers> stochastic_quantizers(int bits) {
    bfp::Format f;
    f.mantissa_bits = bits;
    std::vector<LayerQuantizers> q(1);
    for (std::size_t o = 0; o < kOperands; ++o) {
        bfp::NoiseSpec noise;
        noise.seed = 11 + o;
        q[0].operands.emplace_back(f, bfp::Rounding::stochastic, noise);
    }
    return q;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("the convolution layer computes the plain im2col lowering bit for bit", "[training][conv]") {
    std::mt19937_64 rng(3);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    // Padding 1 (kernel 3, unrolled; once with 16 channels, so that im2col's 4-float copies cross
    // 4096-float blocks), kernel 5 (generic, crossing blocks), no padding, padding >= kernel, a
    // kernel larger than the input, and 1 x 1. The 16-channel 12 x 12 and 14 x 14 shapes hold
    // 14,400 and 28,224 floats of A per image, so (at 2^16 floats a slice) their forward and
    // backward-data GEMMs run 4 and 2 images at a time, the last slice shorter (col2im by runs,
    // and by planes).
    for (const ConvShape s :
         {ConvShape{3, 3, 7, 5, 10, 3, 1}, ConvShape{2, 16, 8, 8, 4, 3, 1}, ConvShape{6, 16, 12, 12, 8, 3, 0},
          ConvShape{5, 16, 14, 14, 8, 3, 1}, ConvShape{2, 2, 6, 9, 8, 5, 2}, ConvShape{2, 4, 5, 5, 17, 3, 0},
          ConvShape{1, 1, 4, 4, 3, 3, 2}, ConvShape{2, 2, 4, 5, 6, 3, 3}, ConvShape{2, 3, 2, 3, 4, 5, 2},
          ConvShape{3, 5, 3, 4, 7, 1, 0}}) {
        INFO("batch " << s.batch << " C " << s.channels << " " << s.height << "x" << s.width << " filters " << s.filters
                      << " k " << s.kernel << " pad " << s.padding);
        const std::size_t rows = s.rows(), k = s.fan_in(), f = static_cast<std::size_t>(s.filters);
        const std::size_t pixels = rows / s.batch;
        auto layer = make_conv2d(0, s.channels, s.height, s.width, s.filters, s.kernel, s.padding, 5);
        Parameters& p = *layer->parameters();
        for (float& b : p.bias) b = normal(rng);
        Activation in, out, grad_out, grad_in;
        in.reshape(s.batch, s.channels, s.height, s.width);
        // Values over a wide range, so that fp32 sums are inexact and their order shows.
        const auto wide = [&] { return normal(rng) * std::exp2(std::round(normal(rng) * 4)); };
        for (float& v : in.data) v = wide();
        grad_out.reshape(s.batch, s.filters, s.out_height(), s.out_width());
        for (float& v : grad_out.data) v = wide() * 1e-3f;

        {  // a larger batch first: the checked runs below must not depend on buffers it sized
            Activation big_in, big_out, big_grad_out, big_grad_in;
            big_in.reshape(s.batch + 3, s.channels, s.height, s.width);
            for (float& v : big_in.data) v = wide();
            big_grad_out.reshape(s.batch + 3, s.filters, s.out_height(), s.out_width());
            for (float& v : big_grad_out.data) v = wide();
            std::vector<LayerQuantizers> q_big = stochastic_quantizers(8);
            GemmContext big;
            big.quantizers = &q_big;
            layer->forward(big_in, big_out, big);
            layer->backward(big_in, big_out, big_grad_out, &big_grad_in, big);
        }

        // Reference operands in the row-major layouts of the plain lowering.
        std::vector<float> a(rows * k, 0.0f), g(rows * f);
        for (std::size_t r = 0; r < rows; ++r)
            for (std::size_t c = 0; c < k; ++c)
                if (const std::ptrdiff_t from = s.source(r, c); from >= 0)
                    a[r * k + c] = in.data[static_cast<std::size_t>(from)];
        for (std::size_t r = 0; r < rows; ++r)
            for (std::size_t j = 0; j < f; ++j)
                g[r * f + j] = grad_out.data[((r / pixels) * f + j) * pixels + r % pixels];

        for (GemmPath path : {GemmPath::exact, GemmPath::fast}) {
            for (bool bfp : {true, false}) {
                if (!bfp && path == GemmPath::exact) continue;
                INFO((bfp ? "bfp_m8 " : "fp32 ") << to_string(path));
                std::vector<LayerQuantizers> q_layer = stochastic_quantizers(8), q_ref = q_layer;
                GemmContext ctx;
                ctx.path = path;
                ctx.quantizers = bfp ? &q_layer : nullptr;
                layer->forward(in, out, ctx);
                layer->backward(in, out, grad_out, &grad_in, ctx);

                const auto quantizer = [&](Operand o) { return bfp ? q_ref[0].get(o) : nullptr; };
                GemmScratch scratch;
                std::vector<float> y(rows * f), dcols(rows * k), dw(f * k), wt = transposed(p.weights, f, k);
                gemm_abt(path, a.data(), p.weights.data(), rows, f, k, quantizer(Operand::activations_forward),
                         quantizer(Operand::weights_forward), y.data(), scratch);
                gemm_abt(path, g.data(), wt.data(), rows, k, f, quantizer(Operand::gradients_backward),
                         quantizer(Operand::weights_backward), dcols.data(), scratch);
                gemm_abt(path, transposed(g, rows, f).data(), transposed(a, rows, k).data(), f, k, rows,
                         quantizer(Operand::gradients_wgrad), quantizer(Operand::activations_wgrad), dw.data(),
                         scratch);
                std::vector<float> expected_out(out.data.size()), expected_grad_in(in.data.size(), 0.0f), bias(f, 0.0f);
                for (std::size_t r = 0; r < rows; ++r)
                    for (std::size_t j = 0; j < f; ++j) {
                        expected_out[((r / pixels) * f + j) * pixels + r % pixels] = y[r * f + j] + p.bias[j];
                        bias[j] += g[r * f + j];
                    }
                for (std::size_t r = 0; r < rows; ++r)
                    for (std::size_t c = 0; c < k; ++c)
                        if (const std::ptrdiff_t to = s.source(r, c); to >= 0)
                            expected_grad_in[static_cast<std::size_t>(to)] += dcols[r * k + c];

                CHECK(same_bits(p.bias_grad, bias));
                if (path == GemmPath::exact) {  // every product and sum in the same order: the same bits
                    CHECK(same_bits(out.data, expected_out));
                    CHECK(same_bits(p.weight_grad, dw));
                    CHECK(same_bits(grad_in.data, expected_grad_in));
                    // As the first layer (no input gradient): the same weight gradient, and the two
                    // backward-data quantisers untouched.
                    std::vector<LayerQuantizers> q_first = stochastic_quantizers(8);
                    ctx.quantizers = bfp ? &q_first : nullptr;
                    layer->forward(in, out, ctx);
                    layer->backward(in, out, grad_out, nullptr, ctx);
                    CHECK(same_bits(p.weight_grad, dw));
                    CHECK(same_bits(p.bias_grad, bias));
                    const std::vector<LayerQuantizers> fresh = stochastic_quantizers(8);
                    for (Operand o : {Operand::gradients_backward, Operand::weights_backward})
                        CHECK(q_first[0].operands[static_cast<std::size_t>(o)].lfsr().lane(0).state() ==
                              fresh[0].operands[static_cast<std::size_t>(o)].lfsr().lane(0).state());
                } else {  // OpenBLAS may sum the transposed products in another order
                    const auto close = [](const std::vector<float>& got, const std::vector<float>& want) {
                        if (got.size() != want.size()) return false;
                        float scale = 0;
                        for (float v : want) scale = std::max(scale, std::fabs(v));
                        for (std::size_t i = 0; i < want.size(); ++i)
                            if (std::fabs(got[i] - want[i]) > 1e-5f * scale) return false;
                        return true;
                    };
                    CHECK(close(out.data, expected_out));
                    CHECK(close(p.weight_grad, dw));
                    CHECK(close(grad_in.data, expected_grad_in));
                }
                if (bfp)  // and the layer drew each operand's LFSR noise as the reference did
                    for (std::size_t o = 0; o < kOperands; ++o)
                        for (int lane = 0; lane < q_ref[0].operands[o].lfsr().lanes(); ++lane)
                            CHECK(q_layer[0].operands[o].lfsr().lane(lane).state() ==
                                  q_ref[0].operands[o].lfsr().lane(lane).state());
            }
        }
    }
}

TEST_CASE("the fused ReLU and max-pool layer equals ReLU then 2x2 max pooling bit for bit", "[training][pool]") {
    // Windows of special values: all negative, NaN, signed zeros, ties at each position, infinities,
    // subnormals; then random values from a small set, so ties are common. Rows of 3 windows (the
    // scalar loop), 4 (one block of the vector loops), and 5, 6 and 19 (blocks, the last one
    // overlapping the one before by 3, 2 and 1).
    const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
    const float tiny = std::numeric_limits<float>::denorm_min();
    const std::vector<std::array<float, 4>> windows{{-1, -2, -3, -4},    {nan, nan, nan, nan},
                                                    {nan, 1, 2, nan},    {-0.0f, 0.0f, -0.0f, 0.0f},
                                                    {1, 2, 2, 1},        {3, 1, 3, 3},
                                                    {0, 5, 0, 5},        {inf, 1, inf, 2},
                                                    {-inf, -inf, 0, -1}, {tiny, 2 * tiny, tiny, -tiny}};
    std::mt19937_64 rng(8);
    const float pick[] = {-1.0f, -0.0f, 0.0f, 0.5f, 1.0f, 2.0f};
    GemmContext ctx;
    auto fused = make_relu_max_pool2();
    for (const std::size_t width : {6, 8, 10, 12, 38}) {
        INFO("width " << width);
        const std::size_t plane_size = 4 * width, windows_per_row = width / 2;
        Activation in, grad_out;
        in.reshape(2, 3, 4, static_cast<int>(width));  // 2 x 3 planes of 4 x width
        for (std::size_t i = 0; i < in.data.size(); ++i) in.data[i] = pick[rng() % 6];
        for (std::size_t w = 0; w < windows.size(); ++w) {  // the special windows, spread over the vector lanes
            const std::size_t plane = w % 6, wy = (w / 6) % 2, wx = (5 * w) % windows_per_row;
            float* top = &in.data[plane * plane_size + 2 * wy * width + 2 * wx];
            top[0] = windows[w][0];
            top[1] = windows[w][1];
            top[width] = windows[w][2];
            top[width + 1] = windows[w][3];
        }
        grad_out.reshape(2, 3, 2, static_cast<int>(windows_per_row));
        for (std::size_t i = 0; i < grad_out.data.size(); ++i)
            grad_out.data[i] = i % 5 == 0 ? -0.0f : (i % 7 == 0 ? nan : pick[rng() % 6]);

        Activation out, grad_in;
        grad_in.reshape(2, 3, 4, static_cast<int>(width));
        std::fill(grad_in.data.begin(), grad_in.data.end(), 7.0f);  // stale values the backward must overwrite
        fused->forward(in, out, ctx);
        fused->backward(in, out, grad_out, &grad_in, ctx);

        // Reference: the ReLU layer, then pooling where the first strictly greater element wins
        // and the gradient is summed into zeros; then the ReLU's backward.
        auto relu = make_relu();
        Activation r, grad_r, expected_grad_in;
        relu->forward(in, r, ctx);
        std::vector<float> expected_out(out.data.size());
        grad_r.reshape(2, 3, 4, static_cast<int>(width));
        std::fill(grad_r.data.begin(), grad_r.data.end(), 0.0f);
        for (std::size_t plane = 0, o = 0; plane < 6; ++plane)
            for (std::size_t y = 0; y < 2; ++y)
                for (std::size_t x = 0; x < windows_per_row; ++x, ++o) {
                    std::size_t best = plane * plane_size + 2 * y * width + 2 * x;
                    for (std::size_t dy = 0; dy < 2; ++dy)
                        for (std::size_t dx = 0; dx < 2; ++dx) {
                            const std::size_t i = plane * plane_size + (2 * y + dy) * width + 2 * x + dx;
                            if (r.data[i] > r.data[best]) best = i;
                        }
                    expected_out[o] = r.data[best];
                    grad_r.data[best] += grad_out.data[o];
                }
        relu->backward(in, r, grad_r, &expected_grad_in, ctx);
        CHECK(same_bits(out.data, expected_out));
        CHECK(same_bits(grad_in.data, expected_grad_in.data));
    }

    Activation odd, out;
    odd.reshape(1, 1, 3, 4);
    CHECK_THROWS_AS(fused->forward(odd, out, ctx), std::logic_error);
}
