// SPDX-License-Identifier: MIT
// Whether a run folder's files describe one run (docs/reports.md, "Reading a run folder back"):
// each file is checked for its own keys and values where it is read; this checks them against
// each other, so a file of another run, or one edited by hand, is refused by name.
#pragma once

#include <string>

namespace fastsim::report {

/// Refuses (UserError naming the file, its line or key, and the folder) a run folder whose
/// files disagree, with or without a manifest:
/// - summary.json against report.json: the step's time and energy (required in both), each
///   energy component, and the cycles, MACs, area and power both give;
/// - a training step's layers.csv against report.json's `phases`: the same columns in the same
///   order and, row by row, the same values;
/// - a cluster step's nodes.csv against report.json: nodes 0 … `nodes` − 1 in order, and each
///   energy component summed over the nodes equal to report.json's.
/// A folder without report.json (train, plan, compare) is left to its own readers.
void check_run_files_agree(const std::string& dir);

}  // namespace fastsim::report
