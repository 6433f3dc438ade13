// SPDX-License-Identifier: MIT
#include "run/training_step.h"

#include <systemc>

#include <memory>
#include <iomanip>
#include <random>
#include <sstream>

#include "common/errors.h"
#include "fmac/training_gemm.h"
#include "node/node.h"
#include "run/layer_errors.h"
#include "run/node_timeline.h"

namespace fastsim::run {
namespace {

std::vector<float> normal_values(std::size_t count, std::mt19937_64& rng) {
    std::normal_distribution<float> normal(0.0f, 1.0f);
    std::vector<float> v(count);
    for (auto& x : v) x = normal(rng);
    return v;
}

/// The stepped fidelity: one SystemC simulation, one thread running the phases in order.
std::vector<node::PhaseCounters> run_stepped(const config::Params& params, const std::vector<node::StepPhase>& phases,
                                             const WorkProgress& progress, NodeTimeline* timeline) {
    std::uint64_t gemms = 0, gemms_done = 0;
    for (const node::StepPhase& s : phases) gemms += s.on_vector_unit ? 1 : s.gemm_count();
    std::vector<node::PhaseCounters> counters(phases.size());
    node::Node fast_node("node", params.node.resolved);
    sc_core::sc_spawn([&] {
        std::mt19937_64 rng(params.run.seed);
        node::TileStageLog stages;
        std::uint64_t phase_start = 0;
        for (std::size_t i = 0; i < phases.size(); ++i) {
            const node::StepPhase& s = phases[i];
            if (s.on_vector_unit) {
                counters[i] = fast_node.run_vector_phase(s.vector);
                if (timeline) timeline->add_phase(s, phase_start, counters[i]);
                phase_start += counters[i].cycles;
                if (progress) progress(static_cast<double>(++gemms_done) / static_cast<double>(gemms));
                continue;
            }
            const node::TensorPrecision& precision =
                params.precision.per_layer[s.layer][static_cast<std::size_t>(s.phase)];
            std::uint64_t index = 0;  // of the GEMM in the phase
            for (const node::PhaseGemm& g : s.gemms)
                for (std::uint64_t c = 0; c < g.count; ++c, ++index) {
                    const auto a = normal_values(g.dims.batch * g.dims.in, rng);
                    const auto w = normal_values(g.dims.in * g.dims.out, rng);
                    const auto d_out = normal_values(g.dims.batch * g.dims.out, rng);
                    bfp::Quantizer q_act(params.bfp.format(precision.activations),
                                         params.precision.rounding.activations, params.bfp.noise(rng()));
                    bfp::Quantizer q_w(params.bfp.format(precision.weights), bfp::Rounding::nearest);
                    bfp::Quantizer q_grad(params.bfp.format(precision.gradients), params.precision.rounding.gradients,
                                          params.bfp.noise(rng()));
                    const fmac::PhaseOperands operands =
                        fmac::lower_phase(s.phase, g.dims, a.data(), w.data(), d_out.data(), q_act, q_w, q_grad);
                    std::vector<float> out;
                    stages.clear();
                    const node::PhaseCounters gemm =
                        node::counted(fast_node.run_phase(g.job, operands.x, operands.y_transposed, out,
                                                          timeline ? &stages : nullptr),
                                      g);
                    if (timeline) timeline->add_gemm(s, index, phase_start + counters[i].cycles, stages);
                    counters[i] += gemm;  // cannot overflow: run_training_step counted every phase first
                    if (progress) progress(static_cast<double>(++gemms_done) / static_cast<double>(gemms));
                }
            counters[i].macs = s.macs;
            if (timeline) timeline->add_phase(s, phase_start, counters[i]);
            phase_start += counters[i].cycles;
        }
    });
    sc_core::sc_start();
    return counters;
}

}  // namespace

energy::EnergyBreakdown counters_energy(const node::PhaseCounters& c, const node::NodeParams& node, double sram_kib,
                                        std::uint64_t arrays, const energy::EnergyTable& table) {
    const energy::ActionCounts n{c.array, c.conversion, c.traffic, c.vector, c.cycles};
    energy::StaticContext context;
    context.group_size = node.array.group_size;
    context.pes = static_cast<std::uint64_t>(node.array.rows) * static_cast<std::uint64_t>(node.array.cols) * arrays;
    context.sram_kib = sram_kib * static_cast<double>(arrays);
    context.clock_hz = static_cast<double>(node.clock_hz);
    return energy::energy_of(n, table, context);
}

energy::EnergyBreakdown phase_energy(const config::Params& params, const node::PhaseCounters& c) {
    return counters_energy(c, params.node.resolved, params.node.sram_exponent_kib + params.node.sram_mantissa_kib, 1,
                           params.energy.resolved);
}

energy::NodeHardware node_hardware(const node::NodeParams& node, double exponent_kib, double mantissa_kib,
                                   std::uint64_t arrays, const config::BfpParams& bfp) {
    energy::NodeHardware h;
    h.group_size = node.array.group_size;
    h.pes = static_cast<std::uint64_t>(node.array.rows) * static_cast<std::uint64_t>(node.array.cols) * arrays;
    h.exponent_bits = node.exponent_bits;
    h.noise_bits = bfp.noise_bits;
    h.lfsr_bits = bfp.lfsr_bits;
    h.converter_lanes = static_cast<std::uint64_t>(node.converter.lanes) * arrays;
    h.vector_lanes = static_cast<std::uint64_t>(node.vector.lanes) * arrays;
    h.exponent_bank_kib = exponent_kib;
    h.mantissa_bank_kib = mantissa_kib;
    h.arrays = arrays;
    return h;
}

std::optional<energy::AreaBreakdown> hardware_area(const energy::EnergyTable& energy_table,
                                                   std::optional<double> process_nm,
                                                   const energy::NodeHardware& hardware) {
    const std::optional<energy::AreaTable>& table = energy_table.area;
    if (!table) return std::nullopt;
    energy::AreaBreakdown a = energy::area_of(hardware, *table);
    const double scale = energy::area_scale(table->process_nm, process_nm.value_or(table->process_nm));
    for (const energy::AreaComponent& c : energy::kAreaComponents) a.*c.mm2 *= scale;
    return a;
}

std::optional<energy::AreaBreakdown> node_area(const config::Params& params) {
    return hardware_area(params.energy.resolved, params.energy.process_nm,
                         node_hardware(params.node.resolved, params.node.sram_exponent_kib,
                                       params.node.sram_mantissa_kib, 1, params.bfp));
}

std::optional<energy::AreaBreakdown> node_type_area(const config::Params& params, const config::NodeTypeParams& type) {
    return hardware_area(type.energy, params.energy.process_nm,
                         node_hardware(type.node.resolved, type.node.sram_exponent_kib, type.node.sram_mantissa_kib,
                                       static_cast<std::uint64_t>(type.arrays), params.bfp));
}

std::optional<energy::AreaBreakdown> cluster_area(const config::Params& params) {
    std::vector<std::size_t> count(params.cluster.node_types.size(), 0);
    for (const std::size_t t : params.cluster.node_type) ++count[t];
    energy::AreaBreakdown sum;
    for (std::size_t t = 0; t < count.size(); ++t) {
        if (count[t] == 0) continue;
        const std::optional<energy::AreaBreakdown> one = node_type_area(params, params.cluster.node_types[t]);
        if (!one) return std::nullopt;
        for (const energy::AreaComponent& c : energy::kAreaComponents)
            sum.*c.mm2 += (*one).*c.mm2 * static_cast<double>(count[t]);
    }
    return sum;
}

std::optional<WholeRunResult> whole_training_if_any(const config::Params& params, const TrainingStepResult& first_step,
                                                    const WorkProgress& progress) {
    if (params.workload.steps <= 1 && params.precision.segments.size() <= 1) return std::nullopt;
    return run_whole_training(params, first_step, progress);
}

TrainingStepResult run_training_step(const config::Params& params, const WorkProgress& progress,
                                     const std::optional<TimelineRequest>& timeline) {
    const std::vector<node::StepPhase> unfused = node::training_step_phases(
        params.workload.network, params.workload.batch, params.precision.per_layer, params.precision.rounding,
        params.node.resolved, params.run.phase_selection(), params.run.optimizer);
    std::vector<node::StepPhase> phases = unfused;
    if (params.node.fusion == config::Fusion::on)
        node::fuse_forward_phases(phases, params.workload.network, params.workload.batch);
    TrainingStepResult result;
    std::optional<NodeTimeline> recorder;
    if (timeline) recorder.emplace(params.workload.network, params.node.resolved.clock_hz, *timeline);
    const bool stepped = params.run.fidelity == config::Fidelity::stepped;
    // (1) Every phase on the memo path: the memo fidelity's result, and for stepped the proof,
    // before any SystemC thread runs, that no count overflows (stepped = memo, tested).
    std::vector<node::PhaseCounters> counters;
    node::ArrayTimingMemo memo;
    node::TileStageLog stages;
    std::uint64_t phase_start = 0;
    for (std::size_t i = 0; i < phases.size(); ++i) {
        const node::StepPhase& s = phases[i];
        stages.clear();
        const bool record = recorder && !stepped;
        with_layer_named(params, s.layer, [&] {
            if (s.on_vector_unit) {
                counters.push_back(node::run_vector_memo(s.vector, params.node.resolved));
                result.total += counters.back();
                if (record) recorder->add_phase(s, phase_start, counters.back());
                phase_start = result.total.cycles;
                return;
            }
            node::PhaseCounters phase;
            std::uint64_t index = 0;  // of the GEMM in the phase
            for (const node::PhaseGemm& g : s.gemms) {
                stages.clear();
                const node::PhaseCounters gemm = node::counted(
                    node::run_phase_memo(g.job, params.node.resolved, memo, record ? &stages : nullptr), g);
                if (record)
                    for (std::uint64_t c = 0; c < g.count; ++c, ++index)
                        recorder->add_gemm(s, index, phase_start + phase.cycles + c * gemm.cycles, stages);
                phase += gemm.repeated(g.count);
            }
            phase.macs = s.macs;
            counters.push_back(phase);
            result.total += counters.back();  // the step's sums fit 64 bits, or the layer is named
            if (record) recorder->add_phase(s, phase_start, counters.back());
            phase_start = result.total.cycles;
        });
        if (progress && !stepped) progress(static_cast<double>(i + 1) / static_cast<double>(phases.size()));
    }
    result.distinct_tile_shapes = memo.size();
    // (2) The stepped fidelity: the SystemC node, which must give the same counters (tested), so
    // the memo path's totals are its totals too and its own sums cannot overflow.
    if (stepped) {
        const std::vector<node::PhaseCounters> memo_counters = counters;
        counters = run_stepped(params, phases, progress, recorder ? &*recorder : nullptr);
        if (counters != memo_counters)
            throw std::logic_error("the stepped node's counters differ from the memo path's");
    }
    for (std::size_t i = 0; i < phases.size(); ++i) {
        PhaseResult r{phases[i], counters[i], phase_energy(params, counters[i])};
        if (phases[i].fused) {  // the same phase unfused, on the memo path (= stepped, tested)
            const node::StepPhase& u = unfused[i];
            node::PhaseCounters before;
            if (u.on_vector_unit)
                before = node::run_vector_memo(u.vector, params.node.resolved);
            else
                for (const node::PhaseGemm& g : u.gemms)
                    before +=
                        node::counted(node::run_phase_memo(g.job, params.node.resolved, memo), g).repeated(g.count);
            before.macs = u.on_vector_unit ? before.macs : u.macs;
            r.dram_saved_bits = before.traffic.dram_bits() - counters[i].traffic.dram_bits();
        }
        result.total_energy += r.energy;
        result.phases.push_back(std::move(r));
    }
    if (recorder) result.timeline = recorder->finish(result.total.cycles);
    return result;
}

}  // namespace fastsim::run

