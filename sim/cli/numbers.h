// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <string>

namespace fastsim::cli {

/// `text` as a decimal integer from `min` to `max` for option `option` ("--seed"): digits
/// with an optional leading '-', nothing else (no '+', spaces, hex or exponent), and never
/// wrapped; UserError naming the option and the range otherwise.
std::int64_t parse_integer_option(const std::string& text, const std::string& option, std::int64_t min,
                                  std::int64_t max);

/// The same for unsigned values up to 2^64 - 1.
std::uint64_t parse_unsigned_option(const std::string& text, const std::string& option, std::uint64_t max);

}  // namespace fastsim::cli
