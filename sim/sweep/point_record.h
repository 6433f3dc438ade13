// SPDX-License-Identifier: MIT
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/errors.h"
#include "common/summary.h"
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
    fastsim::Summary results;  ///< summary.json's fields, empty when failed
};

std::string point_record_json(const PointRecord& record);

/// A point.json that is not valid JSON: cut short by a crash before the disk flushed it (a
/// point.json is only ever written whole), so its point counts as not run.
class UnreadablePointRecord : public UserError {
public:
    using UserError::UserError;
};

/// Reads a point.json; std::nullopt if it is missing, UnreadablePointRecord if it is not JSON,
/// and UserError naming the file and key for valid JSON that is not a point record (a missing
/// or mistyped member, an index that is not a whole number, a result that is not a number or is
/// negative where results cannot be).
std::optional<PointRecord> read_point_record(const std::string& path);

/// True when two records of the same point give the same outcome and results.
bool same_outcome(const PointRecord& a, const PointRecord& b);
/// True for result columns that are signed (names ending in "_error" or "error_percent"); every
/// other result fastsim writes (cycles, seconds, MACs, bits, energies, utilisation) is >= 0, and
/// a negative one read back is an error, not a plot.
bool result_may_be_negative(std::string_view name);

/// Reads a run's summary.json (a flat object of numbers); throws UserError naming it.
fastsim::Summary read_summary(const std::string& path);

}  // namespace fastsim::sweep
