// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <vector>

#include "common/csv_reader.h"

namespace fastsim::report {

/// How report pages show a number: integers (|v| < 10^15) in full; other values with
/// 10^5 <= |v| < 10^15 with one decimal ("%.1f"); anything else with 6 significant digits
/// ("%.6g"); "nan"/"inf" as such.
std::string display_number(double value);

/// A table for an HtmlPage: cells are plain text (escaped when rendered); cells that parse as
/// numbers are shown with display_number and right-aligned; a cell "failed" is shown in red.
struct HtmlTable {
    std::vector<std::string> headers;
    std::vector<std::vector<std::string>> rows;
    std::string caption;  ///< optional, shown above the table
};

/// Every column and row of `csv` as an HtmlTable.
HtmlTable html_table(const CsvTable& csv, const std::string& caption);

/// A self-contained HTML5 page: inline CSS, inline SVG, no scripts, no external resources.
/// Sections are appended in order; all text is escaped, SVG markup is inserted as it is.
class HtmlPage {
public:
    /// `title` is the <title> and the <h1>; `subtitle` a line under it (may be empty).
    HtmlPage(std::string title, std::string subtitle);

    /// A section heading (h2) with an anchor id listed in the page's contents line.
    void section(const std::string& heading, const std::string& id);
    void paragraph(const std::string& text);
    /// A paragraph of `text` followed by a link to `href` (a path relative to the page).
    void link(const std::string& text, const std::string& href, const std::string& label);
    void table(const HtmlTable& table);
    /// An inline SVG document (from fastsim::charts) with a caption under it.
    void figure(const std::string& svg, const std::string& caption);

    [[nodiscard]] std::string render() const;

private:
    std::string m_title;
    std::string m_subtitle;
    std::vector<std::pair<std::string, std::string>> m_contents;  ///< (id, heading)
    std::string m_body;
};

}  // namespace fastsim::report
