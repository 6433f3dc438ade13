// SPDX-License-Identifier: MIT
// Hand-derived cases for every rule of docs/bfp.md §1-§4, plus a cross-check against an
// independent double-precision formulation of the same rules.
#include <catch2/catch.hpp>

#include <cfenv>
#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "bfp/quantize.h"

using namespace fastsim::bfp;

namespace {

struct Quantised {
    int exponent;
    std::vector<float> values;
};

Quantised quantise(std::vector<float> x, int m, Rounding rounding = Rounding::nearest, int e = 8, int bias = 0,
                   Overflow overflow = Overflow::nan) {
    Format f;
    f.group_size = static_cast<int>(x.size());
    f.mantissa_bits = m;
    f.exponent_bits = e;
    f.exponent_bias = bias;
    f.overflow = overflow;
    Quantizer q(f, rounding);
    const BfpTensor t = q.quantize(x.data(), x.size());
    return {t.exponents[0], dequantize(t)};
}

bool is_negative_zero(float v) { return v == 0.0f && std::signbit(v); }

}  // namespace

TEST_CASE("nearest rounding on a plain group, m=4 e=8", "[bfp][rules]") {
    // max 1.0 -> E = 0, LSB = 2^(0-3) = 1/8; t = 8, 2.4, 4.4, 0.
    const auto q = quantise({1.0f, 0.3f, -0.55f, 0.0f}, 4);
    CHECK(q.exponent == 0);
    CHECK(q.values == std::vector<float>{1.0f, 0.25f, -0.5f, 0.0f});
}

TEST_CASE("ties: nearest goes away from zero, even goes to even, truncate toward zero", "[bfp][rules]") {
    // LSB 1/8: t = 8, 1.5, 2.5, -1.5, 0.5
    const std::vector<float> x{1.0f, 1.5f / 8, 2.5f / 8, -1.5f / 8, 0.5f / 8};
    CHECK(quantise(x, 4, Rounding::nearest).values == std::vector<float>{1.0f, 0.25f, 0.375f, -0.25f, 0.125f});
    CHECK(quantise(x, 4, Rounding::even).values == std::vector<float>{1.0f, 0.25f, 0.25f, -0.25f, 0.0f});
    CHECK(quantise(x, 4, Rounding::truncate).values == std::vector<float>{1.0f, 0.125f, 0.25f, -0.125f, 0.0f});
}

TEST_CASE("the maximum saturates at 2^m - 1 and E never changes", "[bfp][rules]") {
    // m=2: LSB = 0.5, t(1.9) = 3.8 -> 4 -> saturates to 3 -> 1.5.
    const auto q2 = quantise({1.9f, 0.1f}, 2);
    CHECK(q2.exponent == 0);
    CHECK(q2.values == std::vector<float>{1.5f, 0.0f});
    // Just below a power of two: floor(log2) must come from the exponent bits (-1), not a
    // float log2 (which rounds to 0). m=8: LSB 2^-8, t = 255.99998 -> 256 -> 255.
    const float below_one = std::nextafter(1.0f, 0.0f);
    CHECK(floor_log2(below_one) == -1);
    const auto q8 = quantise({below_one, 0.25f}, 8);
    CHECK(q8.exponent == -1);
    CHECK(q8.values == std::vector<float>{255.0f / 256, 0.25f});
}

TEST_CASE("a non-max element rounds up across a power of two", "[bfp][rules]") {
    // LSB 1/8: t(0.24) = 1.92 -> 2 -> 0.25 = 2^-2; t(0.49) = 3.92 -> 4 -> 0.5 = 2^-1.
    const auto q = quantise({1.0f, 0.24f, 0.49f, -0.49f}, 4);
    CHECK(q.exponent == 0);
    CHECK(q.values == std::vector<float>{1.0f, 0.25f, 0.5f, -0.5f});
}

