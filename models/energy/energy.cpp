// SPDX-License-Identifier: MIT
#include "energy/energy.h"

#include <algorithm>
#include <cmath>

namespace fastsim::energy {

static_assert(sizeof(EnergyBreakdown) == kEnergyComponents.size() * sizeof(double),
              "every EnergyBreakdown member needs its row in kEnergyComponents");

double SramAccessFit::access_ns(double kib) const { return ns_at_1kib * std::pow(kib, exponent); }

std::optional<std::uint64_t> sram_read_latency_cycles(const SramAccessFit& fit, double kib, double clock_hz) {
    if (!(kib > 0)) return 0;
    // Less a millionth of a cycle, so an access of exactly k periods takes k cycles, not k + 1.
    const double cycles = std::ceil(fit.access_ns(kib) * 1e-9 * clock_hz - 1e-6);
    if (!(cycles <= static_cast<double>(kMaxSramReadLatencyCycles))) return std::nullopt;
    return cycles > 0 ? static_cast<std::uint64_t>(cycles) : 0;
}

EnergyTable for_banks(EnergyTable t, double exponent_kib, double mantissa_kib) {
    const auto factor = [&](double kib, double subbank_kib) {
        return subbank_kib > 0 && kib > 0 ? std::pow(std::min(kib, subbank_kib) / subbank_kib, t.sram_capacity_exponent)
                                          : 1.0;
    };
    const double exponent = factor(exponent_kib, t.sram_exponent_subbank_kib);
    const double mantissa = factor(mantissa_kib, t.sram_mantissa_subbank_kib);
    t.sram_exponent_read_pj_per_bit *= exponent;
    t.sram_exponent_write_pj_per_bit *= exponent;
    t.sram_mantissa_read_pj_per_bit *= mantissa;
    t.sram_mantissa_write_pj_per_bit *= mantissa;
    return t;
}

EnergyBreakdown energy_of(const ActionCounts& n, const EnergyTable& t, const StaticContext& context) {
    const auto d = [](std::uint64_t v) { return static_cast<double>(v); };
    const double g = context.group_size;
    EnergyBreakdown e;
    const fmac::ArrayCounters& a = n.array;
    e.fmac_pj = d(a.pe_passes) * (g * t.chunk_multiply_pj + (g - 1) * t.adder_tree_add_pj + t.pass_accumulate_pj) +
                d(a.group_products) * (t.exponent_add_pj + t.psum_add_pj);
    const converter::ConversionCost& c = n.conversion;
    e.converter_pj = d(c.comparator_ops) * t.comparator_pj + d(c.subtractor_ops) * t.subtractor_pj +
                     d(c.shifter_ops) * t.shifter_pj + d(c.noise_adds) * t.noise_add_pj +
                     d(c.lfsr_steps) * t.lfsr_step_pj;
    e.vector_pj = d(n.vector.ops) * t.vector_op_pj;
    const memory::Traffic& m = n.traffic;
    e.sram_pj = d(m.sram_exponent_read_bits) * t.sram_exponent_read_pj_per_bit +
                d(m.sram_exponent_write_bits) * t.sram_exponent_write_pj_per_bit +
                d(m.sram_mantissa_read_bits) * t.sram_mantissa_read_pj_per_bit +
                d(m.sram_mantissa_write_bits) * t.sram_mantissa_write_pj_per_bit;
    e.dram_pj = d(m.dram_bits()) * t.dram_pj_per_bit;
    const double leakage_mw = d(context.pes) * t.leakage_mw_per_pe + context.sram_kib * t.leakage_mw_per_sram_kib;
    e.leakage_pj = leakage_mw * 1e-3 * (d(n.cycles) / context.clock_hz) * 1e12;  // mW * s -> pJ
    return e;
}

}  // namespace fastsim::energy
