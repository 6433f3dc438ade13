// SPDX-License-Identifier: MIT
// SCALE-Sim v2's inputs for `fastsim scalesim` (docs/scalesim.md): its .cfg and its topology
// rows expanded into the layers it runs.
#pragma once

#include <string>
#include <vector>

#include "scalesim/scalesim.h"
#include "workload/layer.h"

namespace fastsim::config {

/// A SCALE-Sim .cfg (an INI file as Python's configparser reads it: [sections] named as written,
/// `key = value` or `key: value`, keys in any case, # and ; comments), resolved as
/// scalesim/scale_config.py reads it. `path` names the file in errors; throws ConfigError naming
/// the line and section.key. In USER mode Bandwidth is a comma-separated list; the first is used.
scalesim::Architecture read_scalesim_cfg(const std::string& text, const std::string& path);

/// The layers SCALE-Sim runs for a topology read by read_scalesim_csv: a GEMM row M, N, K as
/// ifmap M x K with N filters of 1 x K; a depthwise ('DP') row as one layer per channel, named
/// "<name>Channel_<i>" (topology_utils.py, load_arrays_conv).
std::vector<scalesim::Layer> scalesim_layers(const workload::Workload& topology);
/// One of the layers scalesim_layers makes of `layer`: all of them, or each of its channels'
/// (`layer.groups` alike, but for their names), so work is estimated before they are made.
scalesim::Layer scalesim_layer(const workload::Layer& layer);

}  // namespace fastsim::config
