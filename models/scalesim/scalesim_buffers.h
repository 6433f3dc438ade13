// SPDX-License-Identifier: MIT
// SCALE-Sim v2's SRAM buffers, kept to what its reports depend on: the ofmap write buffer
// (scalesim/memory/write_buffer.py) and the ifmap/filter read buffers, in CALC mode
// (read_buffer_estimate_bw.py: ReadBuffer) and in USER mode (read_buffer.py:
// PrefetchReadBuffer). Internal to simulate_layer.
#pragma once

#include <cstdint>
#include <deque>
#include <vector>

#include "scalesim/scalesim.h"

namespace fastsim::scalesim {

/// The ofmap write buffer: half of it fills while the other half drains to DRAM at
/// `drain_words_per_cycle` lines; a write that finds no free space waits for the drain (a stall).
class WriteBuffer {
public:
    WriteBuffer(std::int64_t size_words, std::int64_t drain_words_per_cycle);

    /// Writes `words` words issued in `cycle`; returns the cycle the last of them is accepted
    /// (`cycle` plus the stall), as write_buffer.service_writes does for one demand line.
    std::int64_t write_line(std::int64_t cycle, std::int64_t words);
    /// Drains what is left, starting at `cycle` (write_buffer.empty_all_buffers).
    void drain_all(std::int64_t cycle);
    LayerReport::Access dram() const { return {m_first_drain_cycle, m_last_drain_cycle, m_dram_words}; }

private:
    void close_line();
    void store(std::int64_t words);  ///< `words` more words in the open line (closing full ones)
    std::int64_t drain(std::int64_t start_cycle);

    std::int64_t m_size, m_drain_size, m_active_size, m_line_words;
    std::int64_t m_free;
    std::deque<std::int64_t> m_line_fill;  ///< words in each closed line not yet drained
    std::int64_t m_open_fill = 0;          ///< words in the line being filled
    std::int64_t m_drain_end_cycle = 0;
    std::int64_t m_dram_words = 0;
    bool m_drained = false;
    std::int64_t m_first_drain_cycle = 0, m_last_drain_cycle = 0;
};

/// An ifmap or filter read buffer in CALC mode: it never stalls; a word not among those
/// fetched since the last half-buffer boundary is a DRAM read. Addresses are word indices
/// in [0, address_count); the layer reads `distinct_words` of them. When half the buffer holds
/// them all, no boundary is ever reached: each is read from DRAM once, and the buffer need not
/// see the addresses (replays() is false, read() takes any value).
class ReadBuffer {
public:
    ReadBuffer(std::int64_t size_words, std::int64_t address_count, std::int64_t distinct_words);
    bool replays() const { return m_replay; }

    /// The start of a demand line issued in `cycle`.
    void begin_line(std::int64_t cycle) { m_cycle = cycle; }
    void read(std::int64_t address) {
        if (!m_seen_request) {
            m_seen_request = true;
            m_first_request_cycle = m_cycle;
        }
        if (m_replay && !fetched(address)) {
            m_fetched[static_cast<std::size_t>(address) >> 6] |= std::uint64_t{1} << (address & 63);
            if (m_list_fetched) m_fetched_since_boundary.push_back(address);
            if (++m_misses_since_boundary == m_half_words) boundary();
        }
    }
    /// read() of each address in [first, last), with the buffer's state kept in registers.
    /// Written out again rather than calling read(): through members the loop was 20% slower
    /// (AlexNet conv2 os, 27.5 against 22.9 ms in-process), so keep the two in step.
    void read_all(const std::int32_t* first, const std::int32_t* last);
    /// Issues the last prefetch (read_buffer_estimate_bw.complete_all_prefetches).
    void finish();
    LayerReport::Access dram() const { return {m_dram_start, m_dram_stop, m_dram_words}; }

private:
    /// The active half's sets are full: they are prefetched and the fetched words forgotten.
    void boundary();
    /// A prefetch of `words` words over [m_prefetch_start, m_prefetch_end] at the rate it needs.
    void prefetch(std::int64_t words);

    static constexpr std::int64_t kSetsPerHalf = 50;           ///< 100 sets, half of them active
    static constexpr std::int64_t kDefaultWordsPerCycle = 10;  ///< single_layer_sim.py, CALC mode
    static constexpr std::int64_t kReadLatencyCycles = 1;      ///< read_port.py
    std::int64_t m_words_per_set, m_half_words, m_distinct_words;
    bool m_replay;
    bool fetched(std::int64_t address) const {
        return (m_fetched[static_cast<std::size_t>(address) >> 6] >> (address & 63)) & 1u;
    }

    /// One bit per address: fetched since the last half-buffer boundary (a bit set is small
    /// enough to stay in cache, which a per-address chunk number is not). At a boundary the
    /// set is cleared whole, or, when it has more words than a half buffer holds, through the
    /// list of the addresses fetched since the last one.
    std::vector<std::uint64_t> m_fetched;
    bool m_list_fetched;
    std::vector<std::int64_t> m_fetched_since_boundary;
    std::int64_t m_misses_since_boundary = 0;
    std::int64_t m_cycle = 0, m_first_request_cycle = 0;
    bool m_seen_request = false, m_first_prefetch_done = false;
    std::int64_t m_prefetch_start = -2, m_prefetch_end = -1;
    std::int64_t m_dram_words = 0, m_dram_start = 0, m_dram_stop = 0;
    bool m_dram_started = false;
};

/// An ifmap or filter read buffer in USER mode (scalesim/memory/read_buffer.py, active
/// fraction 0.5). The operand's prefetch order, its valid addresses in the order SCALE-Sim
/// fetches them, is cut into lines of ceil(size / 100) addresses; the buffer holds a window of
/// consecutive lines (circularly). A request outside the window moves it on by the prefetch
/// half's lines, fetched at `bandwidth` words per cycle, and the demand line waits for them.
class PrefetchReadBuffer {
public:
    /// `prefetch_order`: the valid addresses, < address_count; `fetch_slots`: the prefetch
    /// matrix's size with its -1 entries, which sets how many words the first fill requests.
    PrefetchReadBuffer(std::int64_t size_words, std::int64_t bandwidth, const std::vector<std::int32_t>& prefetch_order,
                       std::int64_t fetch_slots, std::int64_t address_count);

    /// The demand line issued in `cycle` (every line, requests or not: the first fills the buffer).
    void begin_line(std::int64_t cycle);
    void read(std::int64_t address) {
        while (!held(address)) prefetch_next(address);
    }
    /// The cycle the line's requests are served in: a cycle after its issue, plus any wait.
    std::int64_t end_line() const { return m_cycle + m_offset; }
    LayerReport::Access dram() const { return {m_first_cycle, m_last_cycle, m_dram_words}; }

private:
    bool held(std::int64_t address) const;
    void prefetch_next(std::int64_t address);

    std::int64_t m_bandwidth, m_active_words, m_prefetch_words, m_fetch_slots;
    std::int64_t m_lines, m_active_lines, m_prefetch_lines;
    /// Per address, the lines holding it: m_line_of[m_line_start[a]] ... m_line_of[m_line_start[a + 1] - 1].
    std::vector<std::uint32_t> m_line_start;  // at most 2^28 valid addresses (prefetch_order's cap)
    std::vector<std::int32_t> m_line_of;
    std::int64_t m_window_start = 0, m_window_end = 0;  ///< the active lines [start, end), circularly
    bool m_started = false;
    std::int64_t m_cycle = 0, m_offset = 1;
    std::int64_t m_first_cycle = 0, m_last_cycle = 0, m_dram_words = 0;
};

}  // namespace fastsim::scalesim
