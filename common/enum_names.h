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

/// For a family declared by a descriptor table (one row per member, with a `name`): whether the
/// rows' `value` members are the enumerators 0, 1, 2, ... in order. Use in a static_assert.
template <typename E, typename Row, std::size_t N>
constexpr bool rows_in_enum_order(const std::array<Row, N>& rows, E Row::*value) {
    for (std::size_t i = 0; i < N; ++i)
        if (static_cast<std::size_t>(rows[i].*value) != i) return false;
    return true;
}

/// The enum_names table of such a family: each row's `name` and `value`, in row order.
template <typename E, typename Row, std::size_t N>
constexpr EnumNames<E, N> names_of_rows(const std::array<Row, N>& rows, E Row::*value) {
    EnumNames<E, N> names{};
    for (std::size_t i = 0; i < N; ++i) names[i] = {rows[i].name, rows[i].*value};
    return names;
}

}  // namespace fastsim
