// SPDX-License-Identifier: MIT
// `fastsim report`: an HTML page and SVG plots from a finished sweep or run directory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/csv_reader.h"

namespace fastsim::report {

/// What a report consists of: the page and its charts as standalone SVG documents.
struct ReportPage {
    std::string html;                                        ///< a self-contained HTML document (the charts inlined)
    std::vector<std::pair<std::string, std::string>> plots;  ///< (file name such as "cycles.svg", SVG document)
};

enum class ResultsDirKind {
    sweep,   ///< sweep.json and results.csv (fastsim sweep --out DIR)
    run,     ///< report.json and layers.csv (fastsim run CONFIG --out DIR)
    train,   ///< comparison.csv and accuracy.csv (fastsim train CONFIG --out DIR)
    explore  ///< explore.json, designs.csv and pareto.csv (fastsim explore SPACE --out DIR)
};

/// Which kind of directory `dir` is. Throws UserError naming `dir` if it is missing or
/// is neither (a sweep takes precedence when both sets of files are present).
ResultsDirKind classify_results_dir(const std::string& dir);

/// What every table a run writes holds (layers.csv, nodes.csv, train's CSVs), checked before a
/// reader uses one, with or without a manifest: at least one row, the columns `required`, and
/// every cell outside the `text` columns empty or a finite number, at least 0 where
/// `nonnegative` (every number layers.csv and nodes.csv hold is a count, time, energy or size).
/// UserError naming the file and line (or the header) otherwise.
enum class Signs : std::uint8_t { any, nonnegative };
void check_run_table(const CsvTable& csv, const std::vector<std::string>& required,
                     const std::vector<std::string>& text, Signs signs);

/// The report of a sweep directory (docs/reports.md). Throws UserError naming the file
/// (and line or key) for a missing or malformed sweep.json or results.csv.
ReportPage sweep_report(const std::string& dir);

/// The report of a `fastsim run --out` directory, node or cluster (docs/reports.md). Throws
/// UserError naming the file for a missing or malformed report.json, layers.csv or nodes.csv.
ReportPage run_report(const std::string& dir);

/// The report of a `fastsim train --out` directory (docs/reports.md): the policies' comparison,
/// the plots train wrote, accuracy and cost per epoch. Throws UserError naming the file for a
/// missing or malformed comparison.csv or accuracy.csv.
ReportPage train_report(const std::string& dir);

/// The report of a `fastsim explore --out` directory (docs/reports.md, "The explore page"): the
/// search's counts, the knee, each pair of objectives with the feasible designs and the front.
/// Throws UserError naming the file for a missing or malformed explore.json, designs.csv or
/// pareto.csv.
ReportPage explore_report(const std::string& dir);

/// The front member nearest the ideal point (each objective's least on the front), every
/// objective scaled to [0, 1] over the front (a constant one counts 0); nothing for no members.
std::optional<std::size_t> knee_of(const std::vector<std::vector<double>>& front);

}  // namespace fastsim::report
