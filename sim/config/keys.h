// SPDX-License-Identifier: MIT
#pragma once

#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/enum_names.h"
#include "config/count_or_names.h"
#include "config/file_path.h"
#include "config/ranges.h"
#include "config/yaml_reader.h"

namespace fastsim::config {

// Key lists (docs/architecture.md, "Config: key lists"). Each section declares its keys once,
// as a function template that calls `visit(member, KeyDoc{...})` for every key:
//
//   template <typename Visit, typename S>  // S: the section's struct, const or not
//   void node_keys(Visit& visit, S& n) { visit(n.clock_mhz, {"clock_mhz", "node clock", &kClockMhz}); ... }
//
// The member's type is the key's type and its initial value the key's default. The visitors
// below read the keys (KeyReader), write them back as YAML (KeyWriter) and document them
// (KeyTable); a key list may skip a key that does not apply to the values at hand only when
// `!Visit::kEveryKey` (the writer), so readers and docs always see every key.
//
// Member types: int, std::uint64_t, double, bool, std::string, FilePath, an enum with
// enum_names (common/enum_names.h), std::optional of those (absent = unset, written only when
// set), and std::vector of int or of an enum (a list; one scalar reads as a one-element list).

/// What a key is besides its type and default.
struct KeyDoc {
    std::string_view path;            ///< below its section, dotted: "array.rows"
    std::string_view meaning;         ///< docs/config.md's "meaning" (Markdown)
    const KeyRange* range = nullptr;  ///< numbers and lists of numbers: checked where read
    std::string_view default_text{};  ///< docs' "default" when the initial value does not say it
    std::string_view allowed_text{};  ///< docs' "allowed" when the range or names do not say it all
};

namespace keys_detail {
template <typename T>
struct is_optional : std::false_type {};
template <typename T>
struct is_optional<std::optional<T>> : std::true_type {};
template <typename T>
struct is_vector : std::false_type {};
template <typename T>
struct is_vector<std::vector<T>> : std::true_type {};
}  // namespace keys_detail

/// `node` (under `path` of `map`'s document) as a CountOrNameLists; ConfigError naming the item otherwise.
CountOrNameLists read_count_or_name_lists(const MapReader& map, const YAML::Node& node, const std::string& path,
                                          const KeyDoc& key);

/// The map under `key` of `parent`, or an empty one at its path when absent.
MapReader submap(MapReader& parent, const std::string& key);

/// Reads a section's keys into their members: types, ranges and enum names are checked where
/// each value stands. Opens the sub-maps a dotted path needs (absent ones read as empty);
/// finish() rejects keys nobody read in them and in the section.
class KeyReader {
public:
    static constexpr bool kEveryKey = true;
    explicit KeyReader(MapReader section) : m_section(std::move(section)) {}

    template <typename T>
    void operator()(T& member, const KeyDoc& key);
    /// The section's map, for keys outside the key list (lists of maps).
    MapReader& section() { return m_section; }
    void finish() const;
    /// Where the key is, or where it would go if absent; "key[i]" for the items of a list.
    [[nodiscard]] Location where(std::string_view path) const;
    /// Whether the key was given a (non-null) value.
    [[nodiscard]] bool given(std::string_view path) const;

private:
    MapReader& parent_of(std::string_view path, std::string& leaf);
    void note(std::string_view path, const Location& where, bool given);
    template <typename T>
    bool read(MapReader& map, const std::string& leaf, T& out, const KeyDoc& key);

    MapReader m_section;
    std::map<std::string, MapReader, std::less<>> m_maps;  ///< by dotted prefix, "sram.exponent_bank"
    std::map<std::string, std::pair<Location, bool>, std::less<>> m_keys;
};

/// Writes a section's keys as YAML into the map the caller opened: nested maps in the order
/// their first key is listed, maps of scalars in flow style.
class KeyWriter {
public:
    static constexpr bool kEveryKey = false;

    template <typename T>
    void operator()(const T& member, const KeyDoc& key);
    void emit(YAML::Emitter& out) const;

private:
    struct Value {
        std::vector<std::string> items;  ///< one scalar, or the items of a list
        bool list = false;
        std::vector<std::vector<std::string>> nested;  ///< a list of lists, when not empty
    };
    std::vector<std::pair<std::string, Value>> m_values;  ///< in key-list order
};

/// docs/config.md's table of a key list: key, type, default, allowed, meaning.
class KeyTable {
public:
    static constexpr bool kEveryKey = true;

