// SPDX-License-Identifier: MIT
#include "common/csv_writer.h"

#include <charconv>

#include "common/output_files.h"

namespace fastsim {

CsvCell CsvCell::number(double value) {
    CsvCell cell;
    cell.m_kind = Kind::number;
    cell.m_number = value;
    return cell;
}

CsvCell CsvCell::text(std::string_view text) {
    CsvCell cell;
    cell.m_kind = Kind::text;
    cell.m_text = text;
    return cell;
}

CsvCell CsvCell::quoted_text(std::string_view text) {
    CsvCell cell;
    cell.m_kind = Kind::quoted_text;
    cell.m_text = text;
    return cell;
}

CsvCell CsvCell::empty() { return CsvCell(); }

void CsvCell::append_csv(std::string& out) const {
    char buf[24];
    switch (m_kind) {
    case Kind::empty: return;
    case Kind::number: out += format_number(m_number); return;
    case Kind::signed_integer: out.append(buf, std::to_chars(buf, buf + sizeof buf, m_signed).ptr); return;
    case Kind::unsigned_integer: out.append(buf, std::to_chars(buf, buf + sizeof buf, m_unsigned).ptr); return;
    case Kind::text:
    case Kind::quoted_text:
        if (m_kind == Kind::text && m_text.find_first_of(",\"\r\n") == std::string::npos) {
            out += m_text;
            return;
        }
        out += '"';
        for (const char ch : m_text) {
            if (ch == '"') out += '"';
            out += ch;
        }
        out += '"';
        return;
    }
}

void CsvCell::write_json(JsonWriter& json) const {
    switch (m_kind) {
    case Kind::empty: json.null(); return;
    case Kind::number: json.number(m_number); return;
    case Kind::signed_integer: json.integer(m_signed); return;
    case Kind::unsigned_integer: json.integer(m_unsigned); return;
    case Kind::text:
    case Kind::quoted_text: json.string(m_text); return;
    }
}

}  // namespace fastsim
