// SPDX-License-Identifier: MIT
#include "config/ranges.h"

#include <cstdio>
#include <cstdlib>

namespace fastsim::config {

// Bounds are set so that every unit conversion and product the models make of a key stays
// exact or is checked (docs/config.md#ranges): clocks of 1 MHz … 100 GHz, bandwidths of
// 1 Mbit/s … 100 Tbit/s and latencies of 0 or 1 ps … 1 s are the binding ones; the others
// follow the same reasoning.
const KeyRange kWorkloadBatch{"workload.batch", "",    1,
                              1 << 20,          false, "batch × per-sample GEMM rows stays a checked 64-bit product"};
const KeyRange kWorkloadSteps{"workload.steps", "",    1,
                              0x1p40,           false, "a run's cycles (steps × a step's) are checked 64-bit products"};
const KeyRange kClockMhz{"node.clock_mhz, node_types[].clock_mhz",
                         "MHz",
                         1,
                         1e5,
                         false,
                         "1 MHz … 100 GHz: cycles ↔ picoseconds stay exact 64-bit integers"};
const KeyRange kArrayDim{
    "node.array.rows, node.array.cols (and node_types[])", "", 1, 4096, false, "PEs per array ≤ 2^24"};
const KeyRange kConverterLanes{"node.converter.lanes (and node_types[])", "values/cycle", 1, 1 << 16, false,
                               "converter cycles per group ≥ 1/65536"};
const KeyRange kVectorLanes{"node.vector.lanes (and node_types[])", "lanes", 1, 1 << 16, false,
                            "a wide SIMD unit, not a workload"};
const KeyRange kVectorOpsPerLane{"node.vector.ops_per_lane_per_cycle (and node_types[])", "ops/cycle", 1, 64, false,
                                 "lanes x ops per lane stays below 2^22 per cycle"};
const KeyRange kConverterLatency{
    "node.converter.pipeline_latency_cycles, node.vector.pipeline_latency_cycles (and node_types[])",
    "cycles",
    0,
    1 << 16,
    false,
    "a fill latency, not a workload"};
const KeyRange kSramCapacityKib{"node.sram.*_bank.capacity_kib (and node_types[])", "KiB", 1.0 / 8192, 0x1p30, false,
                                "1 bit … 1 TiB: capacities in bits stay below 2^43"};
const KeyRange kSramBitsPerCycle{
    "node.sram.*_bank.bits_per_cycle (and node_types[])", "bits/cycle", 1, 1 << 24, false, "port width ≤ 2^24 bits"};
const KeyRange kBandwidthGbPerS{
    "node.dram.bandwidth_gb_per_s, node_types[].dram.bandwidth_gb_per_s, "
    "cluster.groups[].link.bandwidth_gb_per_s, cluster.upper.link.bandwidth_gb_per_s",
    "GB/s",
    1.25e-4,
    12500,
    false,
    "1 Mbit/s … 100 Tbit/s: bits per second are exact integers, transfer times finite"};
const KeyRange kLatencyNs{
    "node.dram.latency_ns, node_types[].dram.latency_ns, cluster.groups[].link.latency_ns, "
    "cluster.upper.link.latency_ns",
    "ns",
    1e-3,
    1e9,
    true,
    "0, or 1 ps … 1 s: whole picoseconds and cycles in 64 bits"};
const KeyRange kDramCapacityGib{"node_types[].dram.capacity_gib",
                                "GiB",
                                0x1p-20,
                                0x1p20,
                                true,
                                "0 (not checked), or 1 KiB … 1 PiB: bytes stay below 2^50"};
const KeyRange kMaxTileRows{"node.tiling.max_tile_rows (and node_types[])", "", 1, 0x1p30, false,
                            "tile rows × columns stay far below 2^64"};
const KeyRange kNodeArrays{"node_types[].arrays", "", 1, 64, false, "PEs per node ≤ 2^30"};
const KeyRange kGroupCount{
    "cluster.groups[].count, cluster.groups[].torus.rows, cluster.groups[].torus.cols", "", 1, 1 << 14, false,
    "16384 nodes in all groups together: planning and simulating them takes about 2 GB"};
const KeyRange kPipelineStages{"planner.pipeline.stages (a count)",          "", 1, 1 << 14, true,
                               "0 = the default; at most one stage per node"};
const KeyRange kPipelineMicrobatches{"planner.pipeline.microbatches",
                                     "",
                                     1,
                                     1 << 20,
                                     true,
                                     "0 = the default; at most one sample each (workload.batch ≤ 2^20)"};
const KeyRange kTargetAccuracy{"train.target_accuracy", "", 0, 1, false, "a fraction of the test set"};
const KeyRange kTrainWorkers{"train.workers", "", 1, 4096, false, "one process simulates them all"};
const KeyRange kSyncServers{
    "cluster.gradient_sync.servers, train.gradient_sync.servers", "", 1, 1 << 14, false, "at most one per node"};
const KeyRange kSyncServerNodes{"cluster.gradient_sync.server_nodes, train.gradient_sync.server_nodes",
                                "",
                                0,
                                (1 << 14) - 1,
                                false,
                                "node ids (checked against the cluster)"};
const KeyRange kSyncDensity{"cluster.gradient_sync.compression.density (and train.)", "", 1e-9, 1, false,
                            "a fraction of the values; 1e-9 keeps one of a billion"};
const KeyRange kPowerSgdRank{
    "cluster.gradient_sync.compression.rank (and train.)", "", 1, 1 << 16, false, "factors no wider than a layer"};
const KeyRange kSyncThreshold{
    "cluster.gradient_sync.compression.threshold (and train.)", "", 0, 1e30, false, "a gradient magnitude"};
const KeyRange kSyncStaleness{"cluster.gradient_sync.staleness (and train.)",
                              "iterations",
                              0,
                              1 << 10,
                              false,
                              "a delay of up to 1024 iterations"};
const KeyRange kSyncBucketMib{"cluster.gradient_sync.bucket_mib (and train.)",    "MiB", 0, 1 << 20, false,
                              "up to 1 TiB; 0 synchronises each layer on its own"};
const KeyRange kSyncMessageLevelMaxRanks{
    "cluster.gradient_sync.message_level_max_ranks (and train.)", "ranks", 2, 1 << 24, false, "a rank count"};
const KeyRange kTreeFanout{"cluster.groups[].tree_fanout", "", 2, 1024, false, "a switch's ports"};
const KeyRange kLinkEnergyPjPerBit{"cluster.groups[].link.energy_pj_per_bit, cluster.upper.link.energy_pj_per_bit",
                                   "pJ/bit",
                                   0,
                                   1e6,
                                   false,
                                   "energies stay finite in double precision"};
const KeyRange kGroupSize{"bfp.group_size", "", 1, 1 << 16, false, "the BFP library's largest group"};
const KeyRange kExponentBits{"bfp.exponent_bits", "bits", 2, 8, false, "shared exponents fit float32's range"};
const KeyRange kExponentBias{
    "bfp.exponent_bias", "", -200, 200, false, "then also the float32 rules of bfp.md (checked separately)"};
const KeyRange kLfsrBits{"bfp.lfsr_bits", "bits", 2, 32, false, "maximal-length LFSR taps are tabulated for 2 … 32"};
const KeyRange kNoiseBits{"bfp.noise_bits",
                          "bits",
                          1,
                          32,
                          false,
                          "then at most bfp.lfsr_bits and coprime with the LFSR's period (checked separately)"};
const KeyRange kReportMantissaBits{"bfp_report.mantissa_bits[]", "bits", 2, 16, false, "the BFP library's widths"};
const KeyRange kTensorScale{
    "bfp_report.tensors[].scale", "", 1e-30, 1e30, false, "synthetic values stay finite, normal float32 numbers"};
const KeyRange kTensorDof{"bfp_report.tensors[].dof", "", 2.000001, 1e6, false, "dof > 2: a finite variance"};
const KeyRange kTensorCount{"bfp_report.tensors[].count", "", 1, 1 << 28, false, "1 GiB of floats at most"};
const KeyRange kMantissaWidth{
    "precision.weights, precision.activations, precision.gradients (and layers[], "
    "node_types[].precision)",
    "bits",
    2,
    8,
    false,
    "the fMAC multiplies whole 2-bit chunks",
    2};
const KeyRange kEnergyPj{"energy table: every fmac, converter, sram and dram_pj_per_bit value", "pJ", 0, 1e6, false,
                         "energy = counts (< 2^64) × pJ stays finite in double precision"};
const KeyRange kLeakageMw{"energy table: leakage.mw_per_pe, leakage.mw_per_sram_kib", "mW", 0, 1e6, false,
                          "leakage energy stays finite in double precision"};
const KeyRange kAreaUm2{
    "energy table: every area value but process_nm and sram_exponent", "µm² (KiB for sram_*_kib)", 0, 1e9, false,
    "a part's area up to 1000 mm²; area = counts × µm² stays finite"};
const KeyRange kSramAreaExponent{"energy table: area.sram_exponent, sram.capacity_exponent, sram.access_ns_exponent",
                                 "",
                                 0,
                                 3,
                                 false,
                                 "SRAM area, energy and access time grow with capacity, at most cubically"};
const KeyRange kSramAccessNs{"energy table: sram.access_ns_at_1kib",
                             "ns",
                             0,
                             1e6,
                             false,
                             "an access time up to a millisecond: cycles = ns × clock stay finite"};
const KeyRange kSubbankKib{"energy table: sram.exponent_subbank_kib, sram.mantissa_subbank_kib",
                           "KiB",
                           0,
                           1e9,
                           false,
                           "0 (no sub-bank) or a bank size"};
const KeyRange kMaxWorkSeconds{"run.max_work_s", "s", 0.001, 1e9, false, "estimated seconds of work, as --max-work"};
const KeyRange kProcessNm{
    "energy table: area.process_nm; energy.process_nm", "nm", 1, 1000, false, "process nodes from 1 to 1000 nm"};
const KeyRange kLayerSize{
    "trace layer sizes (input, kernel, filters, stride, in/out_features, tokens, m, k, n, "
    "repeat; SCALE-Sim CSV columns)",
    "",
    1,
    1 << 24,
    false,
    "GEMM dimensions are checked 64-bit products of them"};
const KeyRange kLayerPadding{"trace conv and pool padding", "", 0, 1 << 24, false, "padded sizes stay below 2^26"};
const KeyRange kTrainEpochs{"train.epochs", "", 1, 1000, false, "an experiment, not a hang"};
const KeyRange kTrainBatch{"train.batch", "", 1, 60000, false, "at most the training split"};
const KeyRange kLearningRate{"train.learning_rate", "", 1e-12, 100, false, "finite weights"};
const KeyRange kMomentum{"train.momentum", "", 0, 0.999999, false, "[0, 1): the velocity stays bounded"};
const KeyRange kWeightDecay{"train.weight_decay", "", 0, 1, false, "a fraction of the weight per step"};
const KeyRange kBlasThreads{"train.blas_threads",
                            "",
                            1,
                            1024,
                            false,
                            "OpenBLAS's limit; lowered to the cores this process may use, with a warning"};
const KeyRange kMaxIterations{"train.max_iterations", "", 0, 0x1p40, false, "0 = every epoch"};
const KeyRange kSampleLimit{"data.train_limit, data.test_limit", "", 0, 0x1p32, false, "0 = the whole split"};
const KeyRange kScheduleThreshold{"schedule.alpha, schedule.beta", "", -1e9, 1e9, false, "finite thresholds"};
const KeyRange kScheduleStartBits{"schedule.start_bits", "bits", 2, 16, false, "the BFP library's widths"};
const KeyRange kScheduleStepBits{"schedule.step_bits", "bits", 1, 14, false, "the BFP library's widths"};
const KeyRange kScheduleMaxBits{"schedule.max_bits", "bits", 2, 16, false, "then at least schedule.start_bits"};
const KeyRange kCheckEvery{"schedule.check_every_iterations", "", 1, 0x1p30, false, "a period"};

const std::vector<const KeyRange*>& all_key_ranges() {
    static const std::vector<const KeyRange*> all{&kWorkloadBatch,
                                                  &kWorkloadSteps,
                                                  &kClockMhz,
                                                  &kArrayDim,
                                                  &kConverterLanes,
                                                  &kVectorLanes,
                                                  &kVectorOpsPerLane,
                                                  &kConverterLatency,
                                                  &kSramCapacityKib,
                                                  &kSramBitsPerCycle,
                                                  &kBandwidthGbPerS,
                                                  &kLatencyNs,
                                                  &kDramCapacityGib,
                                                  &kMaxTileRows,
                                                  &kNodeArrays,
                                                  &kGroupCount,
                                                  &kPipelineStages,
                                                  &kPipelineMicrobatches,
                                                  &kTreeFanout,
                                                  &kTrainWorkers,
                                                  &kTargetAccuracy,
                                                  &kSyncServers,
                                                  &kSyncServerNodes,
                                                  &kSyncDensity,
                                                  &kPowerSgdRank,
                                                  &kSyncThreshold,
                                                  &kSyncStaleness,
                                                  &kSyncBucketMib,
                                                  &kSyncMessageLevelMaxRanks,
                                                  &kLinkEnergyPjPerBit,
                                                  &kGroupSize,
                                                  &kExponentBits,
                                                  &kExponentBias,
                                                  &kLfsrBits,
                                                  &kNoiseBits,
                                                  &kReportMantissaBits,
                                                  &kTensorScale,
                                                  &kTensorDof,
                                                  &kTensorCount,
                                                  &kMantissaWidth,
                                                  &kEnergyPj,
                                                  &kLeakageMw,
                                                  &kAreaUm2,
                                                  &kSramAreaExponent,
                                                  &kSramAccessNs,
                                                  &kSubbankKib,
                                                  &kProcessNm,
                                                  &kLayerSize,
                                                  &kLayerPadding,
                                                  &kTrainEpochs,
                                                  &kTrainBatch,
                                                  &kLearningRate,
                                                  &kMomentum,
                                                  &kWeightDecay,
                                                  &kBlasThreads,
                                                  &kMaxIterations,
                                                  &kSampleLimit,
                                                  &kScheduleThreshold,
                                                  &kScheduleStartBits,
                                                  &kScheduleStepBits,
                                                  &kScheduleMaxBits,
                                                  &kCheckEvery};
    return all;
}

std::string exact_number(double v) {
    if (v == std::floor(v) && std::fabs(v) < 0x1p53) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.0f", v);
        return buf;
    }
    char buf[40];
    for (int precision = 1; precision <= 17; ++precision) {
        std::snprintf(buf, sizeof buf, "%.*g", precision, v);
        if (std::strtod(buf, nullptr) == v) break;
    }
    return buf;
}

