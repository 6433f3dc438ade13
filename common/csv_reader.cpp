// SPDX-License-Identifier: MIT
#include "common/csv_reader.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_map>

#include "common/errors.h"
#include "common/input_file.h"

namespace fastsim {
namespace {

[[noreturn]] void fail(const std::string& source, int line, const std::string& message) {
    throw UserError(source + ":" + std::to_string(line) + ": " + message);
}

}  // namespace

std::optional<std::size_t> CsvTable::column(std::string_view name) const {
    for (std::size_t i = 0; i < header.size(); ++i)
        if (header[i] == name) return i;
    return std::nullopt;
}

CsvTable parse_csv(std::string_view text, const std::string& source) {
    CsvTable table;
    table.source = source;
    std::vector<std::string> record;
    std::string cell;
    int line = 1, record_line = 1;
    bool record_has_text = false;  // false for an empty line, which is skipped
    std::size_t i = 0;
    // Ends the current record: the first is the header, later ones must match its width.
    const auto end_record = [&]() {
        record.push_back(std::move(cell));
        cell.clear();
        if (record_has_text) {
            if (table.header.empty()) {
                // A column named twice would be read from its first cell and its second ignored.
                std::unordered_map<std::string_view, std::size_t> first_of;
                for (std::size_t c = 0; c < record.size(); ++c)
                    if (const auto [at, fresh] = first_of.emplace(record[c], c); !fresh && !record[c].empty())
                        fail(source, record_line,
                             "column '" + record[c] + "' is given twice (columns " + std::to_string(at->second + 1) +
                                 " and " + std::to_string(c + 1) + ")");
                table.header = std::move(record);
            } else if (record.size() != table.header.size()) {
                fail(source, record_line,
                     std::to_string(record.size()) + " cells, but the header has " +
                         std::to_string(table.header.size()));
            } else {
                table.rows.push_back(std::move(record));
                table.row_lines.push_back(record_line);
            }
        }
        record.clear();
        record_has_text = false;
    };
    while (i < text.size()) {
        const char c = text[i];
        if (c == '"' && cell.empty()) {
            // 1. A quoted cell: up to the closing quote; "" is a quote; newlines are kept.
            record_has_text = true;
            const int opened = line;
            ++i;
            for (;;) {
                if (i >= text.size()) fail(source, opened, "unterminated quoted cell");
                if (text[i] == '"') {
                    if (i + 1 < text.size() && text[i + 1] == '"') {
                        cell += '"';
                        i += 2;
                        continue;
                    }
                    ++i;
                    break;
                }
                if (text[i] == '\n') ++line;
                cell += text[i++];
            }
            if (i < text.size() && text[i] != ',' && text[i] != '\n' && text[i] != '\r')
                fail(source, line, "text after a closing quote");
            continue;
        }
        if (c == ',') {
            record_has_text = true;
            record.push_back(std::move(cell));
            cell.clear();
            ++i;
        } else if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') {
            ++i;
        } else if (c == '\n') {
            end_record();
            ++line;
            record_line = line;
            ++i;
        } else {
            if (c == '"') fail(source, line, "a quote inside an unquoted cell");
            record_has_text = true;
            cell += c;
            ++i;
        }
    }
    if (record_has_text || !record.empty()) end_record();
    if (table.header.empty()) throw UserError(source + ": empty file, expected a CSV header line");
    return table;
}

CsvTable read_csv_file(const std::string& path) { return parse_csv(read_input_file(path, "CSV file"), path); }

std::optional<double> parse_number(std::string_view text) {
    while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
    while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
    // [-]digits[.digits][e[+-]digits]: what fastsim writes; strtod alone would take hex, inf, nan.
    std::size_t i = 0;
    const auto digits = [&] {
        const std::size_t from = i;
        while (i < text.size() && text[i] >= '0' && text[i] <= '9') ++i;
        return i - from;
    };
    if (i < text.size() && text[i] == '-') ++i;
    std::size_t mantissa_digits = digits();
    if (i < text.size() && text[i] == '.') {
        ++i;
        mantissa_digits += digits();
    }
    if (mantissa_digits == 0) return std::nullopt;
    if (i < text.size() && (text[i] == 'e' || text[i] == 'E')) {
        ++i;
        if (i < text.size() && (text[i] == '+' || text[i] == '-')) ++i;
        if (digits() == 0) return std::nullopt;
    }
    if (i != text.size()) return std::nullopt;
    const std::string s(text);
    errno = 0;
    const double v = std::strtod(s.c_str(), nullptr);
    if (errno == ERANGE || !std::isfinite(v)) return std::nullopt;
    return v;
}

bool is_malformed_number(std::string_view text) {
    if (parse_number(text)) return false;
    const std::string s(text);
    const char* begin = s.c_str();
    while (*begin == ' ') ++begin;
    if (*begin == '\0') return false;
    char* end = nullptr;
    (void)std::strtod(begin, &end);
    while (*end == ' ') ++end;
    return *end == '\0';
}

}  // namespace fastsim
