// SPDX-License-Identifier: MIT
#include "node/vector_phase.h"

#include <algorithm>
#include <optional>
#include <string>

#include "common/checked.h"
#include "vector/vector_model.h"

namespace fastsim::node {
namespace {

using u64 = std::uint64_t;
__extension__ using Wide = unsigned __int128;

/// Chunk `i`'s share of `total`: total * end / values - total * start / values, so the shares
/// of all chunks add up to `total` exactly.
u64 share(u64 total, u64 values, u64 start, u64 end) {
    return static_cast<u64>(static_cast<Wide>(total) * end / values - static_cast<Wide>(total) * start / values);
}

/// The bits of a chunk's operands: its activation and gradient values, each tensor grouped by
/// g in BFP, and its fp32 values in the mantissa (data) bank.
memory::BfpBits operand_bits(const VectorJob& job, const NodeParams& node, u64 activations, u64 gradients, u64 fp32) {
    const u64 g = static_cast<u64>(node.array.group_size);
    memory::BfpBits bits =
        memory::bfp_bits(ceil_div(activations, g), node.array.group_size, job.activation_bits, node.exponent_bits);
    bits += memory::bfp_bits(ceil_div(gradients, g), node.array.group_size, job.gradient_bits, node.exponent_bits);
    bits += memory::BfpBits{0, checked_mul(fp32, memory::kFp32Bits, "fp32 bits of a chunk")};
    return bits;
}

}  // namespace

VectorPlan plan_vector_chunks(const VectorJob& job, const NodeParams& node) {
    const u64 values = job.work.writes;
    if (values == 0) return {};
    const u64 g = static_cast<u64>(node.array.group_size);
    // Two buffers of a chunk's operands in each bank; a share of q is at most ceil(q * chunk / values).
    // The bank too small for `chunk` result values, if any.
    const auto most = [&](u64 q, u64 chunk) {
        return static_cast<u64>((static_cast<Wide>(q) * chunk + values - 1) / values);
    };
    const auto too_small = [&](u64 chunk) -> std::optional<SramBank> {
        const u64 a = most(job.work.activation_reads, chunk), d = most(job.work.gradient_reads, chunk);
        const u64 f = most(job.work.fp32_reads, chunk);
        const Wide groups_a = ceil_div(a, g), groups_d = ceil_div(d, g);
        const Wide exponent = 2 * (groups_a + groups_d) * static_cast<u64>(node.exponent_bits);
        const Wide mantissa = 2 * (groups_a * memory::chunk_bits_per_group(node.array.group_size, job.activation_bits) +
                                   groups_d * memory::chunk_bits_per_group(node.array.group_size, job.gradient_bits) +
                                   static_cast<Wide>(f) * memory::kFp32Bits);
        if (exponent > node.sram.exponent_bank.capacity_bits) return SramBank::exponent;
        if (mantissa > node.sram.mantissa_bank.capacity_bits) return SramBank::mantissa;
        return std::nullopt;
    };
    if (const auto bank = too_small(g))
        throw TilingError(*bank, std::string("a vector-unit chunk of one group of operands does not fit the ") +
                                     (*bank == SramBank::exponent ? "exponent" : "mantissa") +
                                     " bank, double-buffered");
    // The most whole groups that fit, by bisection over [1, groups of the result].
    u64 low = 1, high = ceil_div(values, g);
    while (low < high) {
        const u64 mid = low + (high - low + 1) / 2;
        if (!too_small(mid * g))
            low = mid;
        else
            high = mid - 1;
    }
    VectorPlan plan;
    plan.chunk_values = std::min(values, low * g);
    plan.chunks = ceil_div(values, plan.chunk_values);
    return plan;
}

VectorChunkWork vector_chunk_work(const VectorJob& job, const NodeParams& node, const VectorPlan& plan, u64 chunk) {
    const u64 values = job.work.writes;
    const u64 start = chunk * plan.chunk_values, end = std::min(values, start + plan.chunk_values);
    VectorChunkWork w;
    w.ops = share(job.work.ops, values, start, end);
    const memory::BfpBits load = operand_bits(job, node, share(job.work.activation_reads, values, start, end),
                                              share(job.work.gradient_reads, values, start, end),
                                              share(job.work.fp32_reads, values, start, end));
    memory::Traffic& t = w.traffic;
    t.dram_read_bits = load.total();
    t.sram_exponent_write_bits = t.sram_exponent_read_bits = load.exponent;  // DMA in, vector unit out
    t.sram_mantissa_write_bits = t.sram_mantissa_read_bits = load.mantissa;
    w.load_cycles = memory::dram_transfer_cycles(node.dram, node.clock_hz, t.dram_read_bits);
    w.compute_cycles = vector::job_cycles(node.vector, w.ops);
    u64 bfp_write_bits = 0;
    if (!job.output_streamed) {
        const converter::ConversionCost once =
            converter::conversion_cost(node.converter, end - start, job.output_rounding, node.noise_bits);
        w.conversion += once;  // grouped along rows
        w.conversion += once;  // grouped along columns
        bfp_write_bits = checked_mul(
            2, memory::bfp_bits(once.groups, node.array.group_size, job.output_bits, node.exponent_bits).total(),
            "output bits of a chunk");
    }
    t.dram_write_bits = checked_add(
        bfp_write_bits,
        checked_mul(share(job.work.fp32_writes, values, start, end), memory::kFp32Bits, "output bits of a chunk"),
        "output bits of a chunk");
    w.write_cycles = memory::dram_transfer_cycles(node.dram, node.clock_hz, t.dram_write_bits);
    return w;
}

void add_chunk_counts(PhaseCounters& c, const VectorChunkWork& w) {
    constexpr const char* kWhat = "a counter of a phase";
    ++c.tiles;
    checked_accumulate(c.vector.ops, w.ops, kWhat);
    checked_accumulate(c.vector_cycles, w.compute_cycles, kWhat);
    c.conversion += w.conversion;
    add_counters(c.traffic, w.traffic, memory::kTrafficFields, kWhat);
}

PhaseCounters run_vector_memo(const VectorJob& job, const NodeParams& node) {
    PhaseCounters c;
    const VectorPlan plan = plan_vector_chunks(job, node);
    constexpr const char* kCycles = "cycles of a phase";
    u64 dma_free = 0, end_compute = 0, end_convert = 0;
    u64 end_compute_before[2] = {0, 0};  // compute ends of chunks i-2, i-1
    VectorChunkWork pending;             // chunk i-1, written after load i
    u64 pending_end_convert = 0;
    u64 write_back_wait = 0;  // cycles the DMA's last write-back waited for its conversion
    // `computed`: when the chunk's compute ended; the write-back's wait past it is the converter's.
    const auto write_back = [&](const VectorChunkWork& w, u64 ready, u64 computed) {
        write_back_wait = 0;
        if (w.write_cycles == 0) return;
        write_back_wait = std::max(dma_free, ready) - std::max(dma_free, computed);
        dma_free = checked_add(std::max(dma_free, ready), w.write_cycles, kCycles);
    };
    for (u64 i = 0; i < plan.chunks; ++i) {
        const VectorChunkWork w = vector_chunk_work(job, node, plan, i);
        const u64 buffer_free = i >= 2 ? end_compute_before[0] : 0;
        const u64 held = converter_delay(dma_free, buffer_free, write_back_wait);
        write_back_wait = 0;
        const u64 end_load = checked_add(std::max(dma_free, buffer_free), w.load_cycles, kCycles);
        dma_free = end_load;
        const u64 start = std::max(end_load, end_compute);
        add_load_wait(c, start - end_compute, held);
        end_compute = checked_add(start, w.compute_cycles, kCycles);
        end_compute_before[0] = end_compute_before[1];
        end_compute_before[1] = end_compute;
        end_convert = checked_add(std::max(end_compute, end_convert), w.conversion.cycles, kCycles);
        if (i > 0) write_back(pending, pending_end_convert, end_compute_before[0]);  // chunk i-1's compute end
        add_chunk_counts(c, w);
        pending = w;
        pending_end_convert = end_convert;
    }
    if (plan.chunks > 0) write_back(pending, pending_end_convert, end_compute);
    c.macs = job.macs;
    c.cycles = std::max({end_compute, end_convert, dma_free});
    c.drain_cycles = c.cycles - end_compute;
    return c;
}

}  // namespace fastsim::node
