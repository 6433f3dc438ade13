// SPDX-License-Identifier: MIT
#pragma once

#include <string>

#include "workload/layer.h"

namespace fastsim::config {

/// `workload` as a fastsim YAML trace (docs/workloads.md), one flow map per layer, that
/// read_trace reads back into the same layers: every size written, defaults left out, `inputs`
/// only where a layer reads something other than the layer before it.
std::string trace_yaml(const workload::Workload& workload);

}  // namespace fastsim::config
