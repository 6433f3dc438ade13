// SPDX-License-Identifier: MIT
#pragma once

#include <array>

#include <cstdint>
#include <optional>
#include <string>

#include "energy/area.h"
#include "converter/converter_model.h"
#include "fmac/timing.h"
#include "memory/memory.h"
#include "vector/vector_model.h"

namespace fastsim::energy {

/// An SRAM bank's read access time by capacity, a power law fitted to CACTI (docs/energy.md,
/// "Read latency by capacity"): access_ns(C KiB) = ns_at_1kib * C^exponent.
struct SramAccessFit {
    double ns_at_1kib = 0;
    double exponent = 0;
    [[nodiscard]] double access_ns(double kib) const;
};

/// Node cycles at `clock_hz` from a read's issue to its first bits, for a bank of `kib` KiB:
/// ceil(access time * clock); 0 for an empty bank; nullopt above kMaxSramReadLatencyCycles.
std::optional<std::uint64_t> sram_read_latency_cycles(const SramAccessFit& fit, double kib, double clock_hz);
inline constexpr std::uint64_t kMaxSramReadLatencyCycles = std::uint64_t{1} << 32;

/// Energy per action, pJ (docs/energy.md). Loaded from a YAML table (configs/energy/) by
/// sim/config; every figure there carries its source.
struct EnergyTable {
    std::string name;
    // fMAC, per pass of one PE and per group product
    double chunk_multiply_pj = 0;   ///< one signed 2-bit x 2-bit chunk product (one lane, one pass)
    double adder_tree_add_pj = 0;   ///< one adder of the g-input tree
    double pass_accumulate_pj = 0;  ///< shift and add of one pass into the group's integer sum
    double exponent_add_pj = 0;     ///< shared exponents added, once per group product
    double psum_add_pj = 0;         ///< fp32 add of a group product into the partial sum
    // converter, per operation
    double comparator_pj = 0;
    double subtractor_pj = 0;
    double shifter_pj = 0;
    double noise_add_pj = 0;
    double lfsr_step_pj = 0;  ///< one LFSR shift (one noise bit)
    // vector unit
    double vector_op_pj = 0;  ///< one operation of one lane (add, multiply, compare, exp, ...)
    // memories, per bit
    double sram_exponent_read_pj_per_bit = 0;
    double sram_exponent_write_pj_per_bit = 0;
    double sram_mantissa_read_pj_per_bit = 0;
    double sram_mantissa_write_pj_per_bit = 0;
    /// The four above are a full sub-bank's; a bank smaller than its sub-bank costs
    /// (capacity / sub-bank)^sram_capacity_exponent of them (for_banks). 0 KiB: no sub-bank, no scaling.
    double sram_exponent_subbank_kib = 0;
    double sram_mantissa_subbank_kib = 0;
    double sram_capacity_exponent = 0;
    /// Read access time by capacity; none in a table without the fit (banks then read with no
    /// latency of their own).
    std::optional<SramAccessFit> sram_access;
    double dram_pj_per_bit = 0;  ///< for the node's DRAM type
    // static power
    double leakage_mw_per_pe = 0;
    double leakage_mw_per_sram_kib = 0;
    /// The table's `area` section; none in a table without one (area then unknown).
    std::optional<AreaTable> area;
};

/// What the node did, as the counters of the parts that did it; filled from node::PhaseCounters.
struct ActionCounts {
    fmac::ArrayCounters array;
    converter::ConversionCost conversion;
    memory::Traffic traffic;
    vector::VectorUnitCounts vector;
    std::uint64_t cycles = 0;  ///< wall cycles: leakage accrues through stalls too
};

/// The hardware that leaks and the clock that turns cycles into time.
struct StaticContext {
    int group_size = 16;
    std::uint64_t pes = 0;
    double sram_kib = 0;
    double clock_hz = 1e9;
};

/// Energy by component, pJ.
struct EnergyBreakdown {
    double fmac_pj = 0;  ///< chunk multiplies, adder trees, accumulators, exponent and psum adds
    double converter_pj = 0;
    double vector_pj = 0;  ///< the vector unit's operations
    double sram_pj = 0;
    double dram_pj = 0;
    double leakage_pj = 0;  ///< static energy over the wall cycles
    [[nodiscard]] double total_pj() const;
    EnergyBreakdown& operator+=(const EnergyBreakdown& o);
};

/// One component of EnergyBreakdown as every report names it: `name` is its key in report.json's
/// energy_pj, energy_<name>_pj in CSV files, energy_<name>_uj in summary.json, and the word in
/// the printed energy lines.
struct EnergyComponent {
    const char* name;
    double EnergyBreakdown::*pj;
};
/// Every component, in report order; a member missing here fails the size check in energy.cpp.
inline constexpr std::array<EnergyComponent, 6> kEnergyComponents{{
    {"fmac", &EnergyBreakdown::fmac_pj},
    {"converter", &EnergyBreakdown::converter_pj},
    {"vector", &EnergyBreakdown::vector_pj},
    {"sram", &EnergyBreakdown::sram_pj},
    {"dram", &EnergyBreakdown::dram_pj},
    {"leakage", &EnergyBreakdown::leakage_pj},
}};

inline double EnergyBreakdown::total_pj() const {
    double total = 0;
    for (const EnergyComponent& c : kEnergyComponents) total += this->*c.pj;
    return total;
}

inline EnergyBreakdown& EnergyBreakdown::operator+=(const EnergyBreakdown& o) {
    for (const EnergyComponent& c : kEnergyComponents) this->*c.pj += o.*c.pj;
    return *this;
}

/// `table` for a node whose exponent and mantissa banks hold `exponent_kib` and `mantissa_kib`:
/// each bank's SRAM energies per bit times (min(capacity, sub-bank) / sub-bank)^sram_capacity_exponent,
/// so a bank smaller than a sub-bank costs less per bit, a larger one a sub-bank's (an access
/// reaches one; docs/energy.md, "SRAM by capacity").
EnergyTable for_banks(EnergyTable table, double exponent_kib, double mantissa_kib);

/// Energy of `counts` under `table`: per pass, g chunk multiplies, g - 1 tree adds and one
/// accumulate; per group product one exponent add and one psum add; converter and memory
/// actions and vector-unit operations by their counts; leakage = (pes * mW/PE + KiB * mW/KiB) * cycles / clock.
EnergyBreakdown energy_of(const ActionCounts& counts, const EnergyTable& table, const StaticContext& context);

}  // namespace fastsim::energy
