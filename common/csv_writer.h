// SPDX-License-Identifier: MIT
// The one CSV writer of fastsim's outputs: a table's columns are declared once, each a name and
// the getter of its value from a row, so a header and the values under it cannot drift apart.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/json_writer.h"

namespace fastsim {

/// One value of a report column, typed so the CSV and JSON writers both write it: numbers as
/// format_number writes them, counts in decimal digits, text as the column declares it.
class CsvCell {
public:
    /// A measured or derived quantity (format_number).
    static CsvCell number(double value);
    /// A count or id.
    template <typename Integer>
    static CsvCell integer(Integer value) {
        static_assert(std::is_integral_v<Integer> && !std::is_same_v<Integer, bool>, "integer() takes counts and ids");
        CsvCell cell;
        if constexpr (std::is_signed_v<Integer>) {
            cell.m_kind = Kind::signed_integer;
            cell.m_signed = static_cast<std::int64_t>(value);
        } else {
            cell.m_kind = Kind::unsigned_integer;
            cell.m_unsigned = static_cast<std::uint64_t>(value);
        }
        return cell;
    }
    /// A name: as is, in double quotes (RFC 4180, `""` for a quote) only when it holds a comma,
    /// a quote or a line break.
    static CsvCell text(std::string_view text);
    /// Free text (a note, an error) or a name that layers.csv has always quoted: as text(), but
    /// in double quotes always (RFC 4180, `""` for a quote).
    static CsvCell quoted_text(std::string_view text);
    /// No value: an empty CSV cell, JSON null.
    static CsvCell empty();

    /// The cell's CSV text appended to `out`.
    void append_csv(std::string& out) const;
    /// The cell as a JSON value.
    void write_json(JsonWriter& json) const;

private:
    enum class Kind : std::uint8_t { empty, number, signed_integer, unsigned_integer, text, quoted_text };
    Kind m_kind = Kind::empty;
    double m_number = 0;
    std::int64_t m_signed = 0;
    std::uint64_t m_unsigned = 0;
    std::string m_text;
};

/// One column of a table of `Row`s: its header name (snake_case, unit as suffix) and its value.
template <typename Row>
struct CsvColumn {
    std::string name;
    std::function<CsvCell(const Row&)> value;
};

/// A CSV table declared once as its columns: writes the header line and each row's line
/// (cells joined by commas, LF line ends), and a row's fields into a JSON object.
template <typename Row>
class CsvWriter {
public:
    explicit CsvWriter(std::vector<CsvColumn<Row>> columns) : m_columns(std::move(columns)) {}

    [[nodiscard]] const std::vector<CsvColumn<Row>>& columns() const { return m_columns; }

    /// The header line, newline included.
    [[nodiscard]] std::string header() const {
        std::string out;
        for (std::size_t c = 0; c < m_columns.size(); ++c) {
            if (c) out += ',';
            out += m_columns[c].name;
        }
        return out + '\n';
    }

    /// The line of `row`, newline included.
    [[nodiscard]] std::string row(const Row& row) const {
        std::string out;
        append_row(out, row);
        return out;
    }

    /// The header and a line per row of `rows` (any range of Row).
    template <typename Rows>
    [[nodiscard]] std::string table(const Rows& rows) const {
        std::string out = header();
        for (const Row& r : rows) append_row(out, r);
        return out;
    }

    /// `row`'s fields as key and value pairs of the JSON object open in `json`, in column order.
    void write_json_fields(JsonWriter& json, const Row& row) const {
        for (const CsvColumn<Row>& c : m_columns) {
            json.key(c.name);
            c.value(row).write_json(json);
        }
    }

private:
    void append_row(std::string& out, const Row& row) const {
        for (std::size_t c = 0; c < m_columns.size(); ++c) {
            if (c) out += ',';
            m_columns[c].value(row).append_csv(out);
        }
        out += '\n';
    }

    std::vector<CsvColumn<Row>> m_columns;
};

}  // namespace fastsim
