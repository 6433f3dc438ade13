// SPDX-License-Identifier: MIT
#include "energy/area.h"

#include <cmath>
#include <stdexcept>

namespace fastsim::energy {
namespace {

constexpr double kUm2PerMm2 = 1e6;

/// ceil(log2 n) for n >= 1.
int ceil_log2(int n) {
    int levels = 0;
    for (int width = 1; width < n; width *= 2) ++levels;
    return levels;
}

/// Adder-bits of a g-input tree of 4-bit signed products: level l (1, 2, ...) adds the
/// previous level's values pairwise at 4 + l bits; an odd one passes to the next level.
double adder_tree_bits(int g) {
    double bits = 0;
    int values = g;
    for (int level = 1; values > 1; ++level) {
        bits += static_cast<double>(values / 2) * (4 + level);
        values = (values + 1) / 2;
    }
    return bits;
}

}  // namespace

double pe_um2(const NodeHardware& h, const AreaTable& t) {
    const double g = h.group_size, m = h.mantissa_bits, e = h.exponent_bits;
    const double accumulator_bits = 2 * m + ceil_log2(h.group_size) + 1;
    const double operand_register_bits = g * m + e;
    return g * t.chunk_multiplier_um2 + adder_tree_bits(h.group_size) * t.adder_um2_per_bit +
           accumulator_bits * (t.adder_um2_per_bit + t.register_um2_per_bit) + e * t.adder_um2_per_bit +
           t.fp32_adder_um2 + 32 * t.register_um2_per_bit + 2 * operand_register_bits * t.register_um2_per_bit;
}

double converter_lane_um2(const NodeHardware& h, const AreaTable& t) {
    const double e = h.exponent_bits;
    return e * t.comparator_um2_per_bit + e * t.adder_um2_per_bit + t.shifter_um2 + h.noise_bits * t.adder_um2_per_bit +
           h.lfsr_bits * t.register_um2_per_bit;
}

double vector_lane_um2(const AreaTable& t) {
    return t.fp32_adder_um2 + t.fp32_multiplier_um2 + 3 * 32 * t.register_um2_per_bit;
}

double sram_bank_um2(double kib, const SramAreaFit& fit) {
    if (!(kib > 0)) return 0;
    const auto fitted = [&](double c) {
        return c > 0 ? fit.reference_um2 * std::pow(c / fit.reference_kib, fit.exponent) : 0;
    };
    if (!(fit.subbank_kib > 0) || kib <= fit.subbank_kib) return fitted(kib);
    // Whole sub-banks, and one smaller for the rest: never less area for more capacity.
    const double whole = std::floor(kib / fit.subbank_kib);
    return whole * fitted(fit.subbank_kib) + fitted(kib - whole * fit.subbank_kib);
}

AreaBreakdown area_of(const NodeHardware& h, const AreaTable& t) {
    const auto d = [](std::uint64_t v) { return static_cast<double>(v); };
    AreaBreakdown a;
    a.array_mm2 = d(h.pes) * pe_um2(h, t) / kUm2PerMm2;
    a.converter_mm2 = d(h.converter_lanes) * converter_lane_um2(h, t) / kUm2PerMm2;
    a.vector_mm2 = d(h.vector_lanes) * vector_lane_um2(t) / kUm2PerMm2;
    a.sram_mm2 = d(h.arrays) *
                 (sram_bank_um2(h.exponent_bank_kib, t.sram) + sram_bank_um2(h.mantissa_bank_kib, t.sram)) / kUm2PerMm2;
    return a;
}

double area_scale(double from_nm, double to_nm) { return area_scale_from_45nm(to_nm) / area_scale_from_45nm(from_nm); }

double area_scale_from_45nm(double nm) {
    if (!(nm > 0) || !std::isfinite(nm)) throw std::invalid_argument("area_scale_from_45nm: a node > 0 nm");
    struct Point {
        double nm, scale;
    };
    static constexpr std::array<Point, 10> kRow{{{130, 6.4},
                                                 {90, 2.8},
                                                 {65, 1.5},
                                                 {45, 1},
                                                 {32, 0.46},
                                                 {20, 0.21},
                                                 {16, 0.19},
                                                 {14, 0.17},
                                                 {10, 0.1},
                                                 {7, 0.059}}};
    if (nm >= kRow.front().nm) return kRow.front().scale * (nm / kRow.front().nm) * (nm / kRow.front().nm);
    if (nm <= kRow.back().nm) return kRow.back().scale * (nm / kRow.back().nm) * (nm / kRow.back().nm);
    for (std::size_t i = 1; i < kRow.size(); ++i)
        if (nm >= kRow[i].nm) {
            const double f = (nm - kRow[i].nm) / (kRow[i - 1].nm - kRow[i].nm);
            return kRow[i].scale + f * (kRow[i - 1].scale - kRow[i].scale);
        }
    return 1;
}

}  // namespace fastsim::energy
