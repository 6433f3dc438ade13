// SPDX-License-Identifier: MIT
// SCALE-Sim v2's three report files, written as its scalesim/simulator.py writes them.
#pragma once

#include <string>
#include <vector>

#include "scalesim/scalesim.h"

namespace fastsim::report {

/// `v` as Python's str(float) prints it: the shortest digits that read back to `v`, fixed
/// notation for exponents -4 to 15 ("100.0", "0.0001"), else scientific ("1e-05", "1.5e+16").
std::string python_float(double v);

struct ScalesimReports {
    std::string compute, bandwidth,
        detailed_access;  ///< COMPUTE_REPORT.csv, BANDWIDTH_REPORT.csv, DETAILED_ACCESS_REPORT.csv
};

/// The reports of a run, one row per layer in order, with SCALE-Sim's headers and its
/// "value, value," layout (generate_reports).
ScalesimReports scalesim_reports(const std::vector<scalesim::LayerReport>& layers);

}  // namespace fastsim::report
