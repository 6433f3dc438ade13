// SPDX-License-Identifier: MIT
#include "run/training_step.h"

#include <systemc>

#include <memory>
#include <random>

#include "fmac/training_gemm.h"
#include "node/node.h"

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
                                             const Progress& progress) {
    std::vector<node::PhaseCounters> counters(phases.size());
    node::Node fast_node("node", params.node.resolved);
    sc_core::sc_spawn([&] {
        std::mt19937_64 rng(params.run.seed);
        for (std::size_t i = 0; i < phases.size(); ++i) {
            const node::StepPhase& s = phases[i];
            const node::TensorPrecision& precision =
                params.precision.per_layer[s.layer][static_cast<std::size_t>(s.phase)];
            for (std::uint64_t c = 0; c < s.count; ++c) {
                const auto a = normal_values(s.dims.batch * s.dims.in, rng);
                const auto w = normal_values(s.dims.in * s.dims.out, rng);
                const auto d_out = normal_values(s.dims.batch * s.dims.out, rng);
                bfp::Quantizer q_act(params.bfp.format(precision.activations), params.precision.rounding.activations,
                                     params.bfp.noise(rng()));
                bfp::Quantizer q_w(params.bfp.format(precision.weights), bfp::Rounding::nearest);
                bfp::Quantizer q_grad(params.bfp.format(precision.gradients), params.precision.rounding.gradients,
                                      params.bfp.noise(rng()));
                const fmac::PhaseOperands operands =
                    fmac::lower_phase(s.phase, s.dims, a.data(), w.data(), d_out.data(), q_act, q_w, q_grad);
                std::vector<float> out;
                counters[i] += fast_node.run_phase(s.job, operands.x, operands.y_transposed, out);
            }
            if (progress) progress(i + 1, phases.size());
        }
    });
    sc_core::sc_start();
    return counters;
}

}  // namespace

energy::EnergyBreakdown counters_energy(const node::PhaseCounters& c, const node::NodeParams& node, double sram_kib,
                                        std::uint64_t arrays, const energy::EnergyTable& table) {
    energy::ActionCounts n;
    n.pe_passes = c.pe_passes;
    n.group_products = c.group_products;
    n.comparator_ops = c.conversion.comparator_ops;
    n.subtractor_ops = c.conversion.subtractor_ops;
    n.shifter_ops = c.conversion.shifter_ops;
    n.noise_adds = c.conversion.noise_adds;
    n.lfsr_steps = c.conversion.lfsr_steps;
    n.sram_exponent_read_bits = c.sram_exponent_read_bits;
    n.sram_exponent_write_bits = c.sram_exponent_write_bits;
    n.sram_mantissa_read_bits = c.sram_mantissa_read_bits;
    n.sram_mantissa_write_bits = c.sram_mantissa_write_bits;
    n.dram_bits = c.dram_read_bits + c.dram_write_bits;
    n.cycles = c.cycles;
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

TrainingStepResult run_training_step(const config::Params& params, const Progress& progress) {
    const auto phases = node::training_step_phases(params.workload.network, params.workload.batch,
                                                   params.precision.per_layer, params.precision.rounding);
    std::vector<node::PhaseCounters> counters;
    TrainingStepResult result;
    if (params.run.fidelity == config::Fidelity::stepped) {
        counters = run_stepped(params, phases, progress);
    } else {
        node::ArrayTimingMemo memo;
        for (std::size_t i = 0; i < phases.size(); ++i) {
            counters.push_back(node::run_phase_memo(phases[i].job, params.node.resolved, memo).repeated(phases[i].count));
            if (progress) progress(i + 1, phases.size());
        }
        result.distinct_tile_shapes = memo.size();
    }
    for (std::size_t i = 0; i < phases.size(); ++i) {
        PhaseResult r{phases[i], counters[i], phase_energy(params, counters[i])};
        result.total += r.counters;
        result.total_energy += r.energy;
        result.phases.push_back(std::move(r));
    }
    return result;
}

}  // namespace fastsim::run
