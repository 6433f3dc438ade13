// SPDX-License-Identifier: MIT
#pragma once

#include <string>

#include "workload/layer.h"

namespace fastsim::config {

/// Reads a workload trace (docs/workloads.md): a fastsim YAML trace (.yaml, .yml) or a
/// SCALE-Sim topology CSV (.csv). Throws ConfigError naming the file, line and field.
workload::Workload read_trace(const std::string& path);

/// read_trace() of `text` as the contents of the file at `path` (its ending picks the format).
workload::Workload read_trace_text(const std::string& text, const std::string& path);

}  // namespace fastsim::config
