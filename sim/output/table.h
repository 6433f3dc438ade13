// SPDX-License-Identifier: MIT
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace fastsim::output {

/// A plain-text table: a header row, then rows of cells; text columns are left-aligned,
/// columns whose cells all look numeric are right-aligned.
class Table {
public:
    explicit Table(std::vector<std::string> headers) : m_headers(std::move(headers)) {}

    void add_row(std::vector<std::string> cells) { m_rows.push_back(std::move(cells)); }
    void print(std::ostream& out) const;

    /// `value` with `decimals` digits after the point ("inf"/"nan" as such).
    static std::string fixed(double value, int decimals);
    /// `value` in %.3e form.
    static std::string scientific(double value);

private:
    std::vector<std::string> m_headers;
    std::vector<std::vector<std::string>> m_rows;
};

}  // namespace fastsim::output
