// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <iterator>
#include <string_view>
#include <vector>

#include "common/counter_fields.h"
#include "converter/converter_model.h"
#include "fmac/timing.h"
#include "memory/memory.h"
#include "vector/vector_model.h"

namespace fastsim::node {

/// Action counts and time of one or more phases on one node; energy is derived from these
/// in the report step. cycles = array + load_wait + converter_wait + sram_stall + drain + vector
/// (kCycleParts).
///
/// A counter is declared once: as a member here or of the struct holding it, with its row in
/// that struct's field list (name, title, kind, where it shows; common/counter_fields.h). The
/// arithmetic and the reports walk the lists (counter_values), so beyond that only the code
/// that counts it names it.
struct PhaseCounters {
    std::uint64_t macs = 0;  ///< useful multiply-accumulates
    std::uint64_t tiles = 0;
    std::uint64_t cycles = 0;                 ///< first load issued to last write-back done
    std::uint64_t array_cycles = 0;           ///< array busy (weight loads + streaming)
    std::uint64_t load_wait_cycles = 0;       ///< array (or vector unit) idle, waiting for a DMA load
    std::uint64_t converter_wait_cycles = 0;  ///< idle for a load the converter held up (add_load_wait)
    std::uint64_t sram_stall_cycles = 0;      ///< array held by an SRAM port slower than it
    std::uint64_t drain_cycles = 0;           ///< after the last tile: conversion and write-back
    std::uint64_t vector_cycles = 0;          ///< vector unit busy (a vector-unit layer's phase)
    fmac::ArrayCounters array;                ///< weight loads, folds, group products, PE passes
    converter::ConversionCost conversion;     ///< converter busy cycles and actions
    memory::Traffic traffic;                  ///< SRAM and DRAM bits
    vector::VectorUnitCounts vector;          ///< vector-unit operations

    /// Every count adds; SizeOverflow if one leaves 64 bits.
    PhaseCounters& operator+=(const PhaseCounters& other);
    /// The counters of `times` identical phases run back to back.
    [[nodiscard]] PhaseCounters repeated(std::uint64_t times) const;
    friend bool operator==(const PhaseCounters& a, const PhaseCounters& b);
};

/// PhaseCounters' own counters, in report order; the structs it holds have their lists beside them.
inline constexpr CounterField<PhaseCounters> kPhaseCounterFields[] = {
    {&PhaseCounters::macs, {"macs", "MACs", CounterKind::work, CounterShow::headline}},
    {&PhaseCounters::tiles, {"tiles", "tiles", CounterKind::work, CounterShow::detail}},
    {&PhaseCounters::cycles, {"cycles", "cycles", CounterKind::work, CounterShow::headline}},
    {&PhaseCounters::array_cycles, {"array_cycles", "array cycles", CounterKind::work, CounterShow::headline}},
    {&PhaseCounters::load_wait_cycles,
     {"load_wait_cycles", "DRAM-load wait cycles", CounterKind::work, CounterShow::headline}},
    {&PhaseCounters::converter_wait_cycles,
     {"converter_wait_cycles", "converter wait cycles", CounterKind::work, CounterShow::headline}},
    {&PhaseCounters::sram_stall_cycles,
     {"sram_stall_cycles", "SRAM stall cycles", CounterKind::work, CounterShow::headline}},
    {&PhaseCounters::drain_cycles, {"drain_cycles", "drain cycles", CounterKind::work, CounterShow::headline}},
    {&PhaseCounters::vector_cycles, {"vector_cycles", "vector-unit cycles", CounterKind::work, CounterShow::headline}},
};
static_assert(sizeof(PhaseCounters) == std::size(kPhaseCounterFields) * sizeof(std::uint64_t) +
                                           sizeof(fmac::ArrayCounters) + sizeof(converter::ConversionCost) +
                                           sizeof(memory::Traffic) + sizeof(vector::VectorUnitCounts),
              "every PhaseCounters member is in kPhaseCounterFields or one of the structs counter_values walks");

/// The parts `cycles` splits into (cycles = their sum; docs/node.md, "Double buffering"), in
/// report order: the cycle breakdown of summary.json, report.json and the terminal report.
struct CyclePart {
    std::uint64_t PhaseCounters::*member;
    std::string_view key;         ///< in report.json's "cycles" object
    std::string_view phrase;      ///< in the terminal report's "cycles:" line
    std::string_view bottleneck;  ///< what a phase whose largest part this is is bound by
};
inline constexpr CyclePart kCycleParts[] = {
    {&PhaseCounters::array_cycles, "array", "array", "array"},
    {&PhaseCounters::load_wait_cycles, "load_wait", "waiting for DRAM loads", "DRAM"},
    {&PhaseCounters::converter_wait_cycles, "converter_wait", "waiting for the converter", "converter"},
    {&PhaseCounters::sram_stall_cycles, "sram_stall", "SRAM stalls", "SRAM"},
    {&PhaseCounters::drain_cycles, "drain", "drain", "drain"},
    {&PhaseCounters::vector_cycles, "vector", "vector unit", "vector"},
};

/// The part of `c`'s cycles that is largest (the first of equals), naming the phase's bottleneck.
const CyclePart& bottleneck(const PhaseCounters& c);

/// Cycles by which a DMA load started late because the write-back before it waited for the
/// converter: the load starts at max(`dma_free`, `buffer_free`) (cycles from the phase start),
/// `dma_free` being where that write-back left the DMA after waiting `write_back_wait` cycles
/// for its tile's conversion; without that wait it would have started at
/// max(dma_free - write_back_wait, buffer_free). Requires write_back_wait <= dma_free.
[[nodiscard]] constexpr std::uint64_t converter_delay(std::uint64_t dma_free, std::uint64_t buffer_free,
                                                      std::uint64_t write_back_wait) {
    const std::uint64_t late = dma_free > buffer_free ? dma_free : buffer_free;
    const std::uint64_t unheld = dma_free - write_back_wait > buffer_free ? dma_free - write_back_wait : buffer_free;
    return late - unheld;
}

/// Adds an engine's `wait` cycles for its load (docs/node.md, "Cycle split"): the part the
/// converter caused (at most `converter_delay` of that load) to converter_wait_cycles, the rest
/// to load_wait_cycles.
void add_load_wait(PhaseCounters& c, std::uint64_t wait, std::uint64_t converter_delay);

/// How the reports name and show `member`: its row of kPhaseCounterFields.
const CounterInfo& counter_info(std::uint64_t PhaseCounters::*member);

/// One counter of a PhaseCounters (its own or one of a struct it holds) and its value.
struct CounterValue {
    CounterInfo info;
    std::uint64_t value = 0;
};

/// Every counter of `c` in report order: PhaseCounters' own, then the converter's, the array's,
/// the memory traffic's and the vector unit's, each in its field list's order.
std::vector<CounterValue> counter_values(const PhaseCounters& c);

/// The CounterInfo of every counter, in the order of counter_values().
const std::vector<CounterInfo>& counter_infos();

}  // namespace fastsim::node
