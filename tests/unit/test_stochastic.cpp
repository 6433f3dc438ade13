// SPDX-License-Identifier: MIT
// Stochastic rounding: exact counts over a full LFSR period, bias bound, grid stability,
// sign symmetry, unbiased dot products, and lanes that do not round together.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "bfp/dot.h"
#include "bfp/quantize.h"

using namespace fastsim::bfp;

namespace {

Format single_lane(int m) {
    Format f;
    f.group_size = 1;
    f.mantissa_bits = m;
    return f;
}

/// Quantises x `draws` times with one lane (g = 1) and counts round-ups above floor(t).
std::uint64_t count_round_ups(float x, int m, const NoiseSpec& noise, std::uint64_t draws) {
    Quantizer q(single_lane(m), Rounding::stochastic, noise);
    const float lsb = std::ldexp(1.0f, floor_log2(x) - (m - 1));
    const auto floor_k = static_cast<std::uint32_t>(std::floor(x / lsb));
    std::uint64_t ups = 0;
    for (std::uint64_t i = 0; i < draws; ++i) {
        std::int16_t e;
        std::uint16_t k;
        std::uint8_t s;
        q.quantize_group(&x, 1, e, &k, &s);
        ups += k > floor_k;
    }
    return ups;
}

}  // namespace

// m = 8, x = 1 + j * 2^-15 has t = 128 + j / 256. A period of P = 2^w - 1 draws holds every
// nonzero 8-bit window 2^(w-8) times (zero one time fewer), so exactly j * 2^(w-8) draws
// reach r >= 256 - j: the ideal count j * P / 256 rounded up.
TEST_CASE("over one full LFSR period the round-up count is exact for every sub-LSB fraction", "[bfp][stochastic]") {
    for (int w : {8, 11, 16}) {
        const NoiseSpec noise{8, w, 99};
        const std::uint64_t period = (std::uint64_t{1} << w) - 1;
        const int step = w == 16 ? 17 : 1;  // keep the w = 16 case quick: every 17th fraction
        for (int j = 0; j < 256; j += step) {
            const float x = 1.0f + std::ldexp(static_cast<float>(j), -15);
            const std::uint64_t expected = static_cast<std::uint64_t>(j) << (w - 8);
            INFO("w=" << w << " j=" << j);
            REQUIRE(count_round_ups(x, 8, noise, period) == expected);
            // |bias| of the mean rounded value, in LSBs: j * 2^(w-8) / P - j / 256 <= 2^-8.
            const double bias = double(expected) / double(period) - j / 256.0;
            CHECK(std::abs(bias) <= 1.0 / 256);
        }
    }
}

TEST_CASE("bits below the noise width are truncated before the noise is added", "[bfp][stochastic]") {
    // t = 128 + (37 + 1/2) / 256 rounds up exactly as often as t = 128 + 37/256.
    const NoiseSpec noise{8, 8, 3};
    const float x = 1.0f + std::ldexp(37.5f, -15);
    CHECK(count_round_ups(x, 8, noise, 255) == 37);
}

TEST_CASE("values on the grid never move under stochastic rounding", "[bfp][stochastic]") {
    Format f;
    f.group_size = 4;
    f.mantissa_bits = 4;
    Quantizer q(f, Rounding::stochastic, NoiseSpec{8, 16, 5});
    const std::vector<float> x{1.0f, 0.375f, -0.875f, 0.125f};  // multiples of LSB 1/8
    for (int i = 0; i < 1000; ++i) CHECK(dequantize(q.quantize(x.data(), x.size())) == x);
}

