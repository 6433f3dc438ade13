// SPDX-License-Identifier: MIT
#pragma once

#include "common/units.h"
#include "compression/compression.h"
#include "costs/node_type.h"

namespace fastsim::costs {

/// Seconds and picojoules of compression work on one node of `type` (docs/compression.md,
/// "Work on the node"): the DRAM stream and the converter lanes overlap, the array's GEMMs follow.
struct CompressionCost {
    Picoseconds time{0};
    double energy_pj = 0;
};
CompressionCost compression_cost(const NodeType& type, const compression::Work& work);

}  // namespace fastsim::costs