    template <typename T>
    void operator()(const T& member, const KeyDoc& key);
    [[nodiscard]] std::string markdown() const;

private:
    void row(const KeyDoc& key, std::string type, std::string default_value, std::string allowed);
    std::vector<std::string> m_rows;
};

/// Reads `values` with `key_list` (a callable taking (visitor, values)) from the map `key`
/// of `parent`; the caller reads any other keys through section() and calls finish().
template <typename S, typename KeyList>
KeyReader read_keys(MapReader& parent, const std::string& key, S& values, KeyList&& key_list) {
    KeyReader reader(submap(parent, key));
    key_list(reader, values);
    return reader;
}

/// The same, from `section` itself (an element of a list of maps).
template <typename S, typename KeyList>
KeyReader read_keys(MapReader section, S& values, KeyList&& key_list) {
    KeyReader reader(std::move(section));
    key_list(reader, values);
    return reader;
}

/// Writes `values` with `key_list` into the map the caller opened on `out`.
template <typename S, typename KeyList>
void write_keys(YAML::Emitter& out, const S& values, KeyList&& key_list) {
    KeyWriter writer;
    key_list(writer, values);
    writer.emit(out);
}

/// docs/config.md's table of `key_list` over default values.
template <typename S, typename KeyList>
std::string key_table(KeyList&& key_list, const S& defaults = S{}) {
    KeyTable table;
    key_list(table, defaults);
    return table.markdown();
}

// ---- templates ---------------------------------------------------------------------------

template <typename T>
void KeyReader::operator()(T& member, const KeyDoc& key) {
    std::string leaf;
    MapReader& map = parent_of(key.path, leaf);
    if constexpr (keys_detail::is_optional<T>::value) {
        typename T::value_type value{};
        if (read(map, leaf, value, key)) member = std::move(value);
    } else {
        read(map, leaf, member, key);
    }
}

template <typename T>
bool KeyReader::read(MapReader& map, const std::string& leaf, T& out, const KeyDoc& key) {
    const auto check = [&key](auto v, const Location& where) {
        if (key.range) check_in_range(v, *key.range, where);
    };
    if constexpr (keys_detail::is_vector<T>::value) {
        using Item = typename T::value_type;
        using Read = std::conditional_t<std::is_enum_v<Item>, std::string, Item>;
        const auto field = map.list<Read>(leaf);
        note(key.path, field.where, field.value.has_value());
        if (!field.value) return false;
        if (field.value->empty()) throw ConfigError(field.where, "expected at least one value");
        out.clear();
        for (std::size_t i = 0; i < field.value->size(); ++i) {
            const auto& item = (*field.value)[i];
            note(std::string(key.path) + "[" + std::to_string(i) + "]", item.where, true);
            if constexpr (std::is_enum_v<Item>) {
                const auto value = parse_name<Item>(*item.value);
                if (!value)
                    throw ConfigError(item.where,
                                      "expected one of " + name_list<Item>() + ", got '" + *item.value + "'");
                out.push_back(*value);
            } else {
                check(*item.value, item.where);
                out.push_back(*item.value);
            }
        }
        return true;
    } else if constexpr (std::is_enum_v<T>) {
        const auto field = map.template choice<T>(leaf);
        note(key.path, field.where, field.value.has_value());
        if (field.value) out = *field.value;
        return field.value.has_value();
    } else if constexpr (std::is_same_v<T, CountOrNameLists>) {
        const YAML::Node node = map.raw(leaf);
        const bool given = node && !node.IsNull();
        note(key.path, map.location_of(leaf), given);
        if (given) out = read_count_or_name_lists(map, node, map.path().empty() ? leaf : map.path() + "." + leaf, key);
        return given;
    } else if constexpr (std::is_same_v<T, FilePath>) {
        const auto field = map.scalar<std::string>(leaf);
        note(key.path, field.where, field.value.has_value());
        if (field.value) out.written = *field.value;
        return field.value.has_value();
    } else {
        static_assert(std::is_arithmetic_v<T> || std::is_same_v<T, std::string>, "a key's member type (keys.h)");
        const auto field = map.scalar<T>(leaf);
        note(key.path, field.where, field.value.has_value());
        if (!field.value) return false;
        if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) check(*field.value, field.where);
        out = *field.value;
        return true;
    }
}

