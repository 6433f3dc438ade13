// SPDX-License-Identifier: MIT
#include "fmac/training_gemm.h"

namespace fastsim::fmac {

const EnumNames<TrainingPhase, 3>& enum_names(TrainingPhase) {
    static constexpr EnumNames<TrainingPhase, 3> kNames{{
        {"forward", TrainingPhase::forward},
        {"backward_data", TrainingPhase::backward_data},
        {"weight_gradient", TrainingPhase::weight_gradient},
    }};
    return kNames;
}

PhaseOperands lower_phase(TrainingPhase phase, const LayerDims& d, const float* a, const float* w, const float* d_out,
                          bfp::Quantizer& activations, bfp::Quantizer& weights, bfp::Quantizer& gradients) {
    using bfp::quantize_rows;
    switch (phase) {
    case TrainingPhase::forward:
        // X = A rows (along in); Y^T rows = columns of W (along in).
        return {quantize_rows(a, d.batch, d.in, d.in, 1, activations),
                quantize_rows(w, d.out, d.in, 1, d.out, weights),
                {d.batch, d.in, d.out}};
    case TrainingPhase::backward_data:
        // X = dO rows (along out); Y^T rows = rows of W (along out): W read as stored.
        return {quantize_rows(d_out, d.batch, d.out, d.out, 1, gradients),
                quantize_rows(w, d.in, d.out, d.out, 1, weights),
                {d.batch, d.out, d.in}};
    case TrainingPhase::weight_gradient:
        // X = columns of A (along batch); Y^T rows = columns of dO (along batch).
        return {quantize_rows(a, d.in, d.batch, 1, d.in, activations),
                quantize_rows(d_out, d.out, d.batch, 1, d.out, gradients),
                {d.in, d.batch, d.out}};
    }
    return {};
}

}  // namespace fastsim::fmac