TEST_CASE("the shared exponent is clamped below the range and elements still quantise", "[bfp][rules]") {
    // e=4: E in [-7, 7]. E0 = -9 -> E = -7, m=4: LSB = 2^-10.
    // t = 3, 1, 0.25 -> 0, 0.75 -> 1.
    const float a = std::ldexp(1.5f, -9), b = std::ldexp(1.0f, -10), c = std::ldexp(1.0f, -12),
                d = std::ldexp(1.5f, -11);
    const auto q = quantise({a, b, c, d}, 4, Rounding::nearest, 4);
    CHECK(q.exponent == -7);
    CHECK(q.values == std::vector<float>{a, b, 0.0f, b});
}

TEST_CASE("overflow makes the group NaN by default, or saturates", "[bfp][rules]") {
    // e=4: E0(300) = 8 > 7.
    const auto nan_group = quantise({300.0f, 1.0f}, 4, Rounding::nearest, 4);
    CHECK(nan_group.exponent == kNanExponent);
    CHECK(std::isnan(nan_group.values[0]));
    CHECK(std::isnan(nan_group.values[1]));
    // saturate: E = 7, LSB 16; t(300) = 18.75 -> 19 -> 15 -> 240; t(1) = 0.0625 -> 0.
    const auto saturated = quantise({300.0f, 1.0f}, 4, Rounding::nearest, 4, 0, Overflow::saturate);
    CHECK(saturated.exponent == 7);
    CHECK(saturated.values == std::vector<float>{240.0f, 0.0f});
    // A per-tensor bias moves the range: bias 8 -> E in [1, 15], 300 fits (E = 8).
    const auto biased = quantise({300.0f, 1.0f}, 4, Rounding::nearest, 4, 8);
    CHECK(biased.exponent == 8);
    CHECK(biased.values == std::vector<float>{288.0f, 0.0f});
}

TEST_CASE("all-zero groups give zeros and keep the sign of -0", "[bfp][rules]") {
    const auto q = quantise({0.0f, -0.0f, 0.0f, 0.0f}, 8);
    CHECK(q.exponent == -127);
    CHECK(q.values == std::vector<float>{0.0f, 0.0f, 0.0f, 0.0f});
    CHECK(is_negative_zero(q.values[1]));
    CHECK_FALSE(std::signbit(q.values[0]));
    // A small negative that rounds to zero keeps its sign bit too (sign-magnitude).
    CHECK(is_negative_zero(quantise({1.0f, -0.01f}, 2).values[1]));
}

TEST_CASE("subnormal inputs take their exact exponent", "[bfp][rules]") {
    const float s140 = std::ldexp(1.0f, -140), s149 = std::ldexp(1.0f, -149), three149 = std::ldexp(3.0f, -149);
    CHECK(floor_log2(s140) == -140);
    CHECK(floor_log2(three149) == -148);
    CHECK(floor_log2(s149) == -149);
    // bias -15 with e=8: E in [-142, 112]. E = -140, m=8: LSB 2^-147. t = 128, 0.75 -> 1, 0.25 -> 0.
    const auto q = quantise({s140, three149, s149}, 8, Rounding::nearest, 8, -15);
    CHECK(q.exponent == -140);
    CHECK(q.values == std::vector<float>{s140, std::ldexp(1.0f, -147), 0.0f});
}

TEST_CASE("any NaN or Inf makes the whole group NaN", "[bfp][rules]") {
    const float inf = std::numeric_limits<float>::infinity();
    for (float bad : {std::numeric_limits<float>::quiet_NaN(), inf, -inf}) {
        const auto q = quantise({1.0f, bad, 0.5f}, 8);
        CHECK(q.exponent == kNanExponent);
        for (float v : q.values) CHECK(std::isnan(v));
    }
}