namespace fastsim::run {

WholeRunResult run_whole_training(const config::Params& params, const TrainingStepResult& first_step,
                                  const WorkProgress& progress) {
    const auto& segments = params.precision.segments;
    WholeRunResult run;
    for (std::size_t i = 0; i < segments.size(); ++i) {
        std::size_t reuse = i;
        for (std::size_t j = 0; j < i && reuse == i; ++j)
            if (segments[j].per_layer == segments[i].per_layer) reuse = j;
        const TrainingStepResult* step = nullptr;
        TrainingStepResult simulated;
        if (reuse == i && i == 0) {
            step = &first_step;
        } else if (reuse == i) {
            config::Params at = params;
            at.precision.per_layer = segments[i].per_layer;
            // One SystemC simulation per process: step 0 may be stepped, the others take the memo
            // path, which equals it counter for counter (docs/node.md, "Fidelity").
            at.run.fidelity = config::Fidelity::memo;
            simulated = run_training_step(at, progress);
            step = &simulated;
        }
        RunSegment segment;
        segment.first_step = segments[i].first_step;
        segment.steps = segments[i].steps;
        // One width for every layer and phase (as a schedule list without layer overrides, or a
        // log row that sets all alike) is shown as such; otherwise the segment's defaults.
        const node::TensorPrecision first =
            segments[i].per_layer.empty() ? segments[i].defaults : segments[i].per_layer[0][0];
        for (const node::LayerPrecision& layer : segments[i].per_layer)
            for (const node::TensorPrecision& phase : layer) segment.uniform = segment.uniform && phase == first;
        segment.widths = segment.uniform ? first : segments[i].defaults;
        if (step != nullptr) {
            segment.step_cycles = step->total.cycles;
            segment.step_energy_pj = step->total_energy.total_pj();
            ++run.distinct_steps;
        } else {
            segment.step_cycles = run.segments[reuse].step_cycles;
            segment.step_energy_pj = run.segments[reuse].step_energy_pj;
        }
        std::uint64_t cycles = 0;
        if (__builtin_mul_overflow(segment.step_cycles, segment.steps, &cycles) ||
            __builtin_add_overflow(run.total_cycles, cycles, &run.total_cycles))
            throw UserError(params.source_file + ": workload.steps: " + std::to_string(params.workload.steps) +
                            " steps of this run take more than 2^64 cycles");
        run.total_energy_pj += segment.step_energy_pj * static_cast<double>(segment.steps);
        run.segments.push_back(segment);
    }
    return run;
}

std::optional<std::string> converter_bound_note(const config::Params& params, const TrainingStepResult& step) {
    std::size_t bound = 0;
    const PhaseResult* worst = nullptr;
    double worst_share = 0;
    for (const PhaseResult& p : step.phases) {
        if (p.counters.cycles == 0) continue;
        const double share =
            static_cast<double>(p.counters.converter_wait_cycles) / static_cast<double>(p.counters.cycles);
        if (!(share > kConverterBoundShare)) continue;
        ++bound;
        if (share > worst_share) {
            worst_share = share;
            worst = &p;
        }
    }
    if (bound == 0) return std::nullopt;
    const node::NodeParams& node = params.node.resolved;
    std::ostringstream out;
    const double step_share = step.total.cycles > 0 ? static_cast<double>(step.total.converter_wait_cycles) /
                                                          static_cast<double>(step.total.cycles)
                                                    : 0.0;
    out << bound << " of " << step.phases.size() << " phases are converter-bound (over "
        << static_cast<int>(kConverterBoundShare * 100) << "% of their cycles waiting for the converter; " << std::fixed
        << std::setprecision(1) << 100 * step_share << "% of the step in all); the worst, "
        << params.workload.network.layers[worst->step.layer].name << " " << node::phase_name(worst->step) << ", waits "
        << 100 * worst_share << "% of its cycles. node.converter.lanes is " << node.converter.lanes;
    const int feeding = converter::lanes_to_feed(node.array.group_size, node.array.cols);
    if (node.converter.lanes < feeding)
        out << "; " << feeding << " (2 x node.array.cols) keep up with the array's output at every precision";
    else
        out << ", enough for the array's output rate: the wait is each output tile's (or vector-unit chunk's) "
               "conversion, which its write-back and the loads queued behind it wait for";
    return out.str();
}

}  // namespace fastsim::run
