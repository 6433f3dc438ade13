// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fastsim {

/// A CSV file read whole: a header row and data rows of the same width, all cells as text.
struct CsvTable {
    std::string source;  ///< file name used in error messages
    std::vector<std::string> header;
    std::vector<std::vector<std::string>> rows;  ///< each has header.size() cells
    std::vector<int> row_lines;                  ///< 1-based line on which each row starts

    /// Index of the column named `name`, if there is one.
    [[nodiscard]] std::optional<std::size_t> column(std::string_view name) const;
};

/// Parses RFC 4180 CSV: cells separated by commas, optionally in double quotes (a quoted cell
/// may hold commas, newlines and "" for a quote); LF or CRLF line ends; empty lines are skipped.
/// Throws UserError "SOURCE:LINE: ..." for an unterminated quote, text after a closing
/// quote, a row whose width differs from the header's, a header naming a column twice (empty
/// names aside), or no header at all.
CsvTable parse_csv(std::string_view text, const std::string& source);

/// parse_csv of the file at `path` (errors name `path`; "PATH: cannot open: <reason>").
CsvTable read_csv_file(const std::string& path);

/// `text` parsed as a whole finite decimal number ([-]digits[.digits][e[+-]digits], spaces
/// around it allowed), or nothing: hex, inf and nan are not numbers here.
std::optional<double> parse_number(std::string_view text);

/// True if `text` reads as a number to strtod but not as a finite decimal number: "nan",
/// "inf", "0x1A", "1e999". Such a cell in any column is an error, not text.
bool is_malformed_number(std::string_view text);

}  // namespace fastsim
