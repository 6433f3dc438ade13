// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <vector>

#include "config/params.h"

namespace fastsim::config {

/// Reads `path`, applies each `key.path=value` override in order, checks every key and
/// value, and returns the resolved Params. Throws ConfigError (file, line, key path).
Params load(const std::string& path, const std::vector<std::string>& overrides = {});

/// The effective config as YAML, every default spelled out. load() of it gives the same Params.
std::string dump(const Params& params);

}  // namespace fastsim::config
