// SPDX-License-Identifier: MIT
#pragma once

#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <limits>
#include <type_traits>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "common/enum_names.h"
#include "common/errors.h"

namespace fastsim::config {

/// A raw config value: present or not, and where it is (or where it would go).
template <typename T>
struct Field {
    std::optional<T> value;
    Location where;

    [[nodiscard]] T value_or(T fallback) const { return value ? *value : std::move(fallback); }
};

/// `text` as one YAML document. ConfigError (with `file`, line and column) for invalid YAML,
/// and for what yaml-cpp accepts silently: a second document after `---`, a key given twice
/// in one map, a non-scalar key, and aliases (`*name`) that make the document expand to more
/// nodes than its text could hold.
YAML::Node parse_strict_yaml(const std::string& text, const std::string& file);

/// The parsed document: file name, the tree after `-p` overrides, and which key paths
/// those overrides set (their values have no line in the file).
struct Document {
    std::string file;
    YAML::Node root;
    std::vector<std::string> overridden_paths;

    /// Reads and parses `path` (`what` names it in errors: "config file", "trace", ...);
    /// UserError if it is not a readable regular file, ConfigError if it is not valid YAML
    /// under parse_strict_yaml's rules.
    static Document load(const std::string& path, std::string_view what = "config file");
    /// Parses `text` as the contents of a file named `path` (for error messages).
    static Document parse(const std::string& text, const std::string& path);
    /// Applies `key.path=value` (value parsed as YAML; numeric segments index lists).
    void apply_override(const std::string& assignment);
    [[nodiscard]] Location locate(const YAML::Node& node, const std::string& key_path) const;
};

/// Reads one YAML map, remembering which keys were read so finish() can reject the rest
/// (yaml-cpp does not flag unknown keys). Every error names file, line and key path.
class MapReader {
public:
    /// ConfigError unless `node` is a map (a null node reads as an empty map).
    MapReader(const Document& doc, const YAML::Node& node, std::string key_path);

    template <typename T>
    Field<T> scalar(const std::string& key);
    /// A scalar string mapped through `parse`; `choices` lists the accepted names.
    template <typename E>
    Field<E> choice(const std::string& key, const std::function<std::optional<E>(const std::string&)>& parse,
                    const std::string& choices);
    /// A scalar naming an enumerator of E in its table (common/enum_names.h).
    template <typename E>
    Field<E> choice(const std::string& key) {
        return choice<E>(
            key, [](const std::string& s) { return parse_name<E>(s); }, name_list<E>());
    }
    /// A list of scalars (a single scalar reads as a one-element list).
    template <typename T>
    Field<std::vector<Field<T>>> list(const std::string& key);
    std::optional<MapReader> map(const std::string& key);
    /// The node under `key` as it is (null node if absent), marked as read: for values of any
    /// shape, such as sweep axis values.
    YAML::Node raw(const std::string& key) {
        m_known.insert(key);
        return get(key);
    }
    /// Each element of a list of maps.
    std::vector<MapReader> maps(const std::string& key);

    /// Whether `key` has a non-null value.
    [[nodiscard]] bool has(const std::string& key) const {
        const YAML::Node node = get(key);
        return node && !node.IsNull();
    }
    /// Whether `key` is written at all, with a value or without (`upper:`).
    [[nodiscard]] bool contains(const std::string& key) const { return static_cast<bool>(get(key)); }
    /// ConfigError naming the first key that was never read, and the keys that exist.
    void finish() const;
    [[nodiscard]] Location location() const { return m_doc->locate(m_node, m_path); }
    [[nodiscard]] Location location_of(const std::string& key) const;
    [[nodiscard]] const std::string& path() const { return m_path; }
    [[nodiscard]] const Document* document() const { return m_doc; }

private:
    [[nodiscard]] std::string child_path(const std::string& key) const {
        return m_path.empty() ? key : m_path + "." + key;
    }
    template <typename T>
    T convert(const YAML::Node& node, const std::string& path) const;
    /// Lookup through a const node: a non-const operator[] would insert the key.
    [[nodiscard]] YAML::Node get(const std::string& key) const {
        const YAML::Node& node = m_node;
        return node[key];
    }

