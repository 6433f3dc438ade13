// SPDX-License-Identifier: MIT
// What read_onnx_bytes checks before ONNX's shape inference, which trusts the model it is given.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>

namespace fastsim::config {

/// Makes `model` safe for onnx::shape_inference::InferShapes (ONNX 1.12), or throws ConfigError
/// naming `path` and graph.node[i]:
/// - every node of an operator ONNX knows passes its schema's check (operand and result counts,
///   attribute names and types), so inference never indexes a missing operand or result;
/// - no control flow and no model-local functions (subgraphs fastsim does not import);
/// - every convolution states kernel_shape: when the node omits it, it is taken from a weight whose
///   shape the file declares, so inference compares it with the input's rank instead of reading
///   past it.
void prepare_for_shape_inference(onnx::ModelProto& model, const std::string& path);

}  // namespace fastsim::config
