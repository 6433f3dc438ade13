// SPDX-License-Identifier: MIT
#include "output/table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace fastsim::output {
namespace {

bool looks_numeric(const std::string& s) {
    if (s == "inf" || s == "-inf" || s == "nan") return true;
    char* end = nullptr;
    std::strtod(s.c_str(), &end);
    return !s.empty() && end == s.c_str() + s.size();
}

}  // namespace

std::string Table::fixed(double value, int decimals) {
    if (std::isnan(value)) return "nan";
    if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, value);
    return buf;
}

std::string Table::scientific(double value) {
    if (std::isnan(value)) return "nan";
    if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.3e", value);
    return buf;
}

void Table::print(std::ostream& out) const {
    const std::size_t columns = m_headers.size();
    std::vector<std::size_t> width(columns);
    std::vector<bool> numeric(columns, true);
    for (std::size_t c = 0; c < columns; ++c) width[c] = m_headers[c].size();
    for (const auto& row : m_rows)
        for (std::size_t c = 0; c < columns && c < row.size(); ++c) {
            width[c] = std::max(width[c], row[c].size());
            numeric[c] = numeric[c] && looks_numeric(row[c]);
        }
    const auto line = [&](const std::vector<std::string>& cells) {
        for (std::size_t c = 0; c < columns; ++c) {
            const std::string& cell = c < cells.size() ? cells[c] : std::string();
            const std::string pad(width[c] - cell.size(), ' ');
            out << (c ? "  " : "") << (numeric[c] ? pad + cell : cell + (c + 1 < columns ? pad : ""));
        }
        out << '\n';
    };
    line(m_headers);
    std::size_t total = 0;
    for (std::size_t c = 0; c < columns; ++c) total += width[c] + (c ? 2 : 0);
    out << std::string(total, '-') << '\n';
    for (const auto& row : m_rows) line(row);
}

}  // namespace fastsim::output
