// SPDX-License-Identifier: MIT
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "report/summary.h"
#include "sweep/sweep_spec.h"

namespace fastsim::sweep {

/// What a finished point left: DIR/points/<id>/point.json, written atomically after its
/// `fastsim run` child exited. A point without one was never finished and runs again.
struct PointRecord {
    std::string id;
    std::size_t index = 0;
    bool ok = false;                 ///< exit status 0 and a readable summary.json
    std::optional<int> exit_status;  ///< absent when a signal ended the child
    std::string signal;              ///< "SIGSEGV" etc. when a signal ended it
    std::string error;               ///< why it failed: the child's last stderr line, or the signal
    double wall_s = 0;               ///< child's wall time, not part of results.csv
    std::string base_config;
    std::vector<std::pair<std::string, std::string>> values;  ///< axis key -> value text
    std::vector<std::string> overrides;
    report::Summary results;  ///< summary.json's fields, empty when failed
};

std::string point_record_json(const PointRecord& record);
/// Reads a point.json; std::nullopt if it is missing, and UserError naming the file if
/// it is unreadable (a point.json is only ever written whole).
std::optional<PointRecord> read_point_record(const std::string& path);
/// True for result columns that are signed (names ending in "_error" or "error_percent"); every
/// other result (cycles, energies, utilisation, ...) is >= 0, and a negative one read back is
/// an error.
bool result_may_be_negative(const std::string& name);

/// Reads a run's summary.json (a flat object of numbers); throws UserError naming it.
report::Summary read_summary(const std::string& path);

}  // namespace fastsim::sweep
