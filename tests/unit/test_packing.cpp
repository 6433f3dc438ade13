// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <random>
#include <vector>

#include "bfp/packing.h"

using namespace fastsim::bfp;

TEST_CASE("packing a hand-built group gives the documented bits", "[bfp][packing]") {
    // g=2, m=4, e=4: E = 1 -> field 1 - (-7) = 8. Elements +11 = 0b10'11 and -6 = -0b01'10.
    // Chunk 0 (most significant) then chunk 1, element by element: 010, 101, 011, 110.
    BfpTensor t;
    t.format.group_size = 2;
    t.format.mantissa_bits = 4;
    t.format.exponent_bits = 4;
    t.size = 2;
    t.exponents = {1};
    t.magnitudes = {11, 6};
    t.negative = {0, 1};
    const PackedTensor p = pack(t);
    CHECK(p.exponent_plane_bits == 4);
    CHECK(p.mantissa_plane_bits == 12);
    CHECK(p.total_bits() == t.format.bits_per_group());
    CHECK(p.exponent_plane == std::vector<std::uint64_t>{8});
    CHECK(p.mantissa_plane == std::vector<std::uint64_t>{0b110'011'101'010});
    CHECK(unpack(p) == t);
}

TEST_CASE("a NaN group stores the all-ones exponent field and zero mantissas", "[bfp][packing]") {
    Format f;
    f.group_size = 2;
    f.mantissa_bits = 2;
    f.exponent_bits = 4;
    Quantizer q(f, Rounding::nearest);
    const std::vector<float> x{1.0f, std::nanf(""), 0.5f, 0.25f};
    const PackedTensor p = pack(q.quantize(x.data(), x.size()));
    CHECK((p.exponent_plane[0] & 0xF) == 0xF);       // group 0: NaN
    CHECK(((p.exponent_plane[0] >> 4) & 0xF) == 6);  // group 1: E = -1, field -1 - (-7)
    CHECK((p.mantissa_plane[0] & 0x3F) == 0);        // group 0's two 3-bit fields
}

TEST_CASE("bits per group follow e + g (m/2) 3", "[bfp][packing]") {
    Format f;
    f.group_size = 16;
    f.exponent_bits = 8;
    for (int m = 2; m <= 16; m += 2) {
        f.mantissa_bits = m;
        CHECK(f.bits_per_group() == static_cast<std::uint64_t>(8 + 16 * (m / 2) * 3));
    }
    f.mantissa_bits = 4;
    f.exponent_bits = 4;
    CHECK(f.bits_per_group() == 4 + 16 * 2 * 3);  // FAST's 4-bit exponent: 100 bits for 16 values
}

TEST_CASE("pack/unpack round-trips random tensors with NaN groups, -0 and padding", "[bfp][packing]") {
    std::mt19937_64 rng(3);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    for (int m = 2; m <= 16; ++m) {  // odd m: ceil(m/2) chunks, the top one half used
        for (int e : {4, 8}) {
            for (int g : {1, 3, 16, 32}) {
                Format f;
                f.group_size = g;
                f.mantissa_bits = m;
                f.exponent_bits = e;
                Quantizer q(f, Rounding::stochastic, NoiseSpec{8, 16, 9});
                std::vector<float> x(257);
                for (auto& v : x) v = normal(rng) * (e == 4 ? 1.0f : 1e-3f);
                x[5] = std::numeric_limits<float>::quiet_NaN();
                x[7] = -0.0f;
                x[100] = 1e30f;  // overflows with e = 4 -> NaN group
                const BfpTensor t = q.quantize(x.data(), x.size());
                const PackedTensor p = pack(t);
                INFO("m=" << m << " e=" << e << " g=" << g);
                CHECK(p.total_bits() == t.group_count() * f.bits_per_group());
                CHECK(p.exponent_plane.size() == (p.exponent_plane_bits + 63) / 64);
                CHECK(p.mantissa_plane.size() == (p.mantissa_plane_bits + 63) / 64);
                CHECK(unpack(p) == t);
            }
        }
    }
}
