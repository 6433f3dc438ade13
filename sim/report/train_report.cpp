// SPDX-License-Identifier: MIT
// `fastsim report` of a `fastsim train --out` directory (docs/reports.md).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>

#include "common/csv_reader.h"
#include "common/errors.h"
#include "common/output_files.h"
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

/// A table's rows by policy, in order of first appearance: (policy, row indices).
std::vector<std::pair<std::string, std::vector<std::size_t>>> rows_by_policy(const CsvTable& csv) {
    const std::size_t policy = *csv.column("policy");
    std::vector<std::pair<std::string, std::vector<std::size_t>>> out;
    for (std::size_t r = 0; r < csv.rows.size(); ++r) {
        const std::string& name = csv.rows[r][policy];
        auto it = std::find_if(out.begin(), out.end(), [&](const auto& p) { return p.first == name; });
        if (it == out.end()) it = out.insert(out.end(), {name, {}});
        it->second.push_back(r);
    }
    return out;
}

/// The number in row r's column `name` (check_run_table has made every such cell a number or
/// empty): nothing when empty or when the table has no such column.
std::optional<double> number_at(const CsvTable& csv, std::size_t r, std::string_view name) {
    const std::optional<std::size_t> c = csv.column(name);
    return c ? parse_number(csv.rows[r][*c]) : std::nullopt;
}

std::string where(const CsvTable& csv, std::size_t r) { return csv.source + ":" + std::to_string(csv.row_lines[r]); }

bool agree(double a, double b) { return std::abs(a - b) <= 1e-9 + 1e-6 * std::max(std::abs(a), std::abs(b)); }

/// Per policy, the epochs 1, 2, … in order, each once, as train writes them; accuracies are
/// fractions. UserError naming the file and line otherwise.
void check_epochs(const CsvTable& csv, const std::vector<std::size_t>& rows, const std::string& policy) {
    for (std::size_t k = 0; k < rows.size(); ++k) {
        const std::size_t r = rows[k];
        const std::optional<double> epoch = number_at(csv, r, "epoch");
        if (!epoch || *epoch != static_cast<double>(k + 1))
            throw UserError(where(csv, r) + ": epoch: expected " + std::to_string(k + 1) + " for policy '" + policy +
                            "' (its epochs run 1, 2, … in order, each once, as fastsim train writes them), got '" +
                            csv.rows[r][*csv.column("epoch")] + "'");
        for (const char* fraction : {"train_accuracy", "test_accuracy"})
            if (const std::optional<double> v = number_at(csv, r, fraction); v && *v > 1)
                throw UserError(where(csv, r) + ": " + fraction + ": expected a fraction from 0 to 1, got " +
                                csv.rows[r][*csv.column(fraction)]);
    }
}

