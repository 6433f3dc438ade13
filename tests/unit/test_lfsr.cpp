// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include <array>
#include <cstdint>
#include <vector>

#include "bfp/lfsr.h"

using namespace fastsim::bfp;

namespace {

/// A w x w matrix over GF(2), column c = image of basis vector e_c.
using Gf2Matrix = std::array<std::uint32_t, 32>;

std::uint32_t apply(const Gf2Matrix& m, std::uint32_t v, int w) {
    std::uint32_t out = 0;
    for (int c = 0; c < w; ++c)
        if ((v >> c) & 1u) out ^= m[static_cast<std::size_t>(c)];
    return out;
}

Gf2Matrix multiply(const Gf2Matrix& a, const Gf2Matrix& b, int w) {
    Gf2Matrix out{};
    for (int c = 0; c < w; ++c) out[static_cast<std::size_t>(c)] = apply(a, b[static_cast<std::size_t>(c)], w);
    return out;
}

Gf2Matrix power(Gf2Matrix base, std::uint64_t exponent, int w) {
    Gf2Matrix result{};
    for (int c = 0; c < w; ++c) result[static_cast<std::size_t>(c)] = 1u << c;
    while (exponent) {
        if (exponent & 1u) result = multiply(result, base, w);
        base = multiply(base, base, w);
        exponent >>= 1;
    }
    return result;
}

bool is_identity(const Gf2Matrix& m, int w) {
    for (int c = 0; c < w; ++c)
        if (m[static_cast<std::size_t>(c)] != (1u << c)) return false;
    return true;
}

std::vector<std::uint64_t> prime_factors(std::uint64_t n) {
    std::vector<std::uint64_t> out;
    for (std::uint64_t p = 2; p * p <= n; ++p) {
        if (n % p == 0) out.push_back(p);
        while (n % p == 0) n /= p;
    }
    if (n > 1) out.push_back(n);
    return out;
}

}  // namespace

// The step is linear over GF(2); its matrix T has order exactly 2^w - 1 iff the LFSR is
// maximal: T^(2^w-1) = I and T^((2^w-1)/p) != I for every prime p dividing 2^w - 1.
TEST_CASE("every LFSR width 2..32 is maximal-length (order of the step matrix)", "[lfsr]") {
    for (int w = 2; w <= 32; ++w) {
        Gf2Matrix step{};
        for (int c = 0; c < w; ++c) {
            Lfsr basis(w, 1u << c);
            basis.step();
            step[static_cast<std::size_t>(c)] = basis.state();
        }
        const std::uint64_t period = Lfsr::period(w);
        INFO("width " << w);
        CHECK(is_identity(power(step, period, w), w));
        for (std::uint64_t p : prime_factors(period)) CHECK_FALSE(is_identity(power(step, period / p, w), w));
    }
}

TEST_CASE("LFSR widths up to 20 return to their seed after exactly 2^w - 1 steps", "[lfsr]") {
    for (int w = 2; w <= 20; ++w) {
        Lfsr lfsr(w, 0x5A5A5A5Au);
        const std::uint32_t start = lfsr.state();
        std::uint64_t steps = 0;
        do {
            lfsr.step();
            ++steps;
        } while (lfsr.state() != start && steps <= Lfsr::period(w));
        CHECK(steps == Lfsr::period(w));
    }
}

TEST_CASE("the zero state is never used and draws read disjoint windows", "[lfsr]") {
    Lfsr zero(8, 0x100);  // masks to 0 -> 1
    CHECK(zero.state() == 1);
    Lfsr a(16, 0xACE1), b(16, 0xACE1);
    const std::uint32_t draw = a.draw(8);
    std::uint32_t bits = 0;
    for (int i = 0; i < 8; ++i) bits = (bits << 1) | b.step();
    CHECK(draw == bits);
    CHECK(a.state() == b.state());
}

TEST_CASE("bank lanes start from distinct seeded states", "[lfsr]") {
    LfsrBank bank(16, 42, 16), same(16, 42, 16), other(16, 43, 16);
    for (int l = 0; l < 16; ++l) {
        CHECK(bank.lane(l).state() == same.lane(l).state());
        for (int k = l + 1; k < 16; ++k) CHECK(bank.lane(l).state() != bank.lane(k).state());
    }
    int differ = 0;
    for (int l = 0; l < 16; ++l) differ += bank.lane(l).state() != other.lane(l).state();
    CHECK(differ >= 15);
}

TEST_CASE("leap-forward draws of a bank equal stepping each lane n times", "[lfsr]") {
    // draw_lanes applies n steps at once from tables; Lfsr::draw steps one at a time.
    for (const int width : {2, 7, 8, 9, 16, 17, 24, 31, 32})
        for (const int n : {1, 3, 8, 13, 32}) {
            fastsim::bfp::LfsrBank bank(width, 12345u + static_cast<std::uint64_t>(width), 16);
            std::vector<fastsim::bfp::Lfsr> reference;
            for (int l = 0; l < 16; ++l) reference.push_back(bank.lane(l));
            std::vector<std::uint32_t> out(16);
            for (int round = 0; round < 50; ++round) {
                const int count = 1 + round % 16;  // some rounds use fewer lanes
                bank.draw_lanes(n, count, out.data());
                for (int l = 0; l < count; ++l) {
                    INFO("width " << width << ", n " << n << ", round " << round << ", lane " << l);
                    REQUIRE(out[static_cast<std::size_t>(l)] == reference[static_cast<std::size_t>(l)].draw(n));
                    REQUIRE(bank.lane(l).state() == reference[static_cast<std::size_t>(l)].state());
                }
            }
        }
}
