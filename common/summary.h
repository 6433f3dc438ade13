// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace fastsim {

/// A run's key results: name (with its unit as suffix) and value, in a fixed order. These are
/// summary.json's fields and, for sweeps, results.csv's result columns (docs/sweeps.md).
using Summary = std::vector<std::pair<std::string, double>>;

/// A flat JSON object {"name": value, ...}, one field per line.
std::string summary_json(const Summary& summary);

}  // namespace fastsim
