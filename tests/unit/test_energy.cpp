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
    energy::ActionCounts n;
    n.array.pe_passes = 100;
    n.array.group_products = 10;
    n.conversion.comparator_ops = 1;
    n.conversion.subtractor_ops = 1;
    n.conversion.shifter_ops = 1;
    n.conversion.noise_adds = 1;
    n.conversion.lfsr_steps = 1;
    n.traffic.sram_exponent_read_bits = 10;
    n.traffic.sram_exponent_write_bits = 10;
    n.traffic.sram_mantissa_read_bits = 10;
    n.traffic.sram_mantissa_write_bits = 10;
    n.traffic.dram_read_bits = 4;
    n.traffic.dram_write_bits = 6;
    n.vector.ops = 7;
    n.cycles = 1000;
    const energy::StaticContext context{16, 4, 8.0, 1e9};
    const energy::EnergyBreakdown e = energy::energy_of(n, t, context);
    // Per pass: 16 x 0.01 + 15 x 0.02 + 0.05 = 0.51 pJ; per group product 0.93 pJ.
    CHECK(e.fmac_pj == Approx(100 * 0.51 + 10 * 0.93));
    CHECK(e.converter_pj == Approx(15));
    CHECK(e.sram_pj == Approx(10 * (0.1 + 0.2 + 1 + 2)));
    CHECK(e.dram_pj == Approx(80));
    // (4 x 0.5 + 8 x 0.25) mW = 4 mW for 1000 cycles at 1 GHz = 1 us -> 4 nJ = 4000 pJ.
    CHECK(e.leakage_pj == Approx(4000));
    CHECK(e.vector_pj == Approx(21));
    CHECK(e.total_pj() == Approx(e.fmac_pj + e.converter_pj + 21 + e.sram_pj + e.dram_pj + 4000));
}
