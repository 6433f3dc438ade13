// SPDX-License-Identifier: MIT
#include "bfp/lfsr.h"

#include <array>
#include <cassert>
#include <initializer_list>

namespace fastsim::bfp {
namespace {

/// Tap positions (1-based, the width itself first) of maximal-length polynomials,
/// Xilinx XAPP052 Table 3, for widths 2..32.
const std::array<std::initializer_list<int>, 33> kTapPositions{{
    {},
    {},
    {2, 1},
    {3, 2},
    {4, 3},
    {5, 3},
    {6, 5},
    {7, 6},
    {8, 6, 5, 4},
    {9, 5},
    {10, 7},
    {11, 9},
    {12, 6, 4, 1},
    {13, 4, 3, 1},
    {14, 5, 3, 1},
    {15, 14},
    {16, 15, 13, 4},
    {17, 14},
    {18, 11},
    {19, 6, 2, 1},
    {20, 17},
    {21, 19},
    {22, 21},
    {23, 18},
    {24, 23, 22, 17},
    {25, 22},
    {26, 6, 2, 1},
    {27, 5, 2, 1},
    {28, 25},
    {29, 27},
    {30, 6, 4, 1},
    {31, 28},
    {32, 22, 2, 1},
}};

std::uint32_t width_mask(int width_bits) { return width_bits == 32 ? 0xFFFFFFFFu : (1u << width_bits) - 1u; }

}  // namespace

std::uint32_t Lfsr::taps(int width_bits) {
    assert(width_bits >= 2 && width_bits <= 32);
    std::uint32_t mask = 0;
    for (const int tap : kTapPositions[static_cast<std::size_t>(width_bits)]) mask |= 1u << (tap - 1);
    return mask;
}

Lfsr::Lfsr(int width_bits, std::uint32_t state)
    : m_state(state & width_mask(width_bits)), m_taps(taps(width_bits)), m_width_bits(width_bits) {
    if (m_state == 0) m_state = 1;
}

std::uint64_t splitmix64(std::uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

LfsrBank::LfsrBank(int width_bits, std::uint64_t seed, int lanes)
    : m_taps(Lfsr::taps(width_bits)), m_width_bits(width_bits) {
    m_states.reserve(static_cast<std::size_t>(lanes));
    for (int l = 0; l < lanes; ++l) {
        const std::uint64_t mixed = splitmix64(seed + static_cast<std::uint64_t>(l + 1) * 0x9E3779B97F4A7C15ull);
        m_states.push_back(Lfsr(width_bits, static_cast<std::uint32_t>(mixed)).state());  // masked, never 0
    }
}

const LfsrBank::Leap& LfsrBank::leap(int n) {
    for (const Leap& l : m_leaps)
        if (l.n == n) return l;
    Leap l;
    l.n = n;
    const int bytes = (m_width_bits + 7) / 8;
    for (int b = 0; b < bytes; ++b)
        for (std::uint32_t v = 0; v < 256; ++v) {
            // The linear map applied to a basis-combination state (0 allowed: it maps to 0).
            std::uint32_t state = (v << (8 * b)) & static_cast<std::uint32_t>(Lfsr::period(m_width_bits));
            std::uint32_t bits = 0;
            for (int i = 0; i < n; ++i) {
                const std::uint32_t out = state & 1u;
                state = (state >> 1) ^ (m_taps & (0u - out));
                bits = (bits << 1) | out;
            }
            l.table[static_cast<std::size_t>(b)][v] = (std::uint64_t{state} << 32) | bits;
        }
    m_leaps.push_back(l);
    return m_leaps.back();
}

void LfsrBank::draw_lanes(int n, int count, std::uint32_t* out) {
    const Leap& l = leap(n);
    std::uint32_t* states = m_states.data();
    if (m_width_bits <= 16) {
        for (int i = 0; i < count; ++i) {
            const std::uint32_t s = states[i];
            const std::uint64_t r = l.table[0][s & 255u] ^ l.table[1][(s >> 8) & 255u];
            states[i] = static_cast<std::uint32_t>(r >> 32);
            out[i] = static_cast<std::uint32_t>(r);
        }
        return;
    }
    for (int i = 0; i < count; ++i) {
        const std::uint32_t s = states[i];
        const std::uint64_t r =
            l.table[0][s & 255u] ^ l.table[1][(s >> 8) & 255u] ^ l.table[2][(s >> 16) & 255u] ^ l.table[3][s >> 24];
        states[i] = static_cast<std::uint32_t>(r >> 32);
        out[i] = static_cast<std::uint32_t>(r);
    }
}

}  // namespace fastsim::bfp
