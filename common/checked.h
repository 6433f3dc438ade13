// SPDX-License-Identifier: MIT
#pragma once

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

namespace fastsim {

/// A size, count or time that does not fit the 64-bit integer it is counted in (GEMM
/// dimensions, MACs, bits, cycles, picoseconds). The input asked for more than the
/// simulator can count: models throw it, and the run layer turns it into a UserError that
/// names the layer and the config key.
class SizeOverflow : public std::overflow_error {
public:
    explicit SizeOverflow(const char* quantity)
        : std::overflow_error(std::string(quantity) + " overflows 64 bits"), m_quantity(quantity) {}
    /// What overflowed, e.g. "MACs of a phase".
    [[nodiscard]] const char* quantity() const { return m_quantity; }

private:
    const char* m_quantity;
};

/// a * b; SizeOverflow naming `quantity` if the product does not fit 64 bits.
[[nodiscard]] inline std::uint64_t checked_mul(std::uint64_t a, std::uint64_t b, const char* quantity) {
    std::uint64_t product = 0;
    if (__builtin_mul_overflow(a, b, &product)) throw SizeOverflow(quantity);
    return product;
}

/// a + b; SizeOverflow naming `quantity` if the sum does not fit 64 bits.
[[nodiscard]] inline std::uint64_t checked_add(std::uint64_t a, std::uint64_t b, const char* quantity) {
    std::uint64_t sum = 0;
    if (__builtin_add_overflow(a, b, &sum)) throw SizeOverflow(quantity);
    return sum;
}

/// ceil(a / b) for b > 0, without the overflow of (a + b - 1) / b.
[[nodiscard]] inline std::uint64_t ceil_div(std::uint64_t a, std::uint64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

/// `total += value`, checked.
inline void checked_accumulate(std::uint64_t& total, std::uint64_t value, const char* quantity) {
    if (__builtin_add_overflow(total, value, &total)) throw SizeOverflow(quantity);
}

/// a * b, or 2^64 - 1 if the product does not fit: for sizes that are only compared with a
/// capacity, where "too large" is an answer, not an error.
[[nodiscard]] inline std::uint64_t saturating_mul(std::uint64_t a, std::uint64_t b) {
    std::uint64_t product = 0;
    return __builtin_mul_overflow(a, b, &product) ? ~std::uint64_t{0} : product;
}

/// a + b, or 2^64 - 1 if the sum does not fit.
[[nodiscard]] inline std::uint64_t saturating_add(std::uint64_t a, std::uint64_t b) {
    std::uint64_t sum = 0;
    return __builtin_add_overflow(a, b, &sum) ? ~std::uint64_t{0} : sum;
}

/// `value` (finite, >= 0) rounded to the nearest integer; SizeOverflow naming `quantity` if it
/// is not finite or does not fit 64 bits. A negative value is a bug: std::invalid_argument.
[[nodiscard]] inline std::uint64_t checked_round(double value, const char* quantity) {
    if (std::isnan(value) || value < 0) throw std::invalid_argument(std::string(quantity) + ": negative or NaN");
    const double rounded = std::nearbyint(value);
    if (!(rounded < 0x1p64)) throw SizeOverflow(quantity);
    return static_cast<std::uint64_t>(rounded);
}

/// ceil(value) for finite value >= 0, checked as checked_round.
[[nodiscard]] inline std::uint64_t checked_ceil(double value, const char* quantity) {
    if (std::isnan(value) || value < 0) throw std::invalid_argument(std::string(quantity) + ": negative or NaN");
    const double up = std::ceil(value);
    if (!(up < 0x1p64)) throw SizeOverflow(quantity);
    return static_cast<std::uint64_t>(up);
}

}  // namespace fastsim
