// SPDX-License-Identifier: MIT
// SCALE-Sim v2 (commit 22f88b1) as a plain C++ model: the machine its scalesim/ package
// simulates, reproduced report for report (docs/scalesim.md). Nothing here is fastsim's FAST
// node: this is SCALE-Sim's own accounting, for studies that must match its numbers.
#pragma once

#include <cstdint>
#include <string>

namespace fastsim::scalesim {

enum class Dataflow { ws, os, is };

/// InterfaceBandwidth: CALC (the DRAM keeps up; its bandwidth is what the reports estimate) or
/// USER (every DRAM interface moves `Bandwidth` words per cycle, and the array waits for it).
enum class Interface { calc, user };

/// A SCALE-Sim .cfg, resolved (scalesim/scale_config.py). Sizes in SCALE-Sim's words (1 byte).
struct Architecture {
    std::string run_name;
    std::int64_t array_rows = 32;      ///< ArrayHeight
    std::int64_t array_cols = 32;      ///< ArrayWidth
    std::int64_t ifmap_sram_kb = 64;   ///< IfmapSramSzkB
    std::int64_t filter_sram_kb = 64;  ///< FilterSramSzkB
    std::int64_t ofmap_sram_kb = 64;   ///< OfmapSramSzkB
    Dataflow dataflow = Dataflow::os;
    Interface interface = Interface::calc;        ///< InterfaceBandwidth
    std::int64_t bandwidth_words_per_cycle = 10;  ///< Bandwidth's first value; USER mode only
};

/// One layer as SCALE-Sim runs it (a row of its topology after its own expansion: a GEMM row
/// M, N, K is ifmap M x K, filter 1 x K, 1 channel, N filters; a 'DP' row is one layer per channel).
struct Layer {
    std::string name;
    std::int64_t ifmap_height = 1, ifmap_width = 1;
    std::int64_t filter_height = 1, filter_width = 1;
    std::int64_t channels = 1, filters = 1;
    std::int64_t stride_height = 1, stride_width = 1;
};

/// Every number of SCALE-Sim's three reports for one layer (COMPUTE_REPORT.csv,
/// BANDWIDTH_REPORT.csv, DETAILED_ACCESS_REPORT.csv). Cycles are SCALE-Sim's; start and stop
/// cycles are timestamps of its traces (they may be negative: prefetches before cycle 0).
struct LayerReport {
    std::int64_t total_cycles = 0;
    std::int64_t stall_cycles = 0;
    double overall_util_percent = 0;
    double mapping_efficiency_percent = 0;
    double compute_util_percent = 0;

    struct Access {
        std::int64_t start_cycle = 0, stop_cycle = 0, count = 0;
    };
    Access ifmap_sram, filter_sram, ofmap_sram;  ///< reads, reads, writes
    Access ifmap_dram, filter_dram, ofmap_dram;  ///< reads, reads, writes

    /// Words per cycle as SCALE-Sim averages them.
    double sram_bandwidth(const Access& a) const { return double(a.count) / double(total_cycles); }
    static double dram_bandwidth(const Access& a) { return double(a.count) / double(a.stop_cycle - a.start_cycle + 1); }
};

/// The layer's output size under SCALE-Sim's rule, which counts a partial last window:
/// ceil((in - filter + stride) / stride) (scalesim/topology_utils.py, topo_calc_hyperparams).
std::int64_t ofmap_height(const Layer& l);
std::int64_t ofmap_width(const Layer& l);

/// Simulates `layer` as SCALE-Sim does: its demand matrices fold by fold (column folds outer),
/// the ofmap write buffer (whose drains are the only stalls in CALC mode) and the ifmap and
/// filter read buffers (whose misses are the DRAM reads in CALC mode; in USER mode they fetch
/// in the operands' prefetch order and stall the array too). Throws UserError where SCALE-Sim
/// itself fails (a division by zero) and for layers too large to hold.
LayerReport simulate_layer(const Architecture& arch, const Layer& layer);

/// What simulate_layer does for `layer`, counted without running it (for the work limit,
/// docs/performance.md, "Work estimates"): its folds x each fold's demand lines (the stream,
/// and at most 2 (rows + columns) of fill, drain and skew) x the requests a line holds at most
/// (a column of ifmap, a row of filters and one of ofmap), and the operand tables it builds (one
/// entry per output pixel and window element). A bound: lines of an edge fold hold fewer.
double simulated_requests(const Architecture& arch, const Layer& layer);

}  // namespace fastsim::scalesim
