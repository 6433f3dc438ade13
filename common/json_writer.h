// SPDX-License-Identifier: MIT
// The one JSON writer of fastsim's outputs (report.json, plan.json, summary.json, trace JSON):
// a streaming writer that places separators, indentation and line breaks itself, so the code
// that writes a report only says which keys and values it holds.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

namespace fastsim {

/// Separators of a whole document.
enum class JsonStyle : std::uint8_t {
    pretty,   ///< `"key": value`, `a, b` on a line, two spaces per level of indentation
    compact,  ///< `"key":value`, `a,b` on a line, no indentation (trace JSON)
};

/// Where a container puts its items.
enum class JsonLayout : std::uint8_t {
    inline_items,     ///< on the line of the opening bracket: `{"a": 1, "b": 2}`
    one_per_line,     ///< each on its own line, indented one level deeper than the line that
                      ///< opened the container; the closing bracket on a line of its own at that
                      ///< line's indentation (`[\n  1,\n  2\n]`; empty: `[\n]`)
    continued_lines,  ///< the first item after the opening bracket, each further one on a new
                      ///< line at the indentation of the line that opened the container, the
                      ///< closing bracket right after the last item (trace JSON's outer object)
};

/// Writes one JSON document into a string, item by item. Inside an object every value follows a
/// key(); a document is one value, and when it is a container its closing bracket ends the
/// document with a newline. Misuse (a value without its key, unbalanced end_*) is a programming
/// error and throws std::logic_error.
class JsonWriter {
public:
    explicit JsonWriter(JsonStyle style = JsonStyle::pretty);

    JsonWriter& begin_object(JsonLayout layout = JsonLayout::inline_items);
    JsonWriter& end_object();
    JsonWriter& begin_array(JsonLayout layout = JsonLayout::inline_items);
    JsonWriter& end_array();

    /// The key of the next value in the current object.
    JsonWriter& key(std::string_view name);

    /// A measured or derived quantity: format_number's text (whole numbers exactly, else 9
    /// significant digits).
    JsonWriter& number(double value);
    /// A count or id, in decimal digits.
    template <typename Integer>
    JsonWriter& integer(Integer value) {
        static_assert(std::is_integral_v<Integer> && !std::is_same_v<Integer, bool>,
                      "integer() takes counts and ids; number() takes doubles, boolean() bools");
        if constexpr (std::is_signed_v<Integer>)
            return signed_integer(static_cast<std::int64_t>(value));
        else
            return unsigned_integer(static_cast<std::uint64_t>(value));
    }
    /// `units` / 10^`decimals` exactly, with up to `decimals` decimals and trailing zeros
    /// dropped (picoseconds as microseconds: exact_decimal(ps, 6)); `decimals` at most 18.
    JsonWriter& exact_decimal(std::uint64_t units, unsigned decimals);
    /// `text` as a JSON string (json_string's escaping).
    JsonWriter& string(std::string_view text);
    JsonWriter& boolean(bool value);
    JsonWriter& null();

    /// Reserves room for `bytes` of output (large trace files).
    void reserve(std::size_t bytes) { m_out.reserve(bytes); }
    /// The text written so far; the whole document once its outer container is closed.
    [[nodiscard]] const std::string& text() const { return m_out; }
    /// Hands the text over, leaving the writer empty.
    [[nodiscard]] std::string take() { return std::move(m_out); }

private:
    struct Level {
        JsonLayout layout;
        bool object;
        bool empty = true;
        bool key_written = false;
        std::size_t indent = 0;  ///< of the line the container opened on, in spaces
    };

    JsonWriter& signed_integer(std::int64_t value);
    JsonWriter& unsigned_integer(std::uint64_t value);
    /// Separator, line break and indentation before a value (after its key, in an object).
    void before_value();
    /// Separator, line break and indentation before an item of the innermost container.
    void before_item();
    void open(char bracket, bool object, JsonLayout layout);
    void close(char bracket, bool object);
    [[nodiscard]] std::size_t line_indent() const;

    JsonStyle m_style;
    std::string m_out;
    std::vector<Level> m_levels;
};

}  // namespace fastsim
