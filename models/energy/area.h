// SPDX-License-Identifier: MIT
// Silicon area of a FAST node, by component (docs/energy.md, "Area"): plain arithmetic over the
// node's parts and the energy table's per-part areas.
#pragma once

#include <array>
#include <cstdint>

namespace fastsim::energy {

/// A CACTI-like fit of an SRAM bank's area against its capacity: a bank of C KiB up to
/// `subbank_kib` takes reference_um2 x (C / reference_kib)^exponent; a larger bank is built of
/// floor(C / subbank_kib) full sub-banks and one of the rest, each costed so.
struct SramAreaFit {
    double reference_kib = 0;
    double reference_um2 = 0;
    double exponent = 1;
    double subbank_kib = 0;
};

/// Area per part at the table's process node, µm² (the energy table's `area` section; every
/// figure there carries its source).
struct AreaTable {
    double process_nm = 45;
    double chunk_multiplier_um2 = 0;    ///< one signed 2-bit x 2-bit multiplier
    double adder_um2_per_bit = 0;       ///< integer adder, per bit of width
    double comparator_um2_per_bit = 0;  ///< magnitude comparator, per bit of width
    double register_um2_per_bit = 0;    ///< flip-flop
    double shifter_um2 = 0;             ///< barrel shifter of the 24-bit fp32 significand
    double fp32_adder_um2 = 0;
    double fp32_multiplier_um2 = 0;
    SramAreaFit sram;
};

/// The parts of a node that take area.
struct NodeHardware {
    int group_size = 16;    ///< g
    std::uint64_t pes = 0;  ///< fMACs: rows x cols x arrays
    int mantissa_bits = 8;  ///< widest mantissa an operand register holds
    int exponent_bits = 8;  ///< shared exponent e
    int noise_bits = 8;     ///< LFSR noise bits added per value
    int lfsr_bits = 16;     ///< one LFSR per converter lane
    std::uint64_t converter_lanes = 0;
    std::uint64_t vector_lanes = 0;
    double exponent_bank_kib = 0;  ///< per array
    double mantissa_bank_kib = 0;  ///< per array
    std::uint64_t arrays = 1;      ///< SRAM banks come once per array
};

/// Area by component, mm².
struct AreaBreakdown {
    double array_mm2 = 0;      ///< the fMACs: chunk multipliers, adder trees, accumulators, operand registers
    double converter_mm2 = 0;  ///< its lanes
    double vector_mm2 = 0;     ///< its fp32 lanes
    double sram_mm2 = 0;       ///< the exponent and mantissa banks
    [[nodiscard]] double total_mm2() const;
};

/// One component of AreaBreakdown as every report names it: `name` is its key in report.json's
/// area object and area_<name>_mm2 in summary.json.
struct AreaComponent {
    const char* name;
    double AreaBreakdown::*mm2;
};
inline constexpr std::array<AreaComponent, 4> kAreaComponents{{
    {"array", &AreaBreakdown::array_mm2},
    {"converter", &AreaBreakdown::converter_mm2},
    {"vector", &AreaBreakdown::vector_mm2},
    {"sram", &AreaBreakdown::sram_mm2},
}};

inline double AreaBreakdown::total_mm2() const {
    double total = 0;
    for (const AreaComponent& c : kAreaComponents) total += this->*c.mm2;
    return total;
}

/// One fMAC, µm²: g chunk multipliers; the adder tree (g/2 adders of 5 bits, g/4 of 6, ... one
/// level per halving, each a bit wider than its inputs' 4-bit signed products); the pass
/// accumulator (adder and register of 2m + ceil(log2 g) + 1 bits); the exponent adder (e bits);
/// the fp32 partial-sum adder and its 32-bit register; the stationary and the passing operand's
/// registers (g x m + e bits each).
double pe_um2(const NodeHardware& hardware, const AreaTable& table);
/// One converter lane, µm²: an e-bit comparator and subtractor, the significand shifter, a
/// noise adder of noise_bits and its LFSR.
double converter_lane_um2(const NodeHardware& hardware, const AreaTable& table);
/// One vector lane, µm²: an fp32 adder, an fp32 multiplier and three 32-bit registers.
double vector_lane_um2(const AreaTable& table);
/// One SRAM bank of `kib` KiB, µm² (SramAreaFit); 0 for 0 KiB.
double sram_bank_um2(double kib, const SramAreaFit& fit);

/// The node's area by component.
AreaBreakdown area_of(const NodeHardware& hardware, const AreaTable& table);

/// Area at `to_nm` of a part of area 1 at `from_nm`: area_scale_from_45nm(to) / (from).
double area_scale(double from_nm, double to_nm);

/// Area scale from 45 nm to `nm` (Stillmaker & Baas, Integration 2017, their 45 nm row:
/// 130 nm 6.4x ... 7 nm 0.059x), linear between the nodes they list; outside 7 ... 130 nm,
/// quadratic in the node from the nearest. std::invalid_argument unless nm > 0.
double area_scale_from_45nm(double nm);

}  // namespace fastsim::energy
