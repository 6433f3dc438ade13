// SPDX-License-Identifier: MIT
// ONNX models as workloads (docs/onnx.md): `fastsim import` and `workload.model`.
#pragma once

#include <string>

#include "workload/layer.h"

namespace fastsim::config {

/// Whether this build reads ONNX models (CMake found Debian's libonnx-dev and libprotobuf-dev).
bool onnx_supported();

/// The layers of the ONNX model at `path`, per sample (the graph input's first dimension is the
/// batch, replaced by `workload.batch`): shapes come from ONNX's own shape inference; every node
/// that computes on activations becomes a layer (Conv, Gemm, MatMul, pools, normalisations,
/// activations, Add, Concat, Softmax), is a view (Reshape, Flatten, Transpose, ...) or is folded
/// into its producer (an Add/Mul/Sub/Div with a constant: a bias or a scale). Weights are never
/// read, so architecture-only files (weights as missing external data) import.
/// ConfigError naming the file and the node for an unsupported operator or attribute;
/// UserError if !onnx_supported(), saying what to install.
workload::Workload read_onnx_model(const std::string& path);

/// read_onnx_model of a file's bytes already in memory; `path` names it in errors and the
/// workload (the fuzz harness's entry point).
workload::Workload read_onnx_bytes(const std::string& bytes, const std::string& path);

}  // namespace fastsim::config