/// What `fastsim train` writes agrees with itself: the same policies in comparison.csv,
/// accuracy.csv and (costed ones) cost.csv; each final accuracy the last epoch's; cost.csv's
/// cycles_so_far the running sum of its cycles, and its last running sums comparison.csv's
/// totals; the plots every run draws present.
/// UserError naming the file (and line) that disagrees.
void check_train_folder(const std::string& dir, const CsvTable& comparison, const CsvTable& accuracy,
                        const std::optional<CsvTable>& cost) {
    const auto compared = rows_by_policy(comparison), trained = rows_by_policy(accuracy);
    for (const auto& [policy, rows] : compared)
        if (rows.size() > 1)
            throw UserError(where(comparison, rows[1]) + ": policy '" + policy + "' is given twice (first on line " +
                            std::to_string(comparison.row_lines[rows[0]]) + ")");
    std::vector<std::string> compared_names, trained_names;
    for (const auto& p : compared) compared_names.push_back(p.first);
    for (const auto& p : trained) trained_names.push_back(p.first);
    const auto listed = [](const std::vector<std::string>& names) {
        std::string out;
        for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
        return out;
    };
    if (compared_names != trained_names)
        throw UserError(dir + " mixes two training runs: comparison.csv has the policies " + listed(compared_names) +
                        ", accuracy.csv " + listed(trained_names));
    for (std::size_t p = 0; p < compared.size(); ++p) {
        const std::string& policy = compared[p].first;
        const std::vector<std::size_t>& epochs = trained[p].second;
        check_epochs(accuracy, epochs, policy);
        const std::size_t row = compared[p].second.front();
        const std::optional<double> final_accuracy = number_at(comparison, row, "final_test_accuracy"),
                                    last = number_at(accuracy, epochs.back(), "test_accuracy");
        if (!final_accuracy || !last || !agree(*final_accuracy, *last))
            throw UserError(where(comparison, row) + ": final_test_accuracy of policy '" + policy + "' is '" +
                            comparison.rows[row][*comparison.column("final_test_accuracy")] +
                            "', accuracy.csv's last epoch (" + where(accuracy, epochs.back()) + ") has " +
                            accuracy.rows[epochs.back()][*accuracy.column("test_accuracy")] + ": " + dir +
                            " mixes two training runs");
    }
    if (cost) {
        for (const auto& [policy, rows] : rows_by_policy(*cost)) {
            const auto it = std::find(compared_names.begin(), compared_names.end(), policy);
            if (it == compared_names.end())
                throw UserError(where(*cost, rows.front()) + ": policy '" + policy + "' is not in comparison.csv (" +
                                listed(compared_names) + "): " + dir + " mixes two training runs");
            const auto p = static_cast<std::size_t>(it - compared_names.begin());
            check_epochs(*cost, rows, policy);
            if (rows.size() != trained[p].second.size())
                throw UserError(cost->source + ": policy '" + policy + "' has " + std::to_string(rows.size()) +
                                " epochs, accuracy.csv " + std::to_string(trained[p].second.size()) + ": " + dir +
                                " mixes two training runs");
            double cycles = 0;
            for (const std::size_t r : rows) {
                cycles += number_at(*cost, r, "cycles").value_or(0);
                if (const std::optional<double> v = number_at(*cost, r, "cycles_so_far"); v && !agree(*v, cycles))
                    throw UserError(where(*cost, r) + ": cycles_so_far is " +
                                    cost->rows[r][*cost->column("cycles_so_far")] + ", the sum of the epochs so far " +
                                    fastsim::format_number(cycles));
            }
            // comparison.csv's totals are the last epoch's running sums.
            const std::size_t row = compared[p].second.front();
            for (const auto& [column, so_far] :
                 {std::pair{"total_cycles", "cycles_so_far"}, {"total_energy_uj", "energy_so_far_uj"}}) {
                const std::optional<double> total = number_at(comparison, row, column),
                                            last = number_at(*cost, rows.back(), so_far);
                if (total && last && !agree(*total, *last))
                    throw UserError(where(comparison, row) + ": " + column + " of policy '" + policy + "' is " +
                                    comparison.rows[row][*comparison.column(column)] + ", cost.csv's last " + so_far +
                                    " (" + where(*cost, rows.back()) + ") " +
                                    cost->rows[rows.back()][*cost->column(so_far)] + ": " + dir +
                                    " mixes two training runs");
            }
        }
    }
    for (const char* plot : {"accuracy.svg", "accuracy_vs_cycles.svg", "cycles_per_epoch.svg"})
        if (!std::filesystem::is_regular_file(std::filesystem::path(dir) / "plots" / plot))
            throw UserError(dir + "/plots/" + plot +
                            ": missing; fastsim train writes it last, so the run did not finish or the folder was "
                            "edited");
}

}  // namespace

ReportPage train_report(const std::string& dir) {
    const CsvTable comparison = read_csv_file(dir + "/comparison.csv");
    const CsvTable accuracy = read_csv_file(dir + "/accuracy.csv");
    check_run_table(comparison, {"policy", "final_test_accuracy"}, {"policy"}, Signs::nonnegative);
    check_run_table(accuracy, {"policy", "epoch", "test_accuracy"}, {"policy"}, Signs::nonnegative);
    // cost.csv: train writes its header at the start, and a row per epoch of each costed policy;
    // with none costed (policies: [fp32]) it stays a header.
    std::optional<CsvTable> cost;
    if (std::filesystem::exists(dir + "/cost.csv")) {
        cost = read_csv_file(dir + "/cost.csv");
        if (cost->rows.empty())
            cost.reset();
        else
            check_run_table(*cost, {"policy", "epoch", "cycles"}, {"policy"}, Signs::nonnegative);
    }
    check_train_folder(dir, comparison, accuracy, cost);
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
    if (cost) {
        page.section("Cost per epoch", "cost");
        page.table(html_table(*cost, "Cycles and energy (µJ) per policy and epoch on the node (cost.csv)"));
    }
    report.html = page.render();
    return report;
}

}  // namespace fastsim::report
