// SPDX-License-Identifier: MIT
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "common/csv_writer.h"
#include "run/collective_run.h"

namespace fastsim::output {

/// collective.csv's columns: op, algorithm, dimensions, ranks, bytes, time_s, closed_form_s
/// (empty where there is none), algbw_gb_per_s, busbw_gb_per_s (docs/cli.md, "fastsim
/// collective").
const CsvWriter<run::CollectiveRow>& collective_csv();

/// The same rows as a terminal table, times in microseconds.
void print_collective_table(std::ostream& out, const std::vector<run::CollectiveRow>& rows);

}  // namespace fastsim::output
