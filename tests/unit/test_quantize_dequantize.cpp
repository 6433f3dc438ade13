// SPDX-License-Identifier: MIT
// Quantizer::quantize_dequantize (the fast path of BFP training) against its definition,
// dequantize(quantize()): bit for bit, LFSR state included, on values chosen to hit every
// rule (ties, subnormals, zeros of both signs, NaN/Inf, overflow, saturation, ragged tails).
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "bfp/quantize.h"

using namespace fastsim::bfp;

namespace {

std::uint32_t bits_of(float v) {
    std::uint32_t u;
    std::memcpy(&u, &v, sizeof u);
    return u;
}

/// Values of mixed scale: normal, exact ties at several widths, subnormals, signed zeros.
std::vector<float> awkward_values(std::size_t count, std::mt19937_64& rng) {
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::uniform_int_distribution<int> kind(0, 9), exponent(-140, 20), k(0, 1 << 10);
    std::vector<float> x(count);
    for (float& v : x) {
        switch (kind(rng)) {
        case 0: v = 0.0f; break;
        case 1: v = -0.0f; break;
        case 2: v = std::ldexp(static_cast<float>(k(rng)) + 0.5f, exponent(rng) / 8); break;  // ties
        case 3: v = std::numeric_limits<float>::denorm_min() * static_cast<float>(k(rng)); break;
        case 4: v = -std::ldexp(normal(rng), exponent(rng)); break;
        default: v = normal(rng) * std::ldexp(1.0f, exponent(rng) / 10); break;
        }
    }
    return x;
}

void require_same(Quantizer fast, Quantizer reference, const std::vector<float>& x) {
    std::vector<float> out(x.size());
    for (int repeat = 0; repeat < 3; ++repeat) {  // LFSR state must advance identically
        fast.quantize_dequantize(x.data(), x.size(), out.data());
        const std::vector<float> expected = dequantize(reference.quantize(x.data(), x.size()));
        for (std::size_t i = 0; i < x.size(); ++i) {
            INFO("element " << i << " of " << x.size() << ", x = " << x[i] << ", repeat " << repeat);
            REQUIRE(bits_of(out[i]) == bits_of(expected[i]));
        }
    }
    for (int l = 0; l < fast.lfsr().lanes(); ++l)
        REQUIRE(fast.lfsr().lane(l).state() == reference.lfsr().lane(l).state());
}

}  // namespace

TEST_CASE("quantize_dequantize equals dequantize(quantize()) bit for bit", "[bfp][fast_path]") {
    std::mt19937_64 rng(2022);
    const Rounding roundings[] = {Rounding::nearest, Rounding::even, Rounding::truncate, Rounding::stochastic};
    for (int g : {1, 5, 16, 32}) {
        for (int m = 2; m <= 16; ++m) {
            for (Rounding rounding : roundings) {
                Format f;
                f.group_size = g;
                f.mantissa_bits = m;
                const std::vector<float> x = awkward_values(static_cast<std::size_t>(g) * 7 + 3, rng);
                // 8 noise bits (FAST), and the widest the float path takes (24) and beyond it (31).
                for (const NoiseSpec noise : {NoiseSpec{8, 16, 77}, NoiseSpec{24, 29, 5}, NoiseSpec{31, 32, 6}}) {
                    if (rounding != Rounding::stochastic && noise.noise_bits != 8) continue;
                    INFO("g = " << g << ", m = " << m << ", rounding " << to_string(rounding) << ", noise bits "
                                << noise.noise_bits);
                    require_same(Quantizer(f, rounding, noise), Quantizer(f, rounding, noise), x);
                }
            }
        }
    }
}

TEST_CASE("quantize_dequantize keeps each zero's sign in all-zero groups and still draws noise", "[bfp][fast_path]") {
    std::mt19937_64 rng(7);
    std::vector<float> x(16 * 6);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = (rng() & 1) != 0 ? -0.0f : 0.0f;  // groups 0, 2, 3, 5: zeros
    for (std::size_t i = 16; i < 32; ++i) x[i] = static_cast<float>(i) * 0.37f - 5.0f;
    for (std::size_t i = 64; i < 80; ++i) x[i] = std::ldexp(1.0f, -140);  // group 4: subnormal, not zero
    const Rounding roundings[] = {Rounding::nearest, Rounding::even, Rounding::truncate, Rounding::stochastic};
    for (Rounding rounding : roundings) {
        Format f;
        f.mantissa_bits = 4;
        INFO("rounding " << to_string(rounding));
        require_same(Quantizer(f, rounding, NoiseSpec{8, 16, 3}), Quantizer(f, rounding, NoiseSpec{8, 16, 3}), x);
    }
}

