// SPDX-License-Identifier: MIT
#pragma once

#include <string>

namespace fastsim::config {

/// A config key naming a file: as written, and resolved against the config file's folder.
struct FilePath {
    std::string written;   ///< empty = not given
    std::string resolved;  ///< set when the config is resolved; what dump writes
};

}  // namespace fastsim::config
