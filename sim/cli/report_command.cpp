// SPDX-License-Identifier: MIT
// `fastsim report DIR`: an HTML page and SVG plots from a sweep or run directory.
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <iostream>
#include <optional>

#include <boost/program_options.hpp>

#include "cli/app.h"
#include "cli/logging.h"
#include "common/errors.h"
#include "common/output_files.h"
#include "report/results_dir.h"
#include "report/run_agreement.h"
#include "sweep/run_dir.h"

namespace fastsim::cli {

int report_command(const std::vector<std::string>& args) {
    namespace po = boost::program_options;
    const std::string usage = "fastsim report DIR [--out FILE] [--plots-dir DIR]";
    po::options_description options(
        usage +
        "\n\nWrites a self-contained HTML page (summary tables, plots, energy breakdown) of a sweep\n"
        "directory (sweep.json, results.csv), a run directory (fastsim run --out: report.json,\n"
        "layers.csv) or a training directory (fastsim train --out: comparison.csv, accuracy.csv),\n"
        "and each plot as an SVG file.\n\nOptions");
    std::string dir, out_file, plots_dir;
    options.add_options()("dir", po::value(&dir), "the sweep, run or training directory")(
        "out", po::value(&out_file), "the HTML file to write (default: DIR/report.html)")(
        "plots-dir", po::value(&plots_dir), "where the SVG plots go (default: DIR/plots)");
    po::positional_options_description positional;
    positional.add("dir", 1);
    if (!parse_command_line(args, options, positional)) return kSuccess;
    if (dir.empty()) throw UserError("missing DIR: " + usage);
    while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
    if (out_file.empty()) out_file = dir + "/report.html";
    sweep::refuse_replacing_result_file(out_file, "--out");
    if (plots_dir.empty()) plots_dir = dir + "/plots";

    // 1. Read the directory and build the page; 2. write the plots, then the page, each atomically.
    const auto start = std::chrono::steady_clock::now();
    // A run folder is locked while its page is read and written, as a command writing into it
    // locks it; one cut short or mixed is refused before its files are read.
    std::optional<sweep::SweepDirLock> lock;
    if (sweep::holds_run(dir) && ::access(dir.c_str(), W_OK) == 0) lock.emplace(dir, sweep::Shard{}, "report");
    sweep::check_complete_run(dir);
    const report::ResultsDirKind kind = report::classify_results_dir(dir);
    const bool run_folder = kind == report::ResultsDirKind::run || kind == report::ResultsDirKind::train;
    const report::ReportPage page = kind == report::ResultsDirKind::sweep     ? report::sweep_report(dir)
                                    : kind == report::ResultsDirKind::run     ? report::run_report(dir)
                                    : kind == report::ResultsDirKind::explore ? report::explore_report(dir)
                                                                              : report::train_report(dir);
    // After the page, whose readers name a malformed file's key: an earlier version's folder agrees.
    if (run_folder) report::check_run_files_agree(dir);
    static constexpr const char* kKind[] = {"sweep", "run", "train", "explore"};
    for (const auto& [name, svg] : page.plots) fastsim::write_file_atomically(plots_dir + "/" + name, svg);
    fastsim::write_file_atomically(out_file, page.html);
    // An exploration's knee, run in full into DIR/knee: its own page, which the explore page links.
    if (const std::string knee = dir + "/knee";
        kind == report::ResultsDirKind::explore && std::filesystem::exists(knee + "/report.json")) {
        sweep::check_complete_run(knee);
        const report::ReportPage knee_page = report::run_report(knee);
        for (const auto& [name, svg] : knee_page.plots) fastsim::write_file_atomically(knee + "/plots/" + name, svg);
        fastsim::write_file_atomically(knee + "/report.html", knee_page.html);
    }
    logger("report")->info("{} report of {} in {:.1f} ms", kKind[static_cast<int>(kind)], dir,
                           std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    std::cout << "wrote " << out_file << " and " << page.plots.size() << " plot" << (page.plots.size() == 1 ? "" : "s")
              << " in " << plots_dir << "\n";
    return kSuccess;
}

}  // namespace fastsim::cli