TEST_CASE("mantissa widths 2..8 on one value", "[bfp][rules]") {
    // max 1.0, x = 0.7: k = round(0.7 * 2^(m-1)).
    CHECK(quantise({1.0f, 0.7f}, 2).values[1] == 0.5f);        // 1.4 -> 1
    CHECK(quantise({1.0f, 0.7f}, 4).values[1] == 0.75f);       // 5.6 -> 6
    CHECK(quantise({1.0f, 0.7f}, 6).values[1] == 0.6875f);     // 22.4 -> 22
    CHECK(quantise({1.0f, 0.7f}, 8).values[1] == 0.703125f);   // 89.6 -> 90
    CHECK(quantise({-1.0f, -0.7f}, 6).values[1] == -0.6875f);  // negative: same magnitude
}

TEST_CASE("partial last group is zero-padded and padding does not move the exponent", "[bfp][rules]") {
    Format f;
    f.group_size = 4;
    f.mantissa_bits = 4;
    Quantizer q(f, Rounding::nearest);
    const std::vector<float> x{1.0f, 2.0f, 3.0f, 4.0f, 0.5f, -0.25f};
    const BfpTensor t = q.quantize(x.data(), x.size());
    REQUIRE(t.group_count() == 2);
    CHECK(t.exponents == std::vector<std::int16_t>{2, -1});
    CHECK(dequantize(t) == std::vector<float>{1.0f, 2.0f, 3.0f, 4.0f, 0.5f, -0.25f});
}

TEST_CASE("format validation names the bad field", "[bfp][rules]") {
    Format f;
    f.mantissa_bits = 17;
    REQUIRE(validate(f).has_value());
    CHECK(validate(f)->find("mantissa_bits") != std::string::npos);
    f.mantissa_bits = 8;
    f.exponent_bias = 1;  // E up to 128
    CHECK(validate(f).has_value());
    f.exponent_bias = -16;  // LSB 2^-150
    CHECK(validate(f).has_value());
    f.exponent_bias = -15;
    CHECK_FALSE(validate(f).has_value());
    CHECK_THROWS_AS(Quantizer(f, Rounding::stochastic, NoiseSpec{6, 12, 1}),
                    std::invalid_argument);  // gcd(6, 4095) = 3
}

// The same rules written independently in double precision: |x| * 2^(m-1-E) is exact in
// double for values within 2^-20 of the group max, so floor/nearbyint give the exact answer.
TEST_CASE("quantiser equals a double-precision formulation on random groups", "[bfp][rules]") {
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> mantissa(-1.0, 1.0);
    std::uniform_int_distribution<int> scale(-20, 0), group_exp(-30, 30);
    REQUIRE(std::fegetround() == FE_TONEAREST);
    for (Rounding rounding : {Rounding::nearest, Rounding::even, Rounding::truncate}) {
        for (int m = 2; m <= 16; m += 2) {
            Format f;
            f.mantissa_bits = m;
            Quantizer q(f, rounding);
            for (int trial = 0; trial < 200; ++trial) {
                const int ge = group_exp(rng);
                std::vector<float> x(16);
                for (auto& v : x) v = static_cast<float>(std::ldexp(mantissa(rng), ge + scale(rng)));
                const BfpTensor t = q.quantize(x.data(), x.size());
                double max_abs = 0;
                for (float v : x) max_abs = std::max(max_abs, std::abs(double(v)));
                const int e = static_cast<int>(std::floor(std::log2(max_abs)));
                // log2 may round near powers of two; the exponent-bits value is exact.
                REQUIRE(std::abs(t.exponents[0] - e) <= 1);
                const int exponent = t.exponents[0];
                for (std::size_t i = 0; i < x.size(); ++i) {
                    const double tval = std::ldexp(std::abs(double(x[i])), m - 1 - exponent);
                    double k = rounding == Rounding::nearest ? std::floor(tval + 0.5)
                               : rounding == Rounding::even  ? std::nearbyint(tval)
                                                             : std::floor(tval);
                    k = std::min(k, std::ldexp(1.0, m) - 1);
                    INFO("m=" << m << " x=" << x[i] << " rounding=" << to_string(rounding));
                    REQUIRE(double(t.magnitudes[i]) == k);
                    REQUIRE(bool(t.negative[i]) == std::signbit(x[i]));
                }
            }
        }
    }
}
