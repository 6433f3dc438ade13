// SPDX-License-Identifier: MIT
#pragma once

#include <string>

namespace fastsim::run {

/// What produced a result, recorded in report.json: the fastsim version and the command line
/// that re-runs it.
struct RunProvenance {
    std::string fastsim_version;
    std::string command_line;  ///< quoted for a POSIX shell
};

}  // namespace fastsim::run
