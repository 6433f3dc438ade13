// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bfp/format.h"
#include "fmac/training_gemm.h"
#include "node/node_model.h"
#include "node/vector_phase.h"
#include "workload/layer.h"

namespace fastsim::node {

/// Mantissa bits of the three tensor classes in one phase of one layer.
struct TensorPrecision {
    int weights = 8;
    int activations = 8;
    int gradients = 8;

    friend bool operator==(const TensorPrecision& a, const TensorPrecision& b) {
        return a.weights == b.weights && a.activations == b.activations && a.gradients == b.gradients;
    }
    friend bool operator!=(const TensorPrecision& a, const TensorPrecision& b) { return !(a == b); }
};

/// Precisions of one layer, per training phase (indexed by fmac::TrainingPhase).
using LayerPrecision = std::array<TensorPrecision, 3>;

/// Which training phases a step runs, indexed by fmac::TrainingPhase.
using PhaseSelection = std::array<bool, 3>;
inline constexpr PhaseSelection kEveryPhase{true, true, true};

/// Rounding the converter applies when it produces each tensor class.
struct TensorRounding {
    bfp::Rounding activations = bfp::Rounding::nearest;
    bfp::Rounding gradients = bfp::Rounding::stochastic;
};

/// `count` GEMMs of one shape within a phase: their job, and the layer dims whose tensors
/// fmac::lower_phase turns into that job's operands (the stepped fidelity's synthetic tensors).
struct PhaseGemm {
    fmac::LayerDims dims;
    PhaseJob job;
    std::uint64_t count = 1;
    std::uint64_t blocks = 1;  ///< independent GEMMs of `block` packed block-diagonally (workload::ShapedGemms)
    fmac::GemmShape block;     ///< one block's own shape; job.shape when blocks == 1
};

/// The counters of one GEMM of `g`, given those of its job run on the array: a packed GEMM
/// (blocks > 1) counts only the group products and PE passes of its diagonal blocks (a PE
/// holding a zero block does not fire; docs/array.md, "Grouped and depthwise convolutions").
/// Unchanged otherwise. MACs are the phase's (StepPhase::macs), set once the phase is summed.
PhaseCounters counted(PhaseCounters job_counters, const PhaseGemm& g);

/// One phase of a training step: one layer's GEMMs on the array, one shape but for a strided
/// convolution's transposed backward-data (workload::phase_gemms), run one after another; or
/// (on_vector_unit) one job of a vector-unit layer, whose backward pass is its backward_data phase.
struct StepPhase {
    std::size_t layer = 0;  ///< index into the workload's layers
    fmac::TrainingPhase phase = fmac::TrainingPhase::forward;
    std::vector<PhaseGemm> gemms;  ///< in run order; empty on the vector unit
    /// The MACs a report counts for an array phase: the layer's forward GEMM MACs
    /// (workload::LayerGemm::forward_macs; each training phase does as many), whatever the
    /// lowering multiplies besides (zero blocks of a packed GEMM, a transposed convolution's
    /// taps on the border). The phase's summed counters take this value.
    std::uint64_t macs = 0;
    bool on_vector_unit = false;  ///< then `vector` is the job
    bool weight_update = false;   ///< the optimiser's update of the layer's weights (on the vector unit)
    bool col2im = false;          ///< the scatter-add after a col2im-lowered backward-data (on the vector unit)
    bool fused = false;           ///< changed by fuse_forward_phases
    VectorJob vector;

