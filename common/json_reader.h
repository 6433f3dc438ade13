// SPDX-License-Identifier: MIT
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fastsim {

struct JsonMember;

/// A parsed JSON value (RFC 8259). Objects keep their members in file order.
class JsonValue {
public:
    enum class Kind { null, boolean, number, string, array, object };

    JsonValue() = default;
    static JsonValue make_bool(bool value);
    static JsonValue make_number(double value);
    static JsonValue make_string(std::string value);
    static JsonValue make_array(std::vector<JsonValue> items);
    static JsonValue make_object(std::vector<JsonMember> members);

    [[nodiscard]] Kind kind() const { return m_kind; }
    [[nodiscard]] bool is_number() const { return m_kind == Kind::number; }
    [[nodiscard]] bool is_string() const { return m_kind == Kind::string; }
    [[nodiscard]] bool is_array() const { return m_kind == Kind::array; }
    [[nodiscard]] bool is_object() const { return m_kind == Kind::object; }

    /// The value; only meaningful for the matching kind (0 / false / empty otherwise).
    [[nodiscard]] bool as_bool() const { return m_bool; }
    [[nodiscard]] double as_number() const { return m_number; }
    [[nodiscard]] const std::string& as_string() const { return m_string; }
    [[nodiscard]] const std::vector<JsonValue>& items() const { return m_items; }
    [[nodiscard]] const std::vector<JsonMember>& members() const;

    /// The member named `key` of an object (the first if repeated), or nullptr.
    [[nodiscard]] const JsonValue* find(std::string_view key) const;

private:
    Kind m_kind = Kind::null;
    bool m_bool = false;
    double m_number = 0;
    std::string m_string;
    std::vector<JsonValue> m_items;
    std::vector<JsonMember> m_members;
};

struct JsonMember {
    std::string key;
    JsonValue value;
};

/// Parses one JSON document. Throws UserError "SOURCE:LINE:COLUMN: <what was expected>"
/// on a syntax error, a member name given twice in one object, nesting deeper than 64, or
/// text after the document.
JsonValue parse_json(std::string_view text, const std::string& source);

/// parse_json of the file at `path` ("PATH: cannot open: <reason>" if it cannot be read).
JsonValue read_json_file(const std::string& path);

}  // namespace fastsim
