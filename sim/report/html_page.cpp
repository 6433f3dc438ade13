// SPDX-License-Identifier: MIT
#include "report/html_page.h"

#include <cmath>
#include <cstdio>

#include "common/csv_reader.h"
#include "report/svg_chart.h"

namespace fastsim::report {
namespace {

using charts::xml_escape;

constexpr const char* kStyle = R"(
body { font-family: "DejaVu Sans", Arial, Helvetica, sans-serif; margin: 1.5em 2em; color: #1a1a1a; background: #fff; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; }
h2 { font-size: 1.2em; margin-top: 2em; border-bottom: 1px solid #ccc; padding-bottom: 0.2em; }
p.subtitle { color: #555; margin-top: 0; }
nav { font-size: 0.9em; margin: 0.5em 0 1em; }
nav a { margin-right: 1em; }
.table-wrap { overflow-x: auto; max-width: 100%; }
table { border-collapse: collapse; font-size: 0.85em; margin: 0.5em 0 1em; }
caption { text-align: left; font-weight: bold; padding: 0.3em 0; }
th, td { border: 1px solid #d0d0d0; padding: 0.2em 0.5em; white-space: nowrap; }
th { background: #f0f0f0; text-align: left; }
td.num { text-align: right; font-variant-numeric: tabular-nums; }
tr:nth-child(even) td { background: #fafafa; }
td.status-failed { color: #b00020; font-weight: bold; }
figure { margin: 1em 0; overflow-x: auto; }
figcaption { font-size: 0.9em; color: #444; max-width: 60em; }
)";

}  // namespace

std::string display_number(double value) {
    char buf[48];
    if (std::isfinite(value) && std::abs(value) < 1e15 && value == std::round(value))
        std::snprintf(buf, sizeof buf, "%.0f", value);
    else if (std::isfinite(value) && std::abs(value) >= 1e5 && std::abs(value) < 1e15)
        std::snprintf(buf, sizeof buf, "%.1f", value);
    else
        std::snprintf(buf, sizeof buf, "%.6g", value);
    return std::string(buf) == "-0" ? "0" : buf;
}

HtmlPage::HtmlPage(std::string title, std::string subtitle)
    : m_title(std::move(title)), m_subtitle(std::move(subtitle)) {}

void HtmlPage::section(const std::string& heading, const std::string& id) {
    m_contents.emplace_back(id, heading);
    m_body += "<h2 id=\"" + xml_escape(id) + "\">" + xml_escape(heading) + "</h2>\n";
}

void HtmlPage::paragraph(const std::string& text) { m_body += "<p>" + xml_escape(text) + "</p>\n"; }

void HtmlPage::link(const std::string& text, const std::string& href, const std::string& label) {
    m_body += "<p>" + xml_escape(text) + " <a href=\"" + xml_escape(href) + "\">" + xml_escape(label) + "</a></p>\n";
}

void HtmlPage::table(const HtmlTable& table) {
    std::string out = "<div class=\"table-wrap\"><table>\n";
    if (!table.caption.empty()) out += "<caption>" + xml_escape(table.caption) + "</caption>\n";
    out += "<thead><tr>";
    for (const auto& h : table.headers) out += "<th>" + xml_escape(h) + "</th>";
    out += "</tr></thead>\n<tbody>\n";
    for (const auto& row : table.rows) {
        out += "<tr>";
        for (const auto& cell : row) {
            if (const auto number = parse_number(cell))
                out += "<td class=\"num\">" + xml_escape(display_number(*number)) + "</td>";
            else if (cell == "failed")
                out += "<td class=\"status-failed\">failed</td>";
            else
                out += "<td>" + xml_escape(cell) + "</td>";
        }
        out += "</tr>\n";
    }
    m_body += out + "</tbody>\n</table></div>\n";
}

void HtmlPage::figure(const std::string& svg, const std::string& caption) {
    m_body += "<figure>\n" + svg + "<figcaption>" + xml_escape(caption) + "</figcaption>\n</figure>\n";
}

std::string HtmlPage::render() const {
    std::string out =
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>" +
        xml_escape(m_title) + "</title>\n<style>" + kStyle + "</style>\n</head>\n<body>\n<h1>" + xml_escape(m_title) +
        "</h1>\n";
    if (!m_subtitle.empty()) out += "<p class=\"subtitle\">" + xml_escape(m_subtitle) + "</p>\n";
    if (!m_contents.empty()) {
        out += "<nav>";
        for (const auto& [id, heading] : m_contents)
            out += "<a href=\"#" + xml_escape(id) + "\">" + xml_escape(heading) + "</a>";
        out += "</nav>\n";
    }
    return out + m_body + "</body>\n</html>\n";
}

HtmlTable html_table(const CsvTable& csv, const std::string& caption) {
    HtmlTable t;
    t.caption = caption;
    t.headers = csv.header;
    t.rows = csv.rows;
    return t;
}

}  // namespace fastsim::report
