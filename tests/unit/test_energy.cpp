// SPDX-License-Identifier: MIT
// The energy roll-up against a hand computation.
#include <catch2/catch.hpp>

#include "energy/energy.h"

using namespace fastsim;

TEST_CASE("energy_of: actions times the table, leakage over wall time", "[energy]") {
    energy::EnergyTable t;
    t.chunk_multiply_pj = 0.01;
    t.adder_tree_add_pj = 0.02;
    t.pass_accumulate_pj = 0.05;
    t.exponent_add_pj = 0.03;
    t.psum_add_pj = 0.9;
    t.comparator_pj = 1;
    t.subtractor_pj = 2;
    t.shifter_pj = 3;
    t.noise_add_pj = 4;
    t.lfsr_step_pj = 5;
    t.vector_op_pj = 3;
    t.sram_exponent_read_pj_per_bit = 0.1;
    t.sram_exponent_write_pj_per_bit = 0.2;
    t.sram_mantissa_read_pj_per_bit = 1;
    t.sram_mantissa_write_pj_per_bit = 2;
    t.dram_pj_per_bit = 8;
    t.leakage_mw_per_pe = 0.5;
    t.leakage_mw_per_sram_kib = 0.25;
    // Every count a different prime and, within each component, every coefficient different, so
    // that energy_of pairing a count with another action's coefficient changes the result.
    energy::ActionCounts n;
    n.array.pe_passes = 101;
    n.array.group_products = 11;
    n.conversion.comparator_ops = 2;
    n.conversion.subtractor_ops = 3;
    n.conversion.shifter_ops = 5;
    n.conversion.noise_adds = 13;
    n.conversion.lfsr_steps = 17;
    n.traffic.sram_exponent_read_bits = 19;
    n.traffic.sram_exponent_write_bits = 23;
    n.traffic.sram_mantissa_read_bits = 29;
    n.traffic.sram_mantissa_write_bits = 31;
    n.traffic.dram_read_bits = 37;
    n.traffic.dram_write_bits = 41;
    n.vector.ops = 7;
    n.cycles = 1000;
    const energy::StaticContext context{16, 4, 8.0, 1e9};
    const energy::EnergyBreakdown e = energy::energy_of(n, t, context);
    // Per pass: 16 x 0.01 + 15 x 0.02 + 0.05 = 0.51 pJ; per group product 0.03 + 0.9 = 0.93 pJ.
    // 101 x 0.51 + 11 x 0.93 = 51.51 + 10.23.
    CHECK(e.fmac_pj == Approx(61.74));
    // 2 x 1 + 3 x 2 + 5 x 3 + 13 x 4 + 17 x 5 = 2 + 6 + 15 + 52 + 85.
    CHECK(e.converter_pj == Approx(160));
    // 19 x 0.1 + 23 x 0.2 + 29 x 1 + 31 x 2 = 1.9 + 4.6 + 29 + 62.
    CHECK(e.sram_pj == Approx(97.5));
    // (37 + 41) x 8.
    CHECK(e.dram_pj == Approx(624));
    // (4 x 0.5 + 8 x 0.25) mW = 4 mW for 1000 cycles at 1 GHz = 1 us -> 4 nJ = 4000 pJ.
    CHECK(e.leakage_pj == Approx(4000));
    // 7 x 3.
    CHECK(e.vector_pj == Approx(21));
    CHECK(e.total_pj() == Approx(61.74 + 160 + 21 + 97.5 + 624 + 4000));
}
