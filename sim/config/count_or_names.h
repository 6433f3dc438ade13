// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace fastsim::config {

/// A key that is a count or a list of lists of names (planner.pipeline.stages).
struct CountOrNameLists {
    std::uint64_t count = 0;
    std::vector<std::vector<std::string>> lists;  ///< non-empty when given as lists
};

}  // namespace fastsim::config
