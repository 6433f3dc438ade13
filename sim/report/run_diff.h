// SPDX-License-Identifier: MIT
// `fastsim diff A B`: two `fastsim run --out` directories side by side.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace fastsim::report {

/// One number of both runs; absent where a run does not have it.
struct DiffValue {
    std::optional<double> a, b;
};

struct TotalDiff {
    std::string name;  ///< report.json member; "object.member" one level down ("energy_pj.dram")
    DiffValue value;
};

struct LayerDiff {
    enum class OnlyIn { neither, a, b };
    std::string key;                ///< layer, and phase for a node run, joined by " / " ("conv1 / forward")
    std::vector<DiffValue> values;  ///< one per RunDiff::layer_columns
    OnlyIn only_in = OnlyIn::neither;
};

struct RunDiff {
    std::string config_a, config_b;          ///< report.json's "config"
    std::vector<TotalDiff> totals;           ///< every number of report.json outside arrays, A's order, then B's extra
    std::vector<std::string> layer_columns;  ///< layers.csv columns compared: the headline ones both runs have
    std::vector<LayerDiff> layers;           ///< rows matched by key: A's order, then rows only B has
};

/// Reads DIR/report.json and DIR/layers.csv of both directories. Layer rows match on layer,
/// and phase in node runs. The compared columns are cycles, energy_total_pj, planned_s and
/// simulated_s where both files have them, else every numeric column both have. Throws
/// UserError naming the file (and line) for a missing or malformed one, a key given twice, a
/// non-finite number, or a node run compared with a cluster run.
RunDiff diff_runs(const std::string& dir_a, const std::string& dir_b);

/// (b - a) / |a| in percent, or nothing when a is 0 or either is absent.
std::optional<double> percent_change(const DiffValue& v);

}  // namespace fastsim::report
