// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>

#include "bfp/dot.h"
#include "common/enum_names.h"
#include "fmac/timing.h"

namespace fastsim::fmac {

/// The three GEMMs of one layer's training step (docs/array.md, "GEMM mapping").
enum class TrainingPhase : std::uint8_t {
    forward,         ///< O = A W            X = A (along K),   stationary W   (along K)
    backward_data,   ///< dA = dO W^T        X = dO (along N),  stationary W^T (along N)
    weight_gradient  ///< dW = A^T dO        X = A^T (along M), stationary dO  (along M)
};

const EnumNames<TrainingPhase, 3>& enum_names(TrainingPhase);
inline const char* to_string(TrainingPhase phase) { return name_of(phase).data(); }

/// Layer GEMM dimensions: A is batch x in (B x D_i), W is in x out (D_i x D_o).
struct LayerDims {
    std::size_t batch = 0;  ///< M: batch x output positions for a convolution
    std::size_t in = 0;     ///< K: input features (C_in x kernel area for a convolution)
    std::size_t out = 0;    ///< N: output features
};

/// The array view of a phase: X rows stream, Y^T rows are the stationary groups; both are
/// BFP-grouped along the phase's reduction dimension.
struct PhaseOperands {
    bfp::BfpMatrix x;
    bfp::BfpMatrix y_transposed;
    GemmShape shape;  ///< (rows of X, reduction length, rows of Y^T)
};

/// Quantises the fp32 tensors a phase reads along its reduction dimension, as the node's
/// converter does before the phase (a BFP tensor grouped along one dimension cannot be read
/// along another, so every phase re-converts its operands). Row-major inputs:
/// a (batch x in), w (in x out), d_out (batch x out). Quantiser use per phase:
/// forward (activations: a, weights: w); backward_data (gradients: d_out, weights: w);
/// weight_gradient (activations: a, gradients: d_out). Unused tensors may be null.
PhaseOperands lower_phase(TrainingPhase phase, const LayerDims& dims, const float* a, const float* w,
                          const float* d_out, bfp::Quantizer& activations, bfp::Quantizer& weights,
                          bfp::Quantizer& gradients);

}  // namespace fastsim::fmac