TEST_CASE("quantize_dequantize follows overflow, saturation and non-finite groups", "[bfp][fast_path]") {
    std::mt19937_64 rng(7);
    std::vector<float> x = awkward_values(64, rng);
    x[3] = std::numeric_limits<float>::infinity();    // group 0 NaN
    x[17] = std::numeric_limits<float>::quiet_NaN();  // group 1 NaN
    x[40] = 300.0f;                                   // overflows e = 4 (E up to 7)
    x[60] = std::numeric_limits<float>::max();        // far above it: saturation must clamp, not wrap
    for (Overflow overflow : {Overflow::nan, Overflow::saturate}) {
        for (Rounding rounding : {Rounding::nearest, Rounding::even, Rounding::truncate, Rounding::stochastic}) {
            Format f;
            f.group_size = 16;
            f.mantissa_bits = 6;
            f.exponent_bits = 4;
            f.overflow = overflow;
            INFO("overflow " << to_string(overflow) << ", rounding " << to_string(rounding));
            require_same(Quantizer(f, rounding), Quantizer(f, rounding), x);
        }
    }
}

TEST_CASE("set_mantissa_bits changes the width and keeps the LFSR stream", "[bfp][fast_path]") {
    Format f4;
    f4.mantissa_bits = 4;
    Format f8 = f4;
    f8.mantissa_bits = 8;
    std::mt19937_64 rng(3);
    const std::vector<float> x = awkward_values(48, rng);
    Quantizer switched(f4, Rounding::stochastic), reference(f4, Rounding::stochastic);
    (void)switched.quantize(x.data(), x.size());
    (void)reference.quantize(x.data(), x.size());
    switched.set_mantissa_bits(8);
    Quantizer at8(f8, Rounding::stochastic);  // a fresh LFSR: must differ from the continued stream
    const BfpTensor continued = switched.quantize(x.data(), x.size());
    CHECK(continued.format.mantissa_bits == 8);
    CHECK(switched.lfsr().lane(3).state() != at8.lfsr().lane(3).state());
    CHECK_THROWS_AS(switched.set_mantissa_bits(17), std::invalid_argument);
    CHECK(switched.format().mantissa_bits == 8);
}

TEST_CASE("quantize_dequantize at g = 16 matches on ordinary values, every row length", "[bfp][fast_path]") {
    // Values whose groups take the vector kernel (normal maxima, no overflow), with exact ties
    // and zeros mixed in, over row lengths 1..40 so that every short last group is masked.
    std::mt19937_64 rng(16);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::uniform_int_distribution<int> kind(0, 7), scale(-20, 20), k(0, 255);
    const Rounding roundings[] = {Rounding::nearest, Rounding::even, Rounding::truncate, Rounding::stochastic};
    for (int m : {2, 4, 6, 8, 12, 16}) {
        for (Rounding rounding : roundings) {
            Format f;
            f.mantissa_bits = m;
            for (std::size_t count = 1; count <= 40; ++count) {
                std::vector<float> x(count);
                const int group_scale = scale(rng);
                for (float& v : x) {
                    switch (kind(rng)) {
                    case 0: v = (rng() & 1) != 0 ? -0.0f : 0.0f; break;
                    case 1: v = std::ldexp(static_cast<float>(k(rng)) + 0.5f, group_scale - m); break;  // ties
                    default: v = std::ldexp(normal(rng), group_scale); break;
                    }
                }
                INFO("m = " << m << ", rounding " << to_string(rounding) << ", count " << count);
                require_same(Quantizer(f, rounding, NoiseSpec{8, 16, count}),
                             Quantizer(f, rounding, NoiseSpec{8, 16, count}), x);
            }
        }
    }
}

TEST_CASE("quantize_dequantize_rows equals one quantize_dequantize per row", "[bfp][fast_path]") {
    // Rows shorter, equal to and longer than a group, at FAST's g and at another g; the LFSR
    // draws must run on across rows exactly as the row-by-row calls make them.
    std::mt19937_64 rng(9);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (int g : {16, 8}) {
        for (Rounding rounding : {Rounding::nearest, Rounding::stochastic}) {
            for (std::size_t k : {std::size_t{1}, std::size_t{9}, std::size_t{16}, std::size_t{37}}) {
                Format f;
                f.group_size = g;
                f.mantissa_bits = 4;
                const std::size_t rows = 23;
                std::vector<float> x(rows * k);
                for (float& v : x) v = normal(rng);
                Quantizer by_rows(f, rounding, NoiseSpec{7, 16, k}), one_by_one(f, rounding, NoiseSpec{7, 16, k});
                std::vector<float> got(x.size()), expected(x.size());
                by_rows.quantize_dequantize_rows(x.data(), rows, k, got.data());
                for (std::size_t r = 0; r < rows; ++r) one_by_one.quantize_dequantize(&x[r * k], k, &expected[r * k]);
                INFO("g = " << g << ", rounding " << to_string(rounding) << ", k = " << k);
                for (std::size_t i = 0; i < x.size(); ++i) REQUIRE(bits_of(got[i]) == bits_of(expected[i]));
                for (int l = 0; l < g; ++l)
                    REQUIRE(by_rows.lfsr().lane(l).state() == one_by_one.lfsr().lane(l).state());
            }
        }
    }
}
