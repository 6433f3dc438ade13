// SPDX-License-Identifier: MIT
#include "cli/numbers.h"

#include <charconv>

#include "common/errors.h"

namespace fastsim::cli {
namespace {

[[noreturn]] void refuse(const std::string& text, const std::string& option, const std::string& range) {
    throw UserError(option + ": expected an integer from " + range + ", got '" + text + "'");
}

}  // namespace

std::int64_t parse_integer_option(const std::string& text, const std::string& option, std::int64_t min,
                                  std::int64_t max) {
    const std::string range = std::to_string(min) + " to " + std::to_string(max);
    std::int64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || error != std::errc() || end != text.data() + text.size() || value < min || value > max)
        refuse(text, option, range);
    return value;
}

std::uint64_t parse_unsigned_option(const std::string& text, const std::string& option, std::uint64_t max) {
    const std::string range = "0 to " + (max == ~std::uint64_t{0} ? std::string("2^64-1") : std::to_string(max));
    std::uint64_t value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
    if (text.empty() || error != std::errc() || end != text.data() + text.size() || value > max)
        refuse(text, option, range);
    return value;
}

}  // namespace fastsim::cli
