// SPDX-License-Identifier: MIT
#include "bfp/format.h"

#include <array>
#include <numeric>
#include <utility>

namespace fastsim::bfp {
const EnumNames<Rounding, 4>& enum_names(Rounding) {
    static constexpr EnumNames<Rounding, 4> kNames{{
        {"nearest", Rounding::nearest},
        {"even", Rounding::even},
        {"truncate", Rounding::truncate},
        {"stochastic", Rounding::stochastic},
    }};
    return kNames;
}

const EnumNames<Overflow, 2>& enum_names(Overflow) {
    static constexpr EnumNames<Overflow, 2> kNames{{{"nan", Overflow::nan}, {"saturate", Overflow::saturate}}};
    return kNames;
}

std::optional<std::string> validate(const Format& f) {
    using std::to_string;
    if (f.group_size < 1 || f.group_size > kMaxGroupSize)
        return "group_size must be between 1 and " + to_string(kMaxGroupSize) + ", got " + to_string(f.group_size);
    if (f.mantissa_bits < 2 || f.mantissa_bits > kMaxMantissaBits)
        return "mantissa_bits must be between 2 and 16, got " + to_string(f.mantissa_bits);
    if (f.exponent_bits < 2 || f.exponent_bits > kMaxExponentBits)
        return "exponent_bits must be between 2 and 8, got " + to_string(f.exponent_bits);
    // In 64 bits: the bias is a user's number, and bias + limit must not overflow an int.
    const std::int64_t limit = f.exponent_limit();
    const std::int64_t max_exponent = std::int64_t{f.exponent_bias} + limit;
    const std::int64_t min_lsb = std::int64_t{f.exponent_bias} - limit - (f.mantissa_bits - 1);
    if (max_exponent > 127)
        return "exponent_bias " + to_string(f.exponent_bias) + " puts the largest shared exponent at " +
               to_string(max_exponent) + ", above float32's 127";
    if (min_lsb < -149)
        return "exponent_bias " + to_string(f.exponent_bias) + " puts the smallest LSB at 2^" + to_string(min_lsb) +
               ", below float32's 2^-149";
    return std::nullopt;
}

std::optional<std::string> validate(const NoiseSpec& n) {
    using std::to_string;
    if (n.lfsr_bits < 2 || n.lfsr_bits > 32) return "lfsr_bits must be between 2 and 32, got " + to_string(n.lfsr_bits);
    if (n.noise_bits < 1 || n.noise_bits > n.lfsr_bits)
        return "noise_bits must be between 1 and lfsr_bits (" + to_string(n.lfsr_bits) + "), got " +
               to_string(n.noise_bits);
    const std::uint64_t period = (std::uint64_t{1} << n.lfsr_bits) - 1;
    if (std::gcd(static_cast<std::uint64_t>(n.noise_bits), period) != 1)
        return "noise_bits " + to_string(n.noise_bits) + " shares a factor with the LFSR period 2^" +
               to_string(n.lfsr_bits) + "-1, so draws would not cover the period; pick another lfsr_bits";
    return std::nullopt;
}

}  // namespace fastsim::bfp
