// SPDX-License-Identifier: MIT
#include "common/json_writer.h"

#include <charconv>
#include <stdexcept>

#include "common/output_files.h"

namespace fastsim {
namespace {

/// Spaces per level of indentation in each style.
std::size_t indent_unit(JsonStyle style) {
    switch (style) {
    case JsonStyle::pretty: return 2;
    case JsonStyle::compact: return 0;
    }
    return 0;
}

}  // namespace

JsonWriter::JsonWriter(JsonStyle style) : m_style(style) {}

std::size_t JsonWriter::line_indent() const {
    if (m_levels.empty()) return 0;
    const Level& level = m_levels.back();
    switch (level.layout) {
    case JsonLayout::inline_items:
    case JsonLayout::continued_lines: return level.indent;
    case JsonLayout::one_per_line: return level.indent + indent_unit(m_style);
    }
    return level.indent;
}

void JsonWriter::before_item() {
    Level& level = m_levels.back();
    const bool first = level.empty;
    level.empty = false;
    switch (level.layout) {
    case JsonLayout::inline_items:
        if (!first) m_out += m_style == JsonStyle::pretty ? ", " : ",";
        return;
    case JsonLayout::one_per_line:
        if (!first) m_out += ",\n";
        m_out.append(level.indent + indent_unit(m_style), ' ');
        return;
    case JsonLayout::continued_lines:
        if (!first) {
            m_out += ",\n";
            m_out.append(level.indent, ' ');
        }
        return;
    }
}

void JsonWriter::before_value() {
    if (m_levels.empty()) {
        if (!m_out.empty()) throw std::logic_error("JsonWriter: a second value after the document");
        return;
    }
    Level& level = m_levels.back();
    if (level.object) {
        if (!level.key_written) throw std::logic_error("JsonWriter: a value in an object without its key");
        level.key_written = false;
        return;
    }
    before_item();
}

JsonWriter& JsonWriter::key(std::string_view name) {
    if (m_levels.empty() || !m_levels.back().object || m_levels.back().key_written)
        throw std::logic_error("JsonWriter: key() outside an object or twice");
    before_item();
    append_json_string(m_out, name);
    m_out += m_style == JsonStyle::pretty ? ": " : ":";
    m_levels.back().key_written = true;
    return *this;
}

void JsonWriter::open(char bracket, bool object, JsonLayout layout) {
    before_value();
    const std::size_t indent = line_indent();
    m_out += bracket;
    if (layout == JsonLayout::one_per_line) m_out += '\n';
    m_levels.push_back(Level{layout, object, true, false, indent});
}

void JsonWriter::close(char bracket, bool object) {
    if (m_levels.empty() || m_levels.back().object != object || m_levels.back().key_written)
        throw std::logic_error("JsonWriter: unbalanced end_object/end_array");
    const Level level = m_levels.back();
    m_levels.pop_back();
    if (level.layout == JsonLayout::one_per_line) {
        if (!level.empty) m_out += '\n';
        m_out.append(level.indent, ' ');
    }
    m_out += bracket;
    if (m_levels.empty()) m_out += '\n';
}

JsonWriter& JsonWriter::begin_object(JsonLayout layout) {
    open('{', true, layout);
    return *this;
}

JsonWriter& JsonWriter::end_object() {
    close('}', true);
    return *this;
}

JsonWriter& JsonWriter::begin_array(JsonLayout layout) {
    open('[', false, layout);
    return *this;
}

JsonWriter& JsonWriter::end_array() {
    close(']', false);
    return *this;
}

JsonWriter& JsonWriter::number(double value) {
    before_value();
    m_out += format_number(value);
    return *this;
}

JsonWriter& JsonWriter::signed_integer(std::int64_t value) {
    before_value();
    char buf[24];
    const auto result = std::to_chars(buf, buf + sizeof buf, value);
    m_out.append(buf, result.ptr);
    return *this;
}

JsonWriter& JsonWriter::unsigned_integer(std::uint64_t value) {
    before_value();
    char buf[24];
    const auto result = std::to_chars(buf, buf + sizeof buf, value);
    m_out.append(buf, result.ptr);
    return *this;
}

JsonWriter& JsonWriter::exact_decimal(std::uint64_t units, unsigned decimals) {
    if (decimals > 18) throw std::logic_error("JsonWriter: exact_decimal takes at most 18 decimals");
    before_value();
    std::uint64_t scale = 1;
    for (unsigned i = 0; i < decimals; ++i) scale *= 10;
    char buf[24];
    const auto whole = std::to_chars(buf, buf + sizeof buf, units / scale);
    m_out.append(buf, whole.ptr);
    std::uint64_t fraction = units % scale;
    if (fraction == 0) return *this;
    char digits[18];
    for (unsigned i = decimals; i-- > 0; fraction /= 10) digits[i] = static_cast<char>('0' + fraction % 10);
    std::size_t length = decimals;
    while (digits[length - 1] == '0') --length;
    m_out += '.';
    m_out.append(digits, length);
    return *this;
}

JsonWriter& JsonWriter::string(std::string_view text) {
    before_value();
    append_json_string(m_out, text);
    return *this;
}

JsonWriter& JsonWriter::boolean(bool value) {
    before_value();
    m_out += value ? "true" : "false";
    return *this;
}

JsonWriter& JsonWriter::null() {
    before_value();
    m_out += "null";
    return *this;
}

}  // namespace fastsim