    /// GEMMs in the phase (the sum of the counts); 0 on the vector unit.
    [[nodiscard]] std::uint64_t gemm_count() const;
    /// The shape with the most MACs (the first of equals): the one reports print. On the array only.
    [[nodiscard]] const PhaseGemm& largest_gemm() const;
};

/// How reports name a step's phase: the training phase, "weight_update" or "col2im".
std::string_view phase_name(const StepPhase& step);

/// True if `layer` (at `index` in its network) reads nothing but the network input, so no
/// backward-data phase is needed for it.
bool reads_only_network_input(const workload::Layer& layer, std::size_t index);

/// Phase `phase` of layer `layer`, lowered to `gemms` (workload::phase_gemms, non-empty), with
/// its operand and output widths and rounding as listed for training_step_phases.
StepPhase step_phase(std::size_t layer, fmac::TrainingPhase phase, const std::vector<workload::ShapedGemms>& gemms,
                     const TensorPrecision& precision, const TensorRounding& rounding, std::uint64_t macs);

/// Phase `phase` (forward, or backward_data for the backward pass) of a vector-unit layer
/// doing `work`: it reads activations at p.activations and gradients at p.gradients, and
/// writes activations (forward) or gradients, rounded as `rounding` says.
StepPhase vector_step_phase(std::size_t layer, fmac::TrainingPhase phase, const workload::VectorWork& work,
                            const TensorPrecision& precision, const TensorRounding& rounding);

/// The col2im of layer `layer` doing `work` (workload::col2im_work), a part of its backward
/// pass: it reads the im2col-form gradient and writes ∇A at p.gradients.
StepPhase col2im_phase(std::size_t layer, const workload::VectorWork& work, const TensorPrecision& precision,
                       const TensorRounding& rounding);

/// The optimiser's update of layer `layer`'s weights doing `work` (workload::optimizer_work):
/// its operands are fp32; it re-quantises the weights to `weight_bits`, rounding to nearest.
StepPhase weight_update_phase(std::size_t layer, const workload::VectorWork& work, int weight_bits);

/// Phase `phase` of `layer` (at `index` in its network) at `batch` on `node`, as
/// training_step_phases lists it: its GEMMs (workload::node_phase_gemms), a vector-unit job (a
/// vector-unit layer, or a grouped convolution under depthwise vector), or none (a vector-unit
/// layer's weight gradient).
std::optional<StepPhase> layer_phase(const workload::Layer& layer, std::size_t index, std::size_t batch,
                                     fmac::TrainingPhase phase, const TensorPrecision& precision,
                                     const TensorRounding& rounding, const NodeParams& node);

/// The phases of one training step, in run order (docs/node.md, "A training step"):
/// forward of every layer in order, then for every layer in reverse backward-data and
/// weight-gradient, then (with an `optimizer`) the update of its weights, whose BFP weights are
/// re-quantised to the layer's forward weight width. Backward-data is skipped for layers that read only the network input
/// (nothing consumes that gradient). A vector-unit layer has a forward phase and a backward
/// (backward_data) phase, no weight gradient. Operand and output precisions per phase:
///   forward          X = A  (activations)  Y = W  (weights)   out -> BFP activations
///   backward_data    X = dO (gradients)    Y = W  (weights)   out -> BFP gradients
///   weight_gradient  X = A^T (activations) Y = dO (gradients) out -> fp32
/// `precision[l]` gives layer l's widths per phase. Only the phases `selection` names are
/// listed (run.phases), in the same order. GEMMs are lowered as node.lowering says for
/// node.array (workload::node_phase_gemms): under col2im a convolution's backward-data is
/// followed by its col2im (col2im_phase); under depthwise vector a grouped convolution's
/// forward and backward-data run on the vector unit (its weight gradient stays on the array,
/// packed).
std::vector<StepPhase> training_step_phases(const workload::Workload& workload, std::size_t batch,
                                            const std::vector<LayerPrecision>& precision,
                                            const TensorRounding& rounding, const NodeParams& node,
                                            const PhaseSelection& selection = kEveryPhase,
                                            workload::Optimizer optimizer = workload::Optimizer::none);

/// node.fusion (docs/vector_unit.md, "Fusion"): in every forward phase of `phases` (built by
/// training_step_phases for `workload` at `batch`), a layer that streams its input
/// (workload::plan_fusion) reads that operand from no memory, and a layer whose output is
/// streamed neither converts nor writes it. Marks each changed phase `fused`.
void fuse_forward_phases(std::vector<StepPhase>& phases, const workload::Workload& workload, std::size_t batch);

}  // namespace fastsim::node