TEST_CASE("SR(-x) = -SR(x) under the same noise", "[bfp][stochastic]") {
    Format f;
    f.mantissa_bits = 4;
    Quantizer pos(f, Rounding::stochastic, NoiseSpec{8, 16, 11});
    Quantizer neg(f, Rounding::stochastic, NoiseSpec{8, 16, 11});
    std::vector<float> x(16);
    std::uint64_t state = 1;
    for (int trial = 0; trial < 500; ++trial) {
        for (auto& v : x) {
            state = splitmix64(state);
            v = static_cast<float>(std::ldexp(double(state >> 11) / double(1ull << 53) - 0.5, int(state % 7) - 3));
        }
        std::vector<float> minus(x.size());
        for (std::size_t i = 0; i < x.size(); ++i) minus[i] = -x[i];
        const auto a = dequantize(pos.quantize(x.data(), x.size()));
        const auto b = dequantize(neg.quantize(minus.data(), minus.size()));
        for (std::size_t i = 0; i < x.size(); ++i) REQUIRE(b[i] == -a[i]);
    }
}

// a = {1.0, 15 x (0.4375 / 2 = 7/32)} at m = 2: LSB 1/2, each small element has t = 0.4375,
// which round-to-nearest always sends to 0 (bias -0.21875 per element) while SR keeps the
// expectation (noise bits hold 0.4375 exactly). b = all ones on its grid.
TEST_CASE("mean of SR dot products is unbiased, round-to-nearest is not", "[bfp][stochastic]") {
    constexpr std::size_t g = 16;
    Format fa;
    fa.mantissa_bits = 2;
    std::vector<float> a(g, 7.0f / 32), b(g, 1.0f);
    a[0] = 1.0f;
    const double exact = 1.0 + 15 * 7.0 / 32;

    Quantizer sr(fa, Rounding::stochastic, NoiseSpec{8, 16, 2024});
    Quantizer rn(fa, Rounding::nearest);
    Quantizer qb(fa, Rounding::nearest);
    const BfpMatrix bt = quantize_rows(b.data(), 1, g, g, 1, qb);

    constexpr int trials = 20000;
    double sum = 0, sum_sq = 0;
    for (int t = 0; t < trials; ++t) {
        const double c = gemm(quantize_rows(a.data(), 1, g, g, 1, sr), bt)[0];
        sum += c;
        sum_sq += c * c;
    }
    const double mean = sum / trials;
    const double sigma = std::sqrt((sum_sq / trials - mean * mean) / trials);
    INFO("SR mean " << mean << " exact " << exact << " sigma of mean " << sigma);
    CHECK(sigma > 0);
    CHECK(std::abs(mean - exact) <= 5 * sigma + 15 * 0.5 / 256);  // 5 sigma + the 2^-n LSB bias bound

    const double nearest = gemm(quantize_rows(a.data(), 1, g, g, 1, rn), bt)[0];
    CHECK(nearest == 1.0);  // every 7/32 rounds to 0
    CHECK(std::abs(nearest - exact) > 100 * sigma);
}

// Every element of every group sits exactly half-way (t = 0.5 + integer), so each lane
// rounds up with probability 1/2; with one LFSR per lane the decisions are uncorrelated.
TEST_CASE("lanes of one converter do not round in correlated ways", "[bfp][stochastic]") {
    constexpr int g = 16, groups = 20000;
    Format f;
    f.mantissa_bits = 4;
    Quantizer q(f, Rounding::stochastic, NoiseSpec{8, 16, 77});
    std::vector<float> x(g, 0.5f / 8 + 0.25f);  // LSB 1/8 (max 1.0): t = 2.5
    x[0] = 1.0f + 0.5f / 8;                     // t = 8.5 for the max, still below saturation
    std::vector<std::vector<double>> up(g, std::vector<double>(groups));
    for (int n = 0; n < groups; ++n) {
        const BfpTensor t = q.quantize(x.data(), x.size());
        for (int l = 0; l < g; ++l) up[l][n] = t.magnitudes[l] > (l == 0 ? 8 : 2) ? 1.0 : 0.0;
    }
    const auto mean = [&](int l) {
        double s = 0;
        for (double v : up[l]) s += v;
        return s / groups;
    };
    const double bound = 5.0 / std::sqrt(double(groups));
    double worst = 0;
    for (int l = 0; l < g; ++l) {
        const double ml = mean(l);
        CHECK(std::abs(ml - 0.5) < bound);
        for (int k = l + 1; k < g; ++k) {
            const double mk = mean(k);
            double cov = 0, vl = 0, vk = 0;
            for (int n = 0; n < groups; ++n) {
                cov += (up[l][n] - ml) * (up[k][n] - mk);
                vl += (up[l][n] - ml) * (up[l][n] - ml);
                vk += (up[k][n] - mk) * (up[k][n] - mk);
            }
            worst = std::max(worst, std::abs(cov / std::sqrt(vl * vk)));
        }
    }
    INFO("worst |rho| between lanes " << worst << ", bound " << bound);
    CHECK(worst < bound);
}

