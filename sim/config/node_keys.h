// SPDX-License-Identifier: MIT
#pragma once

#include "config/keys.h"
#include "config/params.h"

namespace fastsim::config {

/// The key list of a node: the `node:` section, and every entry of `node_types:`
/// (docs/config.md#node).
template <typename Visit, typename N>
void node_keys(Visit& visit, N& n) {
    visit(n.clock_mhz, {"clock_mhz", "node clock; turns cycles into seconds and DRAM figures into cycles", &kClockMhz});
    visit(n.rows, {"array.rows", "R, fMAC rows of the array; g is `bfp.group_size`", &kArrayDim});
    visit(n.cols, {"array.cols", "C, fMAC columns of the array", &kArrayDim});
    visit(n.dataflow, {"array.dataflow",
                       "what each PE holds while the other operands stream: `ws` a weight (Y) group, `os` an output, "
                       "`is` an input (X) group ([array.md](array.md#dataflows))"});
    visit(n.dataflow_per_phase[0],
          {"array.dataflow_per_phase.forward", "the forward GEMMs' dataflow", nullptr, "`array.dataflow`"});
    visit(n.dataflow_per_phase[1],
          {"array.dataflow_per_phase.backward_data", "the backward-data GEMMs' dataflow", nullptr, "`array.dataflow`"});
    visit(n.dataflow_per_phase[2], {"array.dataflow_per_phase.weight_gradient",
                                    "the weight-gradient GEMMs' dataflow; `os` streams both A and ∇O, as the FAST "
                                    "paper describes",
                                    nullptr, "`array.dataflow`"});
    visit(n.converter_lanes, {"converter.lanes", "values the converter takes per cycle", &kConverterLanes,
                              "2 × node.array.cols, rounded up to whole groups"});
    visit(n.converter_latency_cycles,
          {"converter.pipeline_latency_cycles", "converter fill latency ([converter.md](converter.md))",
           &kConverterLatency, "⌈log2 g⌉ + 3"});
    visit(n.vector_lanes, {"vector.lanes",
                           "lanes of the vector unit, which runs pool, batchnorm, relu, gelu, add, "
                           "softmax, layernorm and concat layers ([vector_unit.md](vector_unit.md))",
                           &kVectorLanes, "array.cols"});
    visit(n.vector_ops_per_lane_per_cycle,
          {"vector.ops_per_lane_per_cycle", "operations each lane issues per cycle", &kVectorOpsPerLane});
    visit(n.vector_latency_cycles,
          {"vector.pipeline_latency_cycles", "vector unit fill latency, per chunk", &kConverterLatency});
    visit(n.sram_exponent_kib, {"sram.exponent_bank.capacity_kib", "shared exponents", &kSramCapacityKib});
    visit(n.sram_exponent_bits_per_cycle,
          {"sram.exponent_bank.bits_per_cycle", "width of each of its read and write ports", &kSramBitsPerCycle});
    visit(n.sram_mantissa_kib,
          {"sram.mantissa_bank.capacity_kib", "mantissa chunks and fp32 partial sums", &kSramCapacityKib});
    visit(n.sram_mantissa_bits_per_cycle,
          {"sram.mantissa_bank.bits_per_cycle", "width of each of its read and write ports", &kSramBitsPerCycle});
    visit(n.dram_type, {"dram.type",
                        "picks the DRAM energy per bit",
                        nullptr,
                        {},
                        "an entry of the energy table's `dram_pj_per_bit`"});
    visit(n.dram_bandwidth_gb_per_s, {"dram.bandwidth_gb_per_s", "DMA bandwidth (GB = 10^9 bytes)", &kBandwidthGbPerS});
    visit(n.dram_latency_ns, {"dram.latency_ns", "per transfer; rounded up to whole cycles", &kLatencyNs});
    visit(n.fusion, {"fusion",
                     "`on`: a relu, gelu or add runs in the output pass of the layer before it, so the tensor between "
                     "them stays on chip (`dram_saved_bits` per layer; [vector_unit.md](vector_unit.md#fusion)); "
                     "run.mode training_step only"});
    visit(n.lowering.depthwise,
          {"lowering.depthwise",
           "how a grouped or depthwise convolution's per-group GEMMs meet the array: `array_packed` packs as many "
           "groups block-diagonally as fill a fold, `vector` runs the layer on the vector unit, `per_channel` one "
           "GEMM per group ([array.md](array.md#grouped-and-depthwise-convolutions))"});
    visit(n.lowering.backward_data,
          {"lowering.backward_data",
           "how a convolution's backward-data GEMM meets the array: `transposed` convolves ∇O with the flipped, "
           "channel-swapped weights (reduction over kernel taps × filters, the forward's shape; a strided conv as "
           "one GEMM per class of input positions), `col2im` multiplies by the forward's weights transposed "
           "(reduction over filters only) and leaves ∇A in im2col form "
           "([array.md](array.md#backward-data-lowering))"});
    visit(n.max_tile_rows,
          {"tiling.max_tile_rows", "cap on the rows of X per tile ([node.md](node.md#tiling))", &kMaxTileRows});
}

}  // namespace fastsim::config
