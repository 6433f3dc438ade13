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

namespace {

/// The shipped table's area section (configs/energy/fast_45nm.yaml).
energy::AreaTable shipped_area() {
    energy::AreaTable t;
    t.chunk_multiplier_um2 = 31.3;
    t.adder_um2_per_bit = 10.96;
    t.comparator_um2_per_bit = 2.80;
    t.register_um2_per_bit = 7.55;
    t.shifter_um2 = 350.8;
    t.fp32_adder_um2 = 1052.5;
    t.fp32_multiplier_um2 = 4595.4;
    t.sram = {4, 23027.4, 1.164, 128};
    return t;
}

}  // namespace

TEST_CASE("area by hand: an fMAC, a converter lane, a vector lane and the node", "[energy][area]") {
    const energy::AreaTable t = shipped_area();
    energy::NodeHardware h;  // g = 16, m = 8, e = 8, 8 noise bits, 16-bit LFSR
    // 16 chunk multipliers; the tree's 8 x 5 + 4 x 6 + 2 x 7 + 1 x 8 = 86 adder bits; a 21-bit
    // accumulator (2 x 8 + 4 + 1) adder and register; an 8-bit exponent adder; the fp32 psum
    // adder and its 32-bit register; two operand registers of 16 x 8 + 8 bits.
    const double pe = 16 * 31.3 + 86 * 10.96 + 21 * (10.96 + 7.55) + 8 * 10.96 + 1052.5 + 32 * 7.55 + 2 * 136 * 7.55;
    CHECK(energy::pe_um2(h, t) == Approx(pe));
    h.group_size = 3;  // an odd level passes its last value up: 1 x 5 + 1 x 6 adder bits, ceil(log2 3) = 2
    CHECK(energy::pe_um2(h, t) ==
          Approx(3 * 31.3 + 11 * 10.96 + 19 * (10.96 + 7.55) + 8 * 10.96 + 1052.5 + 32 * 7.55 + 2 * 32 * 7.55));
    h.group_size = 16;
    CHECK(energy::converter_lane_um2(h, t) == Approx(8 * 2.80 + 8 * 10.96 + 350.8 + 8 * 10.96 + 16 * 7.55));
    CHECK(energy::vector_lane_um2(t) == Approx(1052.5 + 4595.4 + 96 * 7.55));
    h.pes = 1024;
    h.converter_lanes = 64;
    h.vector_lanes = 32;
    h.exponent_bank_kib = 64;
    h.mantissa_bank_kib = 1024;
    const energy::AreaBreakdown a = energy::area_of(h, t);
    CHECK(a.array_mm2 == Approx(1024 * pe / 1e6));
    CHECK(a.converter_mm2 == Approx(64 * energy::converter_lane_um2(h, t) / 1e6));
    CHECK(a.vector_mm2 == Approx(32 * energy::vector_lane_um2(t) / 1e6));
    CHECK(a.sram_mm2 == Approx((energy::sram_bank_um2(64, t.sram) + 8 * energy::sram_bank_um2(128, t.sram)) / 1e6));
    CHECK(a.total_mm2() == Approx(a.array_mm2 + a.converter_mm2 + a.vector_mm2 + a.sram_mm2));
    h.arrays = 2;  // banks come once per array
    CHECK(energy::area_of(h, t).sram_mm2 == Approx(2 * a.sram_mm2));
}

TEST_CASE("SRAM area follows its CACTI points and grows by sub-banks beyond them", "[energy][area]") {
    const energy::SramAreaFit fit = shipped_area().sram;
    // The two CACTI figures the fit is drawn through: 4 KiB 23,027 um2 (45 nm) and the 100 KiB
    // Eyeriss-like buffer, 774,388 um2 at 40 nm = 977,278 um2 at 45 nm.
    CHECK(energy::sram_bank_um2(4, fit) == Approx(23027.4));
    CHECK(energy::sram_bank_um2(100, fit) == Approx(774388.0 / energy::area_scale_from_45nm(40)).epsilon(0.005));
    CHECK(energy::sram_bank_um2(256, fit) == Approx(2 * energy::sram_bank_um2(128, fit)));  // two sub-banks
    CHECK(energy::sram_bank_um2(200, fit) == Approx(energy::sram_bank_um2(128, fit) + energy::sram_bank_um2(72, fit)));
    // More capacity never takes less area, across every sub-bank boundary.
    for (double kib = 1; kib < 600; kib += 1)
        CHECK(energy::sram_bank_um2(kib + 1, fit) > energy::sram_bank_um2(kib, fit));
    CHECK(energy::sram_bank_um2(0, fit) == 0);
}

TEST_CASE("area scales between process nodes as Stillmaker and Baas give it", "[energy][area]") {
    CHECK(energy::area_scale_from_45nm(45) == 1);
    CHECK(energy::area_scale_from_45nm(32) == Approx(0.46));
    CHECK(energy::area_scale_from_45nm(7) == Approx(0.059));
    CHECK(energy::area_scale_from_45nm(130) == Approx(6.4));
    CHECK(energy::area_scale_from_45nm(40) == Approx(0.46 + 8.0 / 13 * 0.54));  // linear between 32 and 45
    CHECK(energy::area_scale_from_45nm(5) == Approx(0.059 * 25.0 / 49));        // quadratic beyond 7 nm
    CHECK(energy::area_scale(32, 45) == Approx(1 / 0.46));
    CHECK_THROWS_AS(energy::area_scale_from_45nm(0), std::invalid_argument);
}
