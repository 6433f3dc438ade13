// SPDX-License-Identifier: MIT
#pragma once

#include <string>

#include "workload/layer.h"

namespace fastsim::config {

/// A SCALE-Sim v2 topology CSV (docs/workloads.md, "SCALE-Sim topology files"), read as
/// SCALE-Sim's own parser reads it: the convolution form or the `Layer, M, N, K` GEMM form.
/// `path` names the file in errors. Throws ConfigError naming the line and the field.
workload::Workload read_scalesim_csv(const std::string& text, const std::string& path);

}  // namespace fastsim::config
