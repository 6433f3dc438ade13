// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <iterator>
#include <limits>

#include "common/checked.h"
#include "common/counter_fields.h"

namespace fastsim::memory {

/// Size of a BFP tensor in the FAST layout (docs/node.md, "Memories"): per group, e exponent
/// bits in the exponent bank and g * (m/2) chunks of 3 bits (2 magnitude bits + sign) in the
/// mantissa bank.
struct BfpBits {
    std::uint64_t exponent = 0;
    std::uint64_t mantissa = 0;
    [[nodiscard]] std::uint64_t total() const { return checked_add(exponent, mantissa, "bits of a BFP tensor"); }
    BfpBits& operator+=(const BfpBits& other) {
        checked_accumulate(exponent, other.exponent, "exponent bits");
        checked_accumulate(mantissa, other.mantissa, "mantissa bits");
        return *this;
    }
};

/// Bits a node moves through its SRAM banks and DRAM: counted per tile by the node model
/// (node::tile_work), summed per phase in node::PhaseCounters, charged per bit by energy.
struct Traffic {
    std::uint64_t sram_exponent_read_bits = 0;
    std::uint64_t sram_exponent_write_bits = 0;
    std::uint64_t sram_mantissa_read_bits = 0;
    std::uint64_t sram_mantissa_write_bits = 0;
    std::uint64_t dram_read_bits = 0;
    std::uint64_t dram_write_bits = 0;

    /// Bits read and written in both SRAM banks; SizeOverflow beyond 64 bits.
    [[nodiscard]] std::uint64_t sram_bits() const {
        constexpr const char* kWhat = "SRAM bits";
        return checked_add(checked_add(sram_exponent_read_bits, sram_exponent_write_bits, kWhat),
                           checked_add(sram_mantissa_read_bits, sram_mantissa_write_bits, kWhat), kWhat);
    }
    /// Bits read and written in DRAM; SizeOverflow beyond 64 bits.
    [[nodiscard]] std::uint64_t dram_bits() const { return checked_add(dram_read_bits, dram_write_bits, "DRAM bits"); }
};

/// Every counter of Traffic, in report order (common/counter_fields.h): the one list that
/// node::PhaseCounters walks.
inline constexpr CounterField<Traffic> kTrafficFields[] = {
    {&Traffic::sram_exponent_read_bits,
     {"sram_exponent_read_bits", "SRAM exponent read bits", CounterKind::action, CounterShow::detail}},
    {&Traffic::sram_exponent_write_bits,
     {"sram_exponent_write_bits", "SRAM exponent write bits", CounterKind::action, CounterShow::detail}},
    {&Traffic::sram_mantissa_read_bits,
     {"sram_mantissa_read_bits", "SRAM mantissa read bits", CounterKind::action, CounterShow::detail}},
    {&Traffic::sram_mantissa_write_bits,
     {"sram_mantissa_write_bits", "SRAM mantissa write bits", CounterKind::action, CounterShow::detail}},
    {&Traffic::dram_read_bits, {"dram_read_bits", "DRAM read bits", CounterKind::action, CounterShow::detail}},
    {&Traffic::dram_write_bits, {"dram_write_bits", "DRAM write bits", CounterKind::action, CounterShow::detail}},
};
static_assert(sizeof(Traffic) == std::size(kTrafficFields) * sizeof(std::uint64_t),
              "every Traffic member is in kTrafficFields");

/// Mantissa-bank bits of one group: g values of ceil(m/2) 3-bit chunks.
inline std::uint64_t chunk_bits_per_group(int group_size, int mantissa_bits) {
    return static_cast<std::uint64_t>(group_size) * static_cast<std::uint64_t>((mantissa_bits + 1) / 2) * 3;
}

/// Bits of `groups` BFP groups of g values with m-bit mantissas and e-bit exponents;
/// SizeOverflow if they do not fit 64 bits.
inline BfpBits bfp_bits(std::uint64_t groups, int group_size, int mantissa_bits, int exponent_bits) {
    return {checked_mul(groups, static_cast<std::uint64_t>(exponent_bits), "exponent bits"),
            checked_mul(groups, chunk_bits_per_group(group_size, mantissa_bits), "mantissa bits")};
}

/// bfp_bits() saturated at 2^64 - 1 instead of checked: for sizes only compared with a bank's
/// capacity, where "too large to count" means "does not fit".
inline BfpBits bfp_bits_saturated(std::uint64_t groups, int group_size, int mantissa_bits, int exponent_bits) {
    return {saturating_mul(groups, static_cast<std::uint64_t>(exponent_bits)),
            saturating_mul(groups, chunk_bits_per_group(group_size, mantissa_bits))};
}

/// Bits of an fp32 value: partial sums and weight gradients live in the mantissa (data) bank.
inline constexpr std::uint64_t kFp32Bits = 32;

/// One on-chip SRAM bank.
struct SramBankParams {
    std::uint64_t capacity_bits = 0;
    std::uint64_t bits_per_cycle = 0;       ///< read or write port width, per node cycle
    std::uint64_t read_latency_cycles = 0;  ///< node cycles from a read's issue to its first bits
};

/// The node's SRAM: shared exponents and mantissa chunks (and fp32 partial sums) in separate banks.
struct SramParams {
    SramBankParams exponent_bank{64ull * 1024 * 8, 256};
    SramBankParams mantissa_bank{1024ull * 1024 * 8, 4096};
};

/// Off-chip DRAM, seen from the node's DMA engine.
struct DramParams {
    std::uint64_t bandwidth_bits_per_s = 256'000'000'000ull * 8;  ///< 256 GB/s
    std::uint64_t latency_cycles = 100;                           ///< per transfer, node cycles
};

/// Node cycles of one DMA transfer of `bits` at `clock_hz`: latency + ceil(bits / bits per
/// cycle), computed in integers; 0 bits cost nothing. SizeOverflow beyond 64 bits.
inline std::uint64_t dram_transfer_cycles(const DramParams& dram, std::uint64_t clock_hz, std::uint64_t bits) {
    if (bits == 0) return 0;
    __extension__ using Wide = unsigned __int128;  // bits * clock_hz can exceed 64 bits
    const Wide numerator = static_cast<Wide>(bits) * clock_hz;
    const Wide streaming = (numerator + dram.bandwidth_bits_per_s - 1) / dram.bandwidth_bits_per_s;
    if (streaming > std::numeric_limits<std::uint64_t>::max()) throw SizeOverflow("DRAM transfer cycles");
    return checked_add(dram.latency_cycles, static_cast<std::uint64_t>(streaming), "DRAM transfer cycles");
}

/// Cycles a bank port needs to move `bits`: ceil(bits / bits_per_cycle).
inline std::uint64_t bank_cycles(const SramBankParams& bank, std::uint64_t bits) {
    return bits / bank.bits_per_cycle + (bits % bank.bits_per_cycle != 0 ? 1 : 0);
}

/// Cycles a bank's read port needs to return `bits` read as one pipelined stream: its access
/// latency, then ceil(bits / bits_per_cycle); 0 bits cost nothing. SizeOverflow beyond 64 bits.
inline std::uint64_t bank_read_cycles(const SramBankParams& bank, std::uint64_t bits) {
    if (bits == 0) return 0;
    return checked_add(bank.read_latency_cycles, bank_cycles(bank, bits), "SRAM read cycles");
}

}  // namespace fastsim::memory
