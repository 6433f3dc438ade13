// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace fastsim {

/// One value of an enum and the name configs, messages and reports spell it with.
template <typename E>
struct EnumName {
    std::string_view name;
    E value;
};

template <typename E, std::size_t N>
using EnumNames = std::array<EnumName<E>, N>;

// An enum E takes part by declaring, in its own namespace (found by argument-dependent lookup),
//   const EnumNames<E, N>& enum_names(E);
// returning its table in the order lists print it. name_of, parse_name and name_list then work
// for it, and config keys of type E read, check, dump and document themselves from the table.

/// The name of `value`; "?" for a value outside the table (a bug: every enumerator is listed).
template <typename E>
std::string_view name_of(E value) {
    for (const auto& entry : enum_names(E{}))
        if (entry.value == value) return entry.name;
    return "?";
}

/// The value named `name` exactly, if any.
template <typename E>
std::optional<E> parse_name(std::string_view name) {
    for (const auto& entry : enum_names(E{}))
        if (entry.name == name) return entry.value;
    return std::nullopt;
}

/// Every name in table order, joined by `separator`: "ring, tree, switch".
template <typename E>
std::string name_list(std::string_view separator = ", ") {
    std::string out;
    for (const auto& entry : enum_names(E{})) {
        if (!out.empty()) out += separator;
        out += entry.name;
    }
    return out;
}

}  // namespace fastsim