namespace {

/// The values of a stepped range, "2, 4, 6" and `last` "8".
std::string stepped_values(const KeyRange& r, std::string_view last_separator) {
    std::string out;
    for (double v = r.min; v <= r.max; v += r.step)
        out += (out.empty() ? "" : v + r.step > r.max ? std::string(last_separator) : ", ") + exact_number(v);
    return out;
}

}  // namespace

std::string KeyRange::table_text() const {
    if (step > 0) return stepped_values(*this, ", ");
    return (zero_allowed ? "0, or " : "") + exact_number(min) + " … " + exact_number(max);
}

std::string KeyRange::describe(std::string_view noun) const {
    const std::string u = unit.empty() ? "" : " " + std::string(unit);
    if (step > 0) return stepped_values(*this, " or ") + u + " (" + std::string(reason) + ")";
    return std::string(zero_allowed ? "0, or " : "") + std::string(noun) + " from " + exact_number(min) + " to " +
           exact_number(max) + u;
}

std::string key_range_table_markdown() {
    std::string out = "| keys | allowed | unit | why |\n|---|---|---|---|\n";
    for (const KeyRange* r : all_key_ranges())
        out += "| " + std::string(r->keys) + " | " + r->table_text() + " | " +
               std::string(r->unit.empty() ? "—" : r->unit) + " | " + std::string(r->reason) + " |\n";
    return out;
}

void check_range(double v, const std::string& text, const KeyRange& range, const Location& where) {
    if (!range.admits(v)) throw ConfigError(where, "expected " + range.describe() + ", got " + text);
}

}  // namespace fastsim::config