TEST_CASE("every lane draws once per converted group, whatever the group holds", "[bfp][stochastic]") {
    Format f;
    f.group_size = 4;
    f.mantissa_bits = 2;
    f.exponent_bits = 4;
    Quantizer a(f, Rounding::stochastic, NoiseSpec{8, 16, 21}), b(f, Rounding::stochastic, NoiseSpec{8, 16, 21});
    const std::vector<float> zeros(4, 0.0f), nan_group{1.0f, std::nanf(""), 0.0f, 0.0f}, busy{0.3f, -0.7f, 0.11f, 0.9f};
    a.quantize(zeros.data(), 4);                              // all-zero group
    b.quantize(nan_group.data(), 4);                          // NaN group
    const std::vector<float> big{1000.0f, 1.0f, 1.0f, 1.0f};  // overflows e = 4 -> NaN group
    a.quantize(big.data(), 4);
    b.quantize(busy.data(), 4);
    for (int l = 0; l < 4; ++l) CHECK(a.lfsr().lane(l).state() == b.lfsr().lane(l).state());
    // Nearest never draws.
    Quantizer n(f, Rounding::nearest, NoiseSpec{8, 16, 21});
    const std::uint32_t before = n.lfsr().lane(0).state();
    n.quantize(busy.data(), 4);
    CHECK(n.lfsr().lane(0).state() == before);
}

TEST_CASE("quantize_rows converts groups row by row, columns in order", "[bfp][stochastic]") {
    // A 3 x 40 matrix (3 groups of 16 per row, the last partial) read through the strided view
    // of its transpose: the draw order must be row-major over (row, group) of the view.
    Format f;
    f.mantissa_bits = 2;
    std::vector<float> b(40 * 3);
    std::uint64_t state = 5;
    for (auto& v : b) {
        state = splitmix64(state);
        v = static_cast<float>(double(state >> 11) / double(1ull << 53) - 0.5);
    }
    Quantizer by_matrix(f, Rounding::stochastic, NoiseSpec{8, 16, 8});
    const BfpMatrix m = quantize_rows(b.data(), 3, 40, 1, 3, by_matrix);  // rows = columns of b
    Quantizer by_group(f, Rounding::stochastic, NoiseSpec{8, 16, 8});
    for (std::size_t r = 0; r < 3; ++r)
        for (std::size_t q = 0; q < 3; ++q) {
            float group[16];
            const std::size_t count = std::min<std::size_t>(16, 40 - q * 16);
            for (std::size_t j = 0; j < count; ++j) group[j] = b[(q * 16 + j) * 3 + r];
            std::int16_t e;
            std::uint16_t mag[16];
            std::uint8_t neg[16];
            by_group.quantize_group(group, count, e, mag, neg);
            const std::size_t g = r * 3 + q;
            REQUIRE(m.data.exponents[g] == e);
            for (std::size_t j = 0; j < 16; ++j) REQUIRE(m.data.magnitudes[g * 16 + j] == mag[j]);
        }
}
