// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/enum_names.h"

namespace fastsim::bfp {

/// How t = |x| / 2^(E-(m-1)) becomes the integer magnitude k (docs/bfp.md §4).
enum class Rounding : std::uint8_t {
    nearest,    ///< floor(t + 1/2): ties away from zero ("add half an LSB, truncate")
    even,       ///< round half to even
    truncate,   ///< floor(t): toward zero
    stochastic  ///< floor(t + r / 2^n), r an n-bit LFSR draw in [0, 2^n - 1]
};

/// What a group whose max exponent exceeds the representable range becomes.
enum class Overflow : std::uint8_t {
    nan,      ///< the whole group is NaN (MX behaviour, the default)
    saturate  ///< E is clamped to the maximum; magnitudes are then capped at 2^m - 1
};

const EnumNames<Rounding, 4>& enum_names(Rounding);
const EnumNames<Overflow, 2>& enum_names(Overflow);
inline std::string_view to_string(Rounding rounding) { return name_of(rounding); }
inline std::string_view to_string(Overflow overflow) { return name_of(overflow); }
inline std::optional<Rounding> parse_rounding(std::string_view name) { return parse_name<Rounding>(name); }
inline std::optional<Overflow> parse_overflow(std::string_view name) { return parse_name<Overflow>(name); }

/// Largest supported shared-exponent field; E8 already spans float32's exponent range.
inline constexpr int kMaxExponentBits = 8;
inline constexpr int kMaxMantissaBits = 16;
/// Group sizes beyond this could overflow the 53-bit exact group product (docs/bfp.md §5).
inline constexpr int kMaxGroupSize = 1 << 16;

/// A block-floating-point format: g values share one exponent E; each element is
/// sign-magnitude, value = (-1)^s * k * 2^(E-(m-1)), 0 <= k <= 2^m - 1.
struct Format {
    int group_size = 16;    ///< g, values per shared exponent, 1..kMaxGroupSize
    int mantissa_bits = 8;  ///< m, magnitude bits including the leading bit, 2..16 (odd m: see chunks)
    int exponent_bits = 8;  ///< e, shared-exponent field width, 2..8
    int exponent_bias = 0;  ///< per-tensor bias: E ranges over bias ± (2^(e-1) - 1)
    Overflow overflow = Overflow::nan;

    /// 2^(e-1) - 1: half-width of the symmetric exponent range.
    [[nodiscard]] int exponent_limit() const { return (1 << (exponent_bits - 1)) - 1; }
    [[nodiscard]] int min_exponent() const { return exponent_bias - exponent_limit(); }
    [[nodiscard]] int max_exponent() const { return exponent_bias + exponent_limit(); }
    [[nodiscard]] std::uint32_t max_magnitude() const { return (1u << mantissa_bits) - 1u; }
    /// Mantissa chunks of 2 bits per element (the fMAC's unit of work): ceil(m/2), so an
    /// odd m (MSFP-12's 3-bit magnitude) leaves the top chunk's upper bit zero.
    [[nodiscard]] int chunks_per_element() const { return (mantissa_bits + 1) / 2; }
    /// FAST memory layout: e + g * ceil(m/2) * 3 bits per group (each 2-bit chunk carries a sign).
    [[nodiscard]] std::uint64_t bits_per_group() const {
        return static_cast<std::uint64_t>(exponent_bits) +
               static_cast<std::uint64_t>(group_size) * static_cast<std::uint64_t>(chunks_per_element()) * 3u;
    }

    friend bool operator==(const Format& a, const Format& b) {
        return a.group_size == b.group_size && a.mantissa_bits == b.mantissa_bits &&
               a.exponent_bits == b.exponent_bits && a.exponent_bias == b.exponent_bias && a.overflow == b.overflow;
    }
};

/// Empty when `format` is usable; otherwise a sentence saying which field is wrong and why.
/// Besides the per-field ranges, the whole grid must be exact in float32:
/// max_exponent() <= 127 and min_exponent() - (m - 1) >= -149.
std::optional<std::string> validate(const Format& format);

/// Stochastic-rounding noise source: n noise bits drawn from a w-bit maximal LFSR.
struct NoiseSpec {
    int noise_bits = 8;      ///< n: noise bits added below the LSB, 1..lfsr_bits
    int lfsr_bits = 16;      ///< w: LFSR width, 2..32
    std::uint64_t seed = 1;  ///< seeds every lane (see LfsrBank)
};

/// Empty when `noise` is usable. Requires n <= w and gcd(n, 2^w - 1) = 1, which makes the
/// n-step draws visit the whole m-sequence, so a full period holds every n-bit window.
std::optional<std::string> validate(const NoiseSpec& noise);

}  // namespace fastsim::bfp
