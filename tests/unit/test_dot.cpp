// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "bfp/dot.h"

using namespace fastsim::bfp;

// Odd widths (MSFP-12's m = 3) take ceil(m/2) chunks, the top one half used.
TEST_CASE("the fMAC chunk algorithm equals the integer dot product for every width pair", "[bfp][dot]") {
    std::mt19937_64 rng(11);
    for (int ma = 2; ma <= 16; ++ma) {
        for (int mb = 2; mb <= 16; ++mb) {
            for (int g : {1, 5, 16}) {
                std::uniform_int_distribution<int> ka(0, (1 << ma) - 1), kb(0, (1 << mb) - 1), sign(0, 1);
                for (int trial = 0; trial < 50; ++trial) {
                    std::vector<std::uint16_t> mag_a(g), mag_b(g);
                    std::vector<std::uint8_t> neg_a(g), neg_b(g);
                    std::vector<std::int32_t> sa(g), sb(g);
                    for (int l = 0; l < g; ++l) {
                        mag_a[l] = static_cast<std::uint16_t>(trial == 0 ? (1 << ma) - 1 : ka(rng));
                        mag_b[l] = static_cast<std::uint16_t>(trial == 0 ? (1 << mb) - 1 : kb(rng));
                        neg_a[l] = static_cast<std::uint8_t>(sign(rng));
                        neg_b[l] = static_cast<std::uint8_t>(trial == 0 ? neg_a[l] : sign(rng));
                        sa[l] = neg_a[l] ? -mag_a[l] : mag_a[l];
                        sb[l] = neg_b[l] ? -mag_b[l] : mag_b[l];
                    }
                    const ChunkedDot d = dot_chunked(mag_a.data(), neg_a.data(), ma, mag_b.data(), neg_b.data(), mb, g);
                    REQUIRE(d.sum == dot_integer(sa.data(), sb.data(), g));
                    REQUIRE(d.passes == ((ma + 1) / 2) * ((mb + 1) / 2));
                    // The accumulator width bound holds (the all-max trial reaches it).
                    const int bits = group_accumulator_bits(ma, mb, g);
                    REQUIRE(std::abs(d.sum) < (std::int64_t{1} << (bits - 1)));
                }
            }
        }
    }
}

TEST_CASE("a hand-computed chunked dot product", "[bfp][dot]") {
    // 4-bit x 2-bit: 2 passes. a = {+11, -6}, b = {+3, +1}: 33 - 6 = 27.
    const std::uint16_t ma[] = {11, 6}, mb[] = {3, 1};
    const std::uint8_t na[] = {0, 1}, nb[] = {0, 0};
    const ChunkedDot d = dot_chunked(ma, na, 4, mb, nb, 2, 2);
    CHECK(d.passes == 2);
    CHECK(d.sum == 27);
    CHECK(group_accumulator_bits(8, 8, 16) == 21);
}

TEST_CASE("group products round once to float32", "[bfp][dot]") {
    CHECK(group_product_to_float(27, -3) == 3.375f);
    CHECK(group_product_to_float(-5, 0) == -5.0f);
    // 2^24 + 1 is not a float: one rounding to nearest-even gives 2^24.
    CHECK(group_product_to_float((1 << 24) + 1, 0) == 16777216.0f);
    CHECK(group_product_to_float((1 << 24) + 3, 0) == 16777220.0f);
}

namespace {

/// Independent formulation of the reference GEMM on dequantised values: each group's sum
/// of products is exact in double (shared exponents, <= 16-bit mantissas, g <= 64), then
/// rounded to float32 and accumulated in float32 in group order.
std::vector<float> gemm_from_dequantised(const BfpMatrix& a, const BfpMatrix& bt) {
    const auto va = dequantize(a.data), vb = dequantize(bt.data);
    const auto g = static_cast<std::size_t>(a.data.format.group_size);
    std::vector<float> c(a.rows * bt.rows);
    for (std::size_t i = 0; i < a.rows; ++i)
        for (std::size_t j = 0; j < bt.rows; ++j) {
            float acc = 0.0f;
            for (std::size_t q = 0; q < a.groups_per_row; ++q) {
                double s = 0;
                for (std::size_t l = 0; l < g; ++l)
                    s += double(va[(i * a.groups_per_row + q) * g + l]) *
                         double(vb[(j * bt.groups_per_row + q) * g + l]);
                acc += static_cast<float>(s);
            }
            c[i * bt.rows + j] = acc;
        }
    return c;
}

}  // namespace

TEST_CASE("BFP GEMM equals the dequantised formulation bit for bit on ragged shapes", "[bfp][dot]") {
    std::mt19937_64 rng(5);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::uniform_int_distribution<std::size_t> dim(1, 70);
    for (int ma : {2, 4, 6, 8}) {
        for (int mb : {2, 4, 6, 8}) {
            const std::size_t m = dim(rng), k = dim(rng), n = dim(rng);
            std::vector<float> a(m * k), b(k * n);
            for (auto& v : a) v = normal(rng);
            for (auto& v : b) v = normal(rng) * 0.01f;
            Format fa, fb;
            fa.mantissa_bits = ma;
            fb.mantissa_bits = mb;
            Quantizer qa(fa, Rounding::nearest), qb(fb, Rounding::stochastic);
            const BfpMatrix bq_a = quantize_rows(a.data(), m, k, k, 1, qa);
            const BfpMatrix bq_b = quantize_rows(b.data(), n, k, 1, n, qb);
            INFO("ma=" << ma << " mb=" << mb << " shape " << m << "x" << k << "x" << n);
            const auto c = gemm(bq_a, bq_b);
            REQUIRE(c == gemm_from_dequantised(bq_a, bq_b));
            // And the result is close to the fp32 product (a sanity bound, not the contract).
            double worst = 0, scale = 0;
            for (std::size_t i = 0; i < m; ++i)
                for (std::size_t j = 0; j < n; ++j) {
                    double exact = 0, mag = 0;
                    for (std::size_t p = 0; p < k; ++p) {
                        exact += double(a[i * k + p]) * b[p * n + j];
                        mag += std::abs(double(a[i * k + p]) * b[p * n + j]);
                    }
                    worst = std::max(worst, std::abs(c[i * n + j] - exact));
                    scale = std::max(scale, mag);
                }
            CHECK(worst <= scale * (std::ldexp(1.0, 2 - ma) + std::ldexp(1.0, 2 - mb)));
        }
    }
}

TEST_CASE("a NaN group poisons only the outputs that use it", "[bfp][dot]") {
    Format f;
    f.group_size = 2;
    Quantizer q(f, Rounding::nearest);
    const std::vector<float> a{1, 2, std::numeric_limits<float>::infinity(), 1};  // 2 x 2
    const std::vector<float> b{1, 0, 0, 1};                                       // identity
    const auto c = gemm(a.data(), b.data(), 2, 2, 2, q, q);
    CHECK(c[0] == 1.0f);
    CHECK(c[1] == 2.0f);
    CHECK(std::isnan(c[2]));
    CHECK(std::isnan(c[3]));
}
