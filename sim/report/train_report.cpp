// SPDX-License-Identifier: MIT
// `fastsim report` of a `fastsim train --out` directory (docs/reports.md).
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "common/csv_reader.h"
#include "common/errors.h"
#include "report/html_page.h"
#include "report/results_dir.h"

namespace fastsim::report {
namespace {

/// The plots `fastsim train` wrote, in name order: (file name, SVG document).
std::vector<std::pair<std::string, std::string>> written_plots(const std::string& dir) {
    namespace fs = std::filesystem;
    std::vector<std::pair<std::string, std::string>> plots;
    const fs::path plots_dir = fs::path(dir) / "plots";
    if (!fs::is_directory(plots_dir)) return plots;
    for (const fs::directory_entry& e : fs::directory_iterator(plots_dir)) {
        if (!e.is_regular_file() || e.path().extension() != ".svg") continue;
        std::ifstream in(e.path(), std::ios::binary);
        std::ostringstream text;
        text << in.rdbuf();
        if (!in && !in.eof()) throw UserError(e.path().string() + ": cannot read");
        // Pasted into the page as it is: only a whole SVG document, as train writes it.
        const std::string svg = text.str();
        const std::size_t end = svg.find_last_not_of(" \t\r\n");
        if (svg.rfind("<svg", 0) != 0 || end == std::string::npos || end < 5 || svg.compare(end - 5, 6, "</svg>") != 0)
            throw UserError(e.path().string() + ": not a whole SVG document (<svg … </svg>), as fastsim train writes");
        // report.html runs no script: a plot that could (fastsim's never do) is refused.
        std::string lower(svg.size(), ' ');
        std::transform(svg.begin(), svg.end(), lower.begin(),
                       [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
        static const std::regex active(R"(<script|<foreignobject|javascript:|<iframe|\son[a-z]+\s*=)");
        if (std::regex_search(lower, active))
            throw UserError(e.path().string() +
                            ": holds a script, an event handler or embedded HTML, which no plot fastsim train writes "
                            "does (report.html runs no script)");
        plots.emplace_back(e.path().filename().string(), text.str());
    }
    std::sort(plots.begin(), plots.end());
    return plots;
}

}  // namespace

ReportPage train_report(const std::string& dir) {
    const CsvTable comparison = read_csv_file(dir + "/comparison.csv");
    const CsvTable accuracy = read_csv_file(dir + "/accuracy.csv");
    check_run_table(comparison, {"policy", "final_test_accuracy"}, {"policy"}, Signs::nonnegative);
    check_run_table(accuracy, {"policy", "epoch", "test_accuracy"}, {"policy"}, Signs::nonnegative);
    ReportPage report;
    HtmlPage page("fastsim train report", "the policies trained in " + dir);
    page.section("Policies", "policies");
    page.table(html_table(comparison,
                          "Each policy's final test accuracy, the whole run's cycles and energy (µJ) on the node, and "
                          "FAST's speed-up and energy ratio against it (comparison.csv)"));
    report.plots = written_plots(dir);
    if (!report.plots.empty()) {
        page.section("Plots", "plots");
        for (const auto& [name, svg] : report.plots) page.figure(svg, name + " (as fastsim train wrote it)");
    }
    page.section("Accuracy per epoch", "accuracy");
    page.table(html_table(accuracy, "Loss and accuracy per policy and epoch (accuracy.csv; wall_s in seconds)"));
    if (std::filesystem::exists(dir + "/cost.csv")) {
        page.section("Cost per epoch", "cost");
        page.table(html_table(read_csv_file(dir + "/cost.csv"),
                              "Cycles and energy (µJ) per policy and epoch on the node (cost.csv)"));
    }
    report.html = page.render();
    return report;
}

}  // namespace fastsim::report
