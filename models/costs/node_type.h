// SPDX-License-Identifier: MIT
#pragma once

// One node type of a cluster as the cost models see it (docs/planner.md, "Compute time").

#include "energy/energy.h"
#include "node/node_model.h"
#include "node/training_step.h"

namespace fastsim::costs {

struct NodeType {
    int arrays = 1;                   ///< arrays per node, side by side
    node::NodeParams node;            ///< one array's share of the node (DRAM bandwidth / arrays)
    node::TensorPrecision precision;  ///< mantissa bits of weights, activations and gradients
    energy::EnergyTable energy;       ///< the energy table with this type's DRAM energy
    double dram_capacity_gib = 0;     ///< 0: memory is not checked
};

}  // namespace fastsim::costs
