// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "workload/layer.h"

namespace fastsim::workload {

/// A layer whose input is not what its producers give it (docs/workloads.md, "Shape checking").
struct ShapeMismatch {
    std::size_t layer = 0;  ///< the consumer, an index into Workload::layers
    std::string message;    ///< names the consumer, each producer and both shapes
};

/// Every layer's input against its producers' outputs, per sample: a conv after a conv needs
/// [H, W, C] = the producer's [H_out, W_out, filters]; an fc after a conv reads the flattened
/// tensor (in_features = H x W x C, tokens 1) or one row per position (tokens = H x W,
/// in_features = C); an fc after an fc needs the same tokens and in_features = out_features;
/// other pairs need equal value counts (a reshape), and a matmul's two operands are
/// repeat x m x k and repeat x k x n values. A join (several inputs) is an add (each producer
/// gives the whole input) or a concatenation (their values sum to it). Layers reading the
/// network input, gemm layers, and the later inputs of an AccPar-convention shortcut (which name
/// a block's first layer, not a producer) are not checked.
std::vector<ShapeMismatch> shape_mismatches(const Workload& workload);

}  // namespace fastsim::workload
