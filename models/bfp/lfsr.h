// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <cstdint>
#include <vector>

namespace fastsim::bfp {

/// Maximal-length Galois LFSR, 2..32 bits wide, shifting right.
///
/// One step: out = state & 1; state >>= 1; if (out) state ^= taps(width). The feedback
/// polynomials are the maximal ones of Xilinx XAPP052 (table in lfsr.cpp and docs/bfp.md);
/// tests/unit/test_lfsr.cpp proves each has period 2^w - 1 from the step map itself.
/// The state is never 0, so a w-bit draw is never 0 either.
class Lfsr {
public:
    /// `state` is masked to `width_bits`; a masked value of 0 becomes 1.
    Lfsr(int width_bits, std::uint32_t state);

    /// Advances one step and returns the bit shifted out.
    std::uint32_t step() {
        const std::uint32_t out = m_state & 1u;
        m_state = (m_state >> 1) ^ (m_taps & (0u - out));
        return out;
    }

    /// Advances n steps (1 <= n <= 32) and returns the n output bits, first one in the MSB:
    /// consecutive draws read disjoint windows of the m-sequence.
    std::uint32_t draw(int n) {
        std::uint32_t bits = 0;
        for (int i = 0; i < n; ++i) bits = (bits << 1) | step();
        return bits;
    }

    [[nodiscard]] std::uint32_t state() const { return m_state; }
    [[nodiscard]] int width_bits() const { return m_width_bits; }
    /// Galois feedback mask for a width: bit (t-1) set for every tap t of the polynomial.
    static std::uint32_t taps(int width_bits);
    /// 2^w - 1 steps.
    static std::uint64_t period(int width_bits) { return (std::uint64_t{1} << width_bits) - 1; }

private:
    std::uint32_t m_state;
    std::uint32_t m_taps;
    int m_width_bits;
};

/// One LFSR per converter lane, so lanes round independently.
///
/// Lane l starts at splitmix64(seed + (l + 1) * 0x9E3779B97F4A7C15) masked to w bits
/// (0 becomes 1). Element j of every group uses lane j mod lanes, in the order the
/// elements are converted.
class LfsrBank {
public:
    LfsrBank(int width_bits, std::uint64_t seed, int lanes);

    /// n-bit noise for `lane`, advancing that lane only (the Lfsr::draw of its state).
    std::uint32_t draw(int lane, int n) {
        std::uint32_t& state = m_states[static_cast<std::size_t>(lane)];
        std::uint32_t bits = 0;
        for (int i = 0; i < n; ++i) {
            const std::uint32_t out = state & 1u;
            state = (state >> 1) ^ (m_taps & (0u - out));
            bits = (bits << 1) | out;
        }
        return bits;
    }
    /// out[l] = draw(l, n) for l = 0 .. count-1 (count <= lanes()). n steps of the LFSR are a
    /// linear map over GF(2) of the state, and so are the n bits shifted out: they are
    /// applied at once (leap-forward), as the XOR of one table entry per byte of the state.
    void draw_lanes(int n, int count, std::uint32_t* out);
    [[nodiscard]] int lanes() const { return static_cast<int>(m_states.size()); }
    /// Lane l's generator as it stands (a copy).
    [[nodiscard]] Lfsr lane(int l) const { return Lfsr(m_width_bits, m_states[static_cast<std::size_t>(l)]); }

private:
    /// For n steps: entry [b][v] = (the state after n steps << 32 | the n bits out) from the
    /// state whose byte b is v and whose other bytes are 0.
    struct Leap {
        int n = 0;
        std::array<std::array<std::uint64_t, 256>, 4> table{};
    };
    const Leap& leap(int n);

    std::vector<std::uint32_t> m_states;
    std::uint32_t m_taps;
    int m_width_bits;
    std::vector<Leap> m_leaps;  ///< built on first use, one per n
};

/// SplitMix64 finaliser (Steele et al. 2014): the project's seed mixer.
std::uint64_t splitmix64(std::uint64_t x);

}  // namespace fastsim::bfp
