// SPDX-License-Identifier: MIT
#include "report/scalesim_reports.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

namespace fastsim::report {

std::string python_float(double v) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
    char buf[64];
    const auto end = std::to_chars(buf, buf + sizeof buf, v, std::chars_format::scientific).ptr;
    const std::string s(buf, end);  // [-]d[.ddd]e[+-]xx, shortest round trip
    const bool negative = s[0] == '-';
    const std::size_t e_at = s.find('e');
    std::string digits;
    for (std::size_t i = negative ? 1 : 0; i < e_at; ++i)
        if (s[i] != '.') digits += s[i];
    const int exponent = std::atoi(s.c_str() + e_at + 1);
    std::string out = negative ? "-" : "";
    if (exponent >= -4 && exponent < 16) {
        if (exponent >= 0) {
            const std::size_t whole = static_cast<std::size_t>(exponent) + 1;
            if (digits.size() <= whole)
                out += digits + std::string(whole - digits.size(), '0') + ".0";
            else
                out += digits.substr(0, whole) + "." + digits.substr(whole);
        } else {
            out += "0." + std::string(static_cast<std::size_t>(-exponent - 1), '0') + digits;
        }
        return out;
    }
    out += digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    const int magnitude = std::abs(exponent);
    out += std::string("e") + (exponent < 0 ? "-" : "+") + (magnitude < 10 ? "0" : "") + std::to_string(magnitude);
    return out;
}

namespace {

std::string row(std::size_t id, const std::vector<std::string>& items) {
    std::string line = std::to_string(id) + ", ";
    for (std::size_t i = 0; i < items.size(); ++i) line += (i ? ", " : "") + items[i];
    return line + ",\n";
}

/// A trace timestamp: SCALE-Sim's traces are numpy float arrays, so it prints "12.0".
std::string cycle(std::int64_t c) { return python_float(double(c)); }

}  // namespace

ScalesimReports scalesim_reports(const std::vector<scalesim::LayerReport>& layers) {
    ScalesimReports r;
    r.compute = "LayerID, Total Cycles, Stall Cycles, Overall Util %, Mapping Efficiency %, Compute Util %,\n";
    r.bandwidth =
        "LayerID, Avg IFMAP SRAM BW, Avg FILTER SRAM BW, Avg OFMAP SRAM BW, "
        "Avg IFMAP DRAM BW, Avg FILTER DRAM BW, Avg OFMAP DRAM BW,\n";
    r.detailed_access =
        "LayerID, SRAM IFMAP Start Cycle, SRAM IFMAP Stop Cycle, SRAM IFMAP Reads, "
        "SRAM Filter Start Cycle, SRAM Filter Stop Cycle, SRAM Filter Reads, "
        "SRAM OFMAP Start Cycle, SRAM OFMAP Stop Cycle, SRAM OFMAP Writes, "
        "DRAM IFMAP Start Cycle, DRAM IFMAP Stop Cycle, DRAM IFMAP Reads, "
        "DRAM Filter Start Cycle, DRAM Filter Stop Cycle, DRAM Filter Reads, "
        "DRAM OFMAP Start Cycle, DRAM OFMAP Stop Cycle, DRAM OFMAP Writes,\n";
    for (std::size_t id = 0; id < layers.size(); ++id) {
        const scalesim::LayerReport& l = layers[id];
        r.compute += row(
            id, {std::to_string(l.total_cycles), std::to_string(l.stall_cycles), python_float(l.overall_util_percent),
                 python_float(l.mapping_efficiency_percent), python_float(l.compute_util_percent)});
        using LR = scalesim::LayerReport;
        r.bandwidth +=
            row(id, {python_float(l.sram_bandwidth(l.ifmap_sram)), python_float(l.sram_bandwidth(l.filter_sram)),
                     python_float(l.sram_bandwidth(l.ofmap_sram)), python_float(LR::dram_bandwidth(l.ifmap_dram)),
                     python_float(LR::dram_bandwidth(l.filter_dram)), python_float(LR::dram_bandwidth(l.ofmap_dram))});
        std::vector<std::string> detail;
        for (const LR::Access* a :
             {&l.ifmap_sram, &l.filter_sram, &l.ofmap_sram, &l.ifmap_dram, &l.filter_dram, &l.ofmap_dram}) {
            detail.push_back(cycle(a->start_cycle));
            detail.push_back(cycle(a->stop_cycle));
            detail.push_back(std::to_string(a->count));
        }
        r.detailed_access += row(id, detail);
    }
    return r;
}

}  // namespace fastsim::report
