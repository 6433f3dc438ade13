// SPDX-License-Identifier: MIT
// `fastsim diff A B`: totals and per-layer changes between two run directories.
#include <iostream>

#include <boost/program_options.hpp>

#include "cli/app.h"
#include "cli/logging.h"
#include "common/errors.h"
#include "common/output_files.h"
#include "report/run_diff.h"
#include "report/results_dir.h"
#include "report/run_agreement.h"
#include "sweep/run_dir.h"
#include "output/table.h"

namespace fastsim::cli {
namespace {

std::string number(const std::optional<double>& v) { return v ? format_number(*v) : "-"; }

std::string change(const report::DiffValue& v) {
    if (!v.a || !v.b) return v.a ? "only in A" : "only in B";
    if (*v.a == *v.b) return "=";
    const auto percent = report::percent_change(v);
    if (!percent) return "from 0";
    return (*percent >= 0 ? "+" : "") + output::Table::fixed(*percent, 2) + "%";
}

bool differs(const report::DiffValue& v) { return !v.a || !v.b || *v.a != *v.b; }

}  // namespace

int diff_command(const std::vector<std::string>& args) {
    namespace po = boost::program_options;
    const std::string usage = "fastsim diff A B [--all]";
    po::options_description options(
        usage +
        "\n\nCompares two run directories (fastsim run --out): every total of report.json, then\n"
        "the layers of layers.csv whose cycles, energy or time differ.\n\nOptions");
    std::vector<std::string> dirs;
    options.add_options()("dirs", po::value(&dirs), "the two run directories")(
        "all", "also list the totals and layers that are equal");
    po::positional_options_description positional;
    positional.add("dirs", 2);
    const auto vm = parse_command_line(args, options, positional);
    if (!vm) return kSuccess;
    if (dirs.size() != 2) throw UserError("expected two run directories: " + usage);
    const bool all = vm->count("all") > 0;
    for (const std::string& dir : dirs) {
        sweep::check_complete_run(dir);
        // A run folder (report.json): diff compares two steps, layer by layer.
        if (const report::ResultsDirKind kind = report::classify_results_dir(dir); kind != report::ResultsDirKind::run)
            throw UserError(dir + ": a " +
                            (kind == report::ResultsDirKind::train   ? std::string("training (fastsim train --out)")
                             : kind == report::ResultsDirKind::sweep ? std::string("sweep")
                                                                     : std::string("exploration")) +
                            " directory; diff compares two run directories (fastsim run --out), each with "
                            "report.json and layers.csv");
    }
    const report::RunDiff diff = report::diff_runs(dirs[0], dirs[1]);
    for (const std::string& dir : dirs) report::check_run_files_agree(dir);  // after diff_runs names a bad key

    std::cout << "A: " << dirs[0] << " (config " << diff.config_a << ")\nB: " << dirs[1] << " (config " << diff.config_b
              << ")\n\n";
    output::Table totals({"total", "A", "B", "B - A", "change"});
    std::size_t equal_totals = 0;
    for (const auto& t : diff.totals) {
        if (!all && !differs(t.value)) {
            ++equal_totals;
            continue;
        }
        const std::optional<double> delta =
            t.value.a && t.value.b ? std::optional<double>(*t.value.b - *t.value.a) : std::nullopt;
        totals.add_row({t.name, number(t.value.a), number(t.value.b), number(delta), change(t.value)});
    }
    totals.print(std::cout);
    if (equal_totals > 0) std::cout << "(" << equal_totals << " equal totals not shown; --all shows them)\n";

    std::vector<std::string> headers{"layer"};
    for (const std::string& c : diff.layer_columns) {
        headers.push_back(c + " A");
        headers.push_back(c + " B");
        headers.push_back("change");
    }
    output::Table layers(headers);
    std::size_t equal_layers = 0;
    for (const auto& row : diff.layers) {
        bool any = row.only_in != report::LayerDiff::OnlyIn::neither;
        for (const auto& v : row.values) any = any || differs(v);
        if (!all && !any) {
            ++equal_layers;
            continue;
        }
        std::vector<std::string> cells{row.key + (row.only_in == report::LayerDiff::OnlyIn::a   ? " (only in A)"
                                                  : row.only_in == report::LayerDiff::OnlyIn::b ? " (only in B)"
                                                                                                : "")};
        for (const auto& v : row.values) {
            cells.push_back(number(v.a));
            cells.push_back(number(v.b));
            cells.push_back(change(v));
        }
        layers.add_row(cells);
    }
    std::cout << "\nlayers (layers.csv):\n";
    layers.print(std::cout);
    if (equal_layers > 0) std::cout << "(" << equal_layers << " equal layers not shown; --all shows them)\n";
    return kSuccess;
}

}  // namespace fastsim::cli
