// SPDX-License-Identifier: MIT
#pragma once

#include <vector>

#include "workload/layer.h"

namespace fastsim::workload {

/// What node.fusion changes in one layer's forward pass (docs/vector_unit.md, "Fusion").
struct LayerFusion {
    /// An elementwise layer (relu, gelu, add) that runs in the output pass of the layer just
    /// before it, one of its producers: that operand streams in and is read from no memory.
    bool streams_input = false;
    /// This layer's output goes only into the next layer, which streams it and whose backward
    /// does not read it (relu keeps its own output, add needs none), and its own backward does
    /// not read it either: the output is never converted or written to DRAM.
    bool output_streamed = false;
};

/// The fusion of every layer of `workload`, in its order. A layer is fused into the layer
/// listed just before it when it is a relu, gelu or add reading that layer's output; the
/// producer's output then stays on chip when the fused layer is its only consumer, the fused
/// layer is a relu or an add, and the producer is not a relu or softmax (whose backward reads
/// their own outputs).
std::vector<LayerFusion> plan_fusion(const Workload& workload);

}  // namespace fastsim::workload