    const Document* m_doc;
    YAML::Node m_node;
    std::string m_path;
    std::set<std::string> m_known;
};

template <typename T>
constexpr const char* expected_kind() {
    if constexpr (std::is_same_v<T, bool>)
        return "true or false";
    else if constexpr (std::is_integral_v<T>)
        return std::is_signed_v<T> ? "an integer" : "a non-negative integer";
    else if constexpr (std::is_floating_point_v<T>)
        return "a number";
    else
        return "a string";
}

/// Nothing if `text` is a plain decimal number for YAML keys of type T, else why not (empty
/// when "expected a number" says it all): integers
/// are [+-]digits (no sign for unsigned types) and floats [+-]digits[.digits][e[+-]digits],
/// neither with a leading zero (`010` is octal 8 in YAML 1.1 and 10 in YAML 1.2, so it is
/// refused), hexadecimal, octal, `.inf` or `.nan`.
std::optional<std::string> number_syntax_error(const std::string& text, bool integer, bool allow_sign);

template <typename T>
T MapReader::convert(const YAML::Node& node, const std::string& path) const {
    const Location where = m_doc->locate(node, path);
    if (!node.IsScalar())
        throw ConfigError(where, std::string("expected ") + expected_kind<T>() + ", got a " +
                                     (node.IsMap()        ? "map"
                                      : node.IsSequence() ? "list"
                                                          : "null"));
    if constexpr (std::is_same_v<T, std::string>) {
        return node.Scalar();
    } else if constexpr (std::is_same_v<T, bool>) {
        // YAML 1.2's booleans only: yes/no/on/off are booleans in YAML 1.1 and strings in 1.2.
        const std::string& text = node.Scalar();
        if (text == "true" || text == "True" || text == "TRUE") return true;
        if (text == "false" || text == "False" || text == "FALSE") return false;
        throw ConfigError(where, std::string("expected ") + expected_kind<T>() + ", got '" + text + "'");
    } else {
        const std::string& text = node.Scalar();
        constexpr bool integer = std::is_integral_v<T>;
        if (auto error = number_syntax_error(text, integer, !integer || std::is_signed_v<T>))
            throw ConfigError(where, std::string("expected ") + expected_kind<T>() + ", got '" + text + "'" +
                                         (error->empty() ? "" : " (" + *error + ")"));
        if constexpr (integer) {
            errno = 0;
            char* end = nullptr;
            if constexpr (std::is_signed_v<T>) {
                const long long wide = std::strtoll(text.c_str(), &end, 10);
                if (errno == ERANGE || wide < static_cast<long long>(std::numeric_limits<T>::min()) ||
                    wide > static_cast<long long>(std::numeric_limits<T>::max()))
                    throw ConfigError(where, std::string("expected ") + expected_kind<T>() + " from " +
                                                 std::to_string(std::numeric_limits<T>::min()) + " to " +
                                                 std::to_string(std::numeric_limits<T>::max()) + ", got '" + text +
                                                 "'");
                return static_cast<T>(wide);
            } else {
                const unsigned long long wide = std::strtoull(text.c_str(), &end, 10);
                if (errno == ERANGE || wide > std::numeric_limits<T>::max())
                    throw ConfigError(where, std::string("expected ") + expected_kind<T>() + " from 0 to " +
                                                 std::to_string(std::numeric_limits<T>::max()) + ", got '" + text +
                                                 "'");
                return static_cast<T>(wide);
            }
        } else {
            const double value = std::strtod(text.c_str(), nullptr);
            if (!std::isfinite(value) || static_cast<double>(static_cast<T>(value)) != value)
                throw ConfigError(
                    where, std::string("expected a finite number, got '") + text + "' (beyond the range of a double)");
            return static_cast<T>(value);
        }
    }
}

template <typename T>
Field<T> MapReader::scalar(const std::string& key) {
    m_known.insert(key);
    Field<T> field{std::nullopt, location_of(key)};
    const YAML::Node node = get(key);
    if (node && !node.IsNull()) field.value = convert<T>(node, child_path(key));
    return field;
}

template <typename E>
Field<E> MapReader::choice(const std::string& key, const std::function<std::optional<E>(const std::string&)>& parse,
                           const std::string& choices) {
    const Field<std::string> name = scalar<std::string>(key);
    Field<E> field{std::nullopt, name.where};
    if (name.value) {
        field.value = parse(*name.value);
        if (!field.value) throw ConfigError(name.where, "expected one of " + choices + ", got '" + *name.value + "'");
    }
    return field;
}

template <typename T>
Field<std::vector<Field<T>>> MapReader::list(const std::string& key) {
    m_known.insert(key);
    Field<std::vector<Field<T>>> field{std::nullopt, location_of(key)};
    const YAML::Node node = get(key);
    if (!node || node.IsNull()) return field;
    std::vector<Field<T>> items;
    if (node.IsSequence()) {
        for (std::size_t i = 0; i < node.size(); ++i) {
            const std::string path = child_path(key) + "[" + std::to_string(i) + "]";
            items.push_back({convert<T>(node[i], path), m_doc->locate(node[i], path)});
        }
    } else {
        items.push_back({convert<T>(node, child_path(key)), field.where});
    }
    field.value = std::move(items);
    return field;
}

}  // namespace fastsim::config
