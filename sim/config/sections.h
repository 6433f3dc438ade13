// SPDX-License-Identifier: MIT
#pragma once

#include "config/params.h"
#include "config/yaml_reader.h"

namespace fastsim::config {

// Sections that other config files (fastsim train) share with run configs, read and
// checked by the same code so their keys, defaults and errors are identical.

/// The optional `bfp:` map under `top` (docs/config.md#bfp).
BfpParams read_bfp_section(MapReader& top);

/// The node as the `node:` map under `top` describes it (docs/config.md#training_step),
/// resolved with the BFP settings; the `energy:` map's table loaded for the node's DRAM
/// type (the built-in table when absent).
struct NodeSections {
    NodeConfig node;
    EnergyParams energy;
};
NodeSections read_node_sections(MapReader& top, const BfpParams& bfp);

}  // namespace fastsim::config