namespace keys_detail {
/// The YAML text of one scalar value of a key.
template <typename T>
std::string scalar_text(const T& v) {
    if constexpr (std::is_enum_v<T>)
        return std::string(name_of(v));
    else if constexpr (std::is_same_v<T, bool>)
        return v ? "true" : "false";
    else if constexpr (std::is_same_v<T, std::string>)
        return v;
    else if constexpr (std::is_floating_point_v<T>)
        return exact_number(v);
    else
        return std::to_string(v);
}
}  // namespace keys_detail

template <typename T>
void KeyWriter::operator()(const T& member, const KeyDoc& key) {
    using keys_detail::scalar_text;
    Value value;
    if constexpr (keys_detail::is_optional<T>::value) {
        if (!member) return;
        value.items.push_back(scalar_text(*member));
    } else if constexpr (keys_detail::is_vector<T>::value) {
        value.list = true;
        for (const auto& item : member) value.items.push_back(scalar_text(item));
    } else if constexpr (std::is_same_v<T, CountOrNameLists>) {
        value.items.push_back(std::to_string(member.count));
        value.nested = member.lists;
    } else if constexpr (std::is_same_v<T, FilePath>) {
        if (member.written.empty()) return;
        value.items.push_back(std::filesystem::absolute(member.resolved).lexically_normal().string());
    } else {
        value.items.push_back(scalar_text(member));
    }
    m_values.emplace_back(std::string(key.path), std::move(value));
}

namespace keys_detail {
template <typename T>
std::string type_name() {
    if constexpr (is_optional<T>::value)
        return type_name<typename T::value_type>();
    else if constexpr (is_vector<T>::value)
        return type_name<typename T::value_type>() + " or list of them";
    else if constexpr (std::is_enum_v<T>)
        return "string";
    else if constexpr (std::is_same_v<T, bool>)
        return "boolean";
    else if constexpr (std::is_same_v<T, FilePath>)
        return "path";
    else if constexpr (std::is_same_v<T, CountOrNameLists>)
        return "integer or list of lists of strings";
    else if constexpr (std::is_same_v<T, std::string>)
        return "string";
    else if constexpr (std::is_integral_v<T>)
        return "integer";
    else
        return "number";
}
template <typename T>
std::string default_text(const T& v) {
    if constexpr (is_optional<T>::value)
        return v ? default_text(*v) : "—";
    else if constexpr (is_vector<T>::value) {
        std::string out;
        for (const auto& item : v) out += (out.empty() ? "" : ", ") + scalar_text(item);
        return "`[" + out + "]`";
    } else if constexpr (std::is_same_v<T, FilePath>)
        return v.written.empty() ? "—" : "`" + v.written + "`";
    else if constexpr (std::is_same_v<T, CountOrNameLists>)
        return std::to_string(v.count);
    else if constexpr (std::is_same_v<T, std::string>)
        return v.empty() ? "empty" : "`" + v + "`";
    else if constexpr (std::is_enum_v<T> || std::is_same_v<T, bool>)
        return "`" + scalar_text(v) + "`";
    else
        return scalar_text(v);
}
template <typename T>
std::string allowed_text(const KeyRange* range) {
    if constexpr (is_optional<T>::value || is_vector<T>::value)
        return allowed_text<typename T::value_type>(range);
    else if constexpr (std::is_enum_v<T>)
        return "`" + name_list<T>("`, `") + "`";
    else if constexpr (std::is_same_v<T, bool>)
        return "`true`, `false`";
    else if constexpr (std::is_arithmetic_v<T>)
        return range ? range->table_text() : "any";
    else if constexpr (std::is_same_v<T, CountOrNameLists>)
        return (range ? range->table_text() : "any") + ", or lists of layer names";
    else
        return "any";
}
}  // namespace keys_detail

template <typename T>
void KeyTable::operator()(const T& member, const KeyDoc& key) {
    row(key, keys_detail::type_name<T>(), keys_detail::default_text(member), keys_detail::allowed_text<T>(key.range));
}

}  // namespace fastsim::config
