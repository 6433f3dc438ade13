// SPDX-License-Identifier: MIT
#include "node/training_step.h"

#include "common/checked.h"
#include "workload/fusion.h"

#include <stdexcept>

namespace fastsim::node {
bool reads_only_network_input(const workload::Layer& layer, std::size_t index) {
    if (layer.inputs.empty()) return index == 0;
    for (const auto& input : layer.inputs)
        if (input != workload::kNetworkInput) return false;
    return true;
}

StepPhase step_phase(std::size_t layer, fmac::TrainingPhase phase, const std::vector<workload::ShapedGemms>& gemms,
                     const TensorPrecision& p, const TensorRounding& rounding, std::uint64_t macs) {
    if (gemms.empty()) throw std::invalid_argument("step_phase: a phase on the array needs a GEMM");
    StepPhase s;
    s.layer = layer;
    s.phase = phase;
    s.macs = macs;
    for (const workload::ShapedGemms& g : gemms) {
        PhaseGemm& run = s.gemms.emplace_back();
        run.count = g.count;
        run.blocks = g.blocks;
        run.block = g.block;
        PhaseJob& j = run.job;
        j.phase = phase;
        j.shape = g.shape;
        const auto dim = [](std::uint64_t v) { return static_cast<std::size_t>(v); };
        switch (phase) {
        case fmac::TrainingPhase::forward:  // X = A (batch x in), Y = W (in x out)
            run.dims = {dim(g.shape.m), dim(g.shape.k), dim(g.shape.n)};
            j.x_mantissa_bits = p.activations;
            j.y_mantissa_bits = p.weights;
            j.output = OutputForm::bfp_two_groupings;
            j.output_mantissa_bits = p.activations;
            j.output_rounding = rounding.activations;
            break;
        case fmac::TrainingPhase::backward_data:  // X = dO (batch x out), Y^T = W (in x out)
            run.dims = {dim(g.shape.m), dim(g.shape.n), dim(g.shape.k)};
            j.x_mantissa_bits = p.gradients;
            j.y_mantissa_bits = p.weights;
            j.output = OutputForm::bfp_two_groupings;
            j.output_mantissa_bits = p.gradients;
            j.output_rounding = rounding.gradients;
            break;
        case fmac::TrainingPhase::weight_gradient:  // X = A^T (in x batch), Y^T = dO^T (out x batch)
            run.dims = {dim(g.shape.k), dim(g.shape.m), dim(g.shape.n)};
            j.x_mantissa_bits = p.activations;
            j.y_mantissa_bits = p.gradients;
            j.output = OutputForm::fp32;
            break;
        }
    }
    return s;
}

PhaseCounters counted(PhaseCounters c, const PhaseGemm& g) {
    if (g.blocks > 1) c.array = c.array.diagonal_blocks(g.blocks);
    return c;
}

std::uint64_t StepPhase::gemm_count() const {
    std::uint64_t n = 0;
    for (const PhaseGemm& g : gemms) n = checked_add(n, g.count, "GEMMs of a phase");
    return n;
}

const PhaseGemm& StepPhase::largest_gemm() const {
    if (gemms.empty()) throw std::logic_error("largest_gemm: a phase on the vector unit has no GEMM");
    const auto size = [](const PhaseGemm& g) {
        return static_cast<double>(g.job.shape.m) * static_cast<double>(g.job.shape.k) *
               static_cast<double>(g.job.shape.n) * static_cast<double>(g.count);
    };
    const PhaseGemm* best = &gemms.front();
    for (const PhaseGemm& g : gemms)
        if (size(g) > size(*best)) best = &g;
    return *best;
}

std::string_view phase_name(const StepPhase& step) {
    if (step.weight_update) return "weight_update";
    if (step.col2im) return "col2im";
    return fmac::to_string(step.phase);
}

StepPhase vector_step_phase(std::size_t layer, fmac::TrainingPhase phase, const workload::VectorWork& work,
                            const TensorPrecision& p, const TensorRounding& rounding) {
    StepPhase s;
    s.layer = layer;
    s.phase = phase;
    s.on_vector_unit = true;
    VectorJob& j = s.vector;
    j.work = work;
    j.activation_bits = p.activations;
    j.gradient_bits = p.gradients;
    const bool forward = phase == fmac::TrainingPhase::forward;
    j.output_bits = forward ? p.activations : p.gradients;
    j.output_rounding = forward ? rounding.activations : rounding.gradients;
    return s;
}

StepPhase col2im_phase(std::size_t layer, const workload::VectorWork& work, const TensorPrecision& p,
                       const TensorRounding& rounding) {
    StepPhase s = vector_step_phase(layer, fmac::TrainingPhase::backward_data, work, p, rounding);
    s.col2im = true;
    return s;
}

StepPhase weight_update_phase(std::size_t layer, const workload::VectorWork& work, int weight_bits) {
    StepPhase s;
    s.layer = layer;
    s.phase = fmac::TrainingPhase::weight_gradient;
    s.on_vector_unit = true;
    s.weight_update = true;
    s.vector.work = work;  // fp32 operands only
    s.vector.output_bits = weight_bits;
    s.vector.output_rounding = bfp::Rounding::nearest;
    return s;
}

std::optional<StepPhase> layer_phase(const workload::Layer& layer, std::size_t index, std::size_t batch,
                                     fmac::TrainingPhase p, const TensorPrecision& precision,
                                     const TensorRounding& rounding, const NodeParams& node) {
    const workload::Lowering& lowering = node.lowering;
    const bool backward = p != fmac::TrainingPhase::forward;
    if (workload::conv_on_vector_unit(layer, lowering) && p != fmac::TrainingPhase::weight_gradient) {
        StepPhase s = vector_step_phase(index, p, workload::grouped_conv_vector_work(layer, batch, backward), precision,
                                        rounding);
        s.vector.macs = workload::lower(layer, batch).forward_macs();
        return s;
    }
    if (!workload::runs_on_vector_unit(layer.kind)) {
        // Under depthwise vector a grouped convolution's weight gradient stays on the array, packed.
        const workload::Lowering on_array{lowering.backward_data,
                                          lowering.depthwise == workload::DepthwiseLowering::vector
                                              ? workload::DepthwiseLowering::array_packed
                                              : lowering.depthwise};
        const std::vector<workload::ShapedGemms> gemms =
            workload::node_phase_gemms(layer, batch, p, on_array, node.array);
        if (gemms.empty()) return std::nullopt;
        return step_phase(index, p, gemms, precision, rounding, workload::lower(layer, batch).forward_macs());
    }
    // A vector-unit layer's backward pass is its backward-data phase; an embedding's (the scatter
    // of dy into its table's gradient) is its weight gradient, as it has no ∇A.
    const bool has_backward_data = layer.kind != workload::LayerKind::embedding;
    if (p == fmac::TrainingPhase::weight_gradient ? has_backward_data : !has_backward_data && backward)
        return std::nullopt;
    return vector_step_phase(index, p, workload::vector_work(layer, batch, backward), precision, rounding);
}

std::vector<StepPhase> training_step_phases(const workload::Workload& workload, std::size_t batch,
                                            const std::vector<LayerPrecision>& precision,
                                            const TensorRounding& rounding, const NodeParams& node,
                                            const PhaseSelection& selection, workload::Optimizer optimizer) {
    const workload::Lowering& lowering = node.lowering;
    if (precision.size() != workload.layers.size())
        throw std::invalid_argument("training_step_phases: one LayerPrecision per layer expected");
    std::vector<StepPhase> phases;
    const auto at = [](fmac::TrainingPhase p) { return static_cast<std::size_t>(p); };
    const auto add = [&](std::size_t l, fmac::TrainingPhase p) {
        if (!selection[at(p)]) return;
        if (std::optional<StepPhase> s =
                layer_phase(workload.layers[l], l, batch, p, precision[l][at(p)], rounding, node))
            phases.push_back(std::move(*s));
    };
    for (std::size_t l = 0; l < workload.layers.size(); ++l) add(l, fmac::TrainingPhase::forward);
    for (std::size_t l = workload.layers.size(); l-- > 0;) {
        if (!reads_only_network_input(workload.layers[l], l)) {
            add(l, fmac::TrainingPhase::backward_data);
            const workload::VectorWork scatter = lowering.backward_data == workload::BackwardDataLowering::col2im &&
                                                         !workload::conv_on_vector_unit(workload.layers[l], lowering)
                                                     ? workload::col2im_work(workload.layers[l], batch)
                                                     : workload::VectorWork{};
            if (selection[at(fmac::TrainingPhase::backward_data)] && scatter.ops > 0)
                phases.push_back(
                    col2im_phase(l, scatter, precision[l][at(fmac::TrainingPhase::backward_data)], rounding));
        }
        add(l, fmac::TrainingPhase::weight_gradient);
        const workload::VectorWork update = workload::optimizer_work(workload.layers[l], optimizer);
        if (selection[at(fmac::TrainingPhase::weight_gradient)] && update.ops > 0)
            phases.push_back(weight_update_phase(l, update, precision[l][at(fmac::TrainingPhase::forward)].weights));
    }
    return phases;
}

void fuse_forward_phases(std::vector<StepPhase>& phases, const workload::Workload& workload, std::size_t batch) {
    const std::vector<workload::LayerFusion> fusion = workload::plan_fusion(workload);
    for (StepPhase& s : phases) {
        if (s.phase != fmac::TrainingPhase::forward || s.weight_update) continue;
        const workload::LayerFusion& f = fusion.at(s.layer);
        if (f.streams_input) {  // only vector-unit layers stream their input
            const std::uint64_t streamed =
                checked_mul(workload::tensor_values(workload.layers[s.layer]), batch, "values of a layer's tensor");
            if (!s.on_vector_unit || s.vector.work.activation_reads < streamed)
                throw std::logic_error("fuse_forward_phases: layer '" + workload.layers[s.layer].name +
                                       "' cannot stream its input");
            s.vector.work.activation_reads -= streamed;
            s.fused = true;
        }
        if (f.output_streamed) {
            for (PhaseGemm& g : s.gemms) g.job.output_streamed = true;
            s.vector.output_streamed = true;
            s.fused = true;
        }
    }
}

}  // namespace fastsim::node
