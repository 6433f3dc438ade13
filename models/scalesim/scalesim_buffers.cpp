// SPDX-License-Identifier: MIT
#include "scalesim/scalesim_buffers.h"

#include <algorithm>

#include "common/errors.h"

namespace fastsim::scalesim {
namespace {

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

}  // namespace

// write_buffer.set_params: half the words fill (active) while the other half drains.
WriteBuffer::WriteBuffer(std::int64_t size_words, std::int64_t drain_words_per_cycle)
    : m_size(size_words),
      m_drain_size(size_words - ceil_div(size_words, 2)),
      m_active_size(ceil_div(size_words, 2)),
      m_line_words(drain_words_per_cycle),
      m_free(size_words) {}

void WriteBuffer::close_line() {
    m_line_fill.push_back(m_open_fill);
    m_open_fill = 0;
}

// write_buffer.service_writes for one line: each word is stored, then either waits for a drain
// in progress when the buffer is full, or starts a drain once the active half is full. Runs of
// words that do neither are stored at once.
std::int64_t WriteBuffer::write_line(std::int64_t cycle, std::int64_t words) {
    while (words > 0) {
        const bool draining = cycle < m_drain_end_cycle;
        // Words stored before the next one stalls (draining) or starts a drain.
        const std::int64_t quiet =
            std::clamp<std::int64_t>(draining ? m_free - 1 : m_free - m_active_size, 0, words - 1);
        store(quiet);
        words -= quiet;
        store(1);
        --words;
        if (cycle < m_drain_end_cycle) {
            if (m_free <= 0) cycle = m_drain_end_cycle;
        } else if (m_free < m_active_size) {
            if (m_open_fill != 0) close_line();
            m_drain_end_cycle = drain(cycle);
        }
    }
    return cycle;
}

void WriteBuffer::store(std::int64_t words) {
    m_free -= words;
    m_open_fill += words;
    for (; m_open_fill >= m_line_words; m_open_fill -= m_line_words) m_line_fill.push_back(m_line_words);
}

// write_buffer.empty_drain_buf: ceil(drain half / line width) lines, one per cycle. Only the
// last line's empty slots are discounted (a partial line before it counts as full, as in
// SCALE-Sim), and the space freed is what was counted.
std::int64_t WriteBuffer::drain(std::int64_t start_cycle) {
    const std::size_t count =
        std::min(static_cast<std::size_t>(ceil_div(m_drain_size, m_line_words)), m_line_fill.size());
    if (count == 0)
        throw UserError(
            "SCALE-Sim fails on this layer (an empty drain in write_buffer.py): choose a larger OfmapSramSzkB");
    const std::int64_t words =
        static_cast<std::int64_t>(count) * m_line_words - (m_line_words - m_line_fill[count - 1]);
    m_line_fill.erase(m_line_fill.begin(), m_line_fill.begin() + static_cast<std::ptrdiff_t>(count));
    m_dram_words += words;
    m_free += words;
    if (!m_drained) m_first_drain_cycle = start_cycle;
    m_drained = true;
    m_last_drain_cycle = start_cycle + static_cast<std::int64_t>(count) - 1;
    return m_last_drain_cycle;
}

void WriteBuffer::drain_all(std::int64_t cycle) {
    if (m_open_fill != 0) close_line();
    while (!m_line_fill.empty()) {
        m_drain_end_cycle = drain(cycle);
        cycle = m_drain_end_cycle + 1;
    }
}

// read_buffer_estimate_bw.set_params: 100 sets of floor(words / 100) words, half of them active.
ReadBuffer::ReadBuffer(std::int64_t size_words, std::int64_t address_count, std::int64_t distinct_words)
    : m_words_per_set(size_words / 100),
      m_half_words(kSetsPerHalf * m_words_per_set),
      m_distinct_words(distinct_words),
      m_replay(distinct_words >= m_half_words),
      m_fetched(m_replay ? static_cast<std::size_t>((address_count + 63) / 64) : 0, 0),
      m_list_fetched(static_cast<std::int64_t>(m_fetched.size()) > m_half_words) {
    // The .cfg reader asks for 1 kB at least; this guards direct use of the model.
    if (m_words_per_set < 1) throw UserError("SCALE-Sim fails with a read SRAM under 100 words: give at least 1 kB");
    if (m_list_fetched) m_fetched_since_boundary.reserve(static_cast<std::size_t>(m_half_words));
}

// read_buffer_estimate_bw.manage_prefetches: a miss joins the open set of m_words_per_set
// words; when the sets of the active half (m_half_words words) are full, they are prefetched
// over the cycles since the previous prefetch.
void ReadBuffer::boundary() {
    if (!m_first_prefetch_done) {
        // The active half arrives before the first request, at the default bandwidth, ending
        // one cycle (the read port's latency) earlier.
        m_prefetch_end = m_first_request_cycle - 1 - kReadLatencyCycles;
        m_prefetch_start = m_prefetch_end - ceil_div(m_half_words, kDefaultWordsPerCycle) + 1;
        m_first_prefetch_done = true;
    }
    prefetch(m_half_words);
    m_prefetch_start = m_prefetch_end + 1;
    m_prefetch_end = m_cycle;
    m_misses_since_boundary = 0;
    if (!m_list_fetched) {
        std::fill(m_fetched.begin(), m_fetched.end(), 0);
        return;
    }
    for (const std::int64_t a : m_fetched_since_boundary) m_fetched[static_cast<std::size_t>(a) >> 6] = 0;
    m_fetched_since_boundary.clear();
}

void ReadBuffer::read_all(const std::int32_t* first, const std::int32_t* last) {
    if (first == last) return;
    read(*first++);  // notes the first request
    if (!m_replay) return;
    std::uint64_t* bits = m_fetched.data();
    std::int64_t misses = m_misses_since_boundary;
    const bool list = m_list_fetched;
    for (; first != last; ++first) {
        const std::int32_t a = *first;
        const std::uint64_t bit = std::uint64_t{1} << (a & 63);
        std::uint64_t& word = bits[static_cast<std::size_t>(a) >> 6];
        if (word & bit) continue;
        word |= bit;
        if (list) m_fetched_since_boundary.push_back(a);
        if (++misses == m_half_words) {
            m_misses_since_boundary = misses;
            boundary();
            misses = 0;
        }
    }
    m_misses_since_boundary = misses;
}

void ReadBuffer::prefetch(std::int64_t words) {
    const std::int64_t cycles = m_prefetch_end - m_prefetch_start + 1;
    if (cycles <= 0)
        throw UserError(
            "SCALE-Sim fails on this layer (a division by zero in read_buffer_estimate_bw.py: two halves of a "
            "read SRAM filled in one cycle): choose larger SRAMs for this array");
    m_dram_words += words;
    if (!m_dram_started) m_dram_start = m_prefetch_start + kReadLatencyCycles;
    m_dram_started = true;
    m_dram_stop = m_prefetch_end + kReadLatencyCycles;
}

// read_buffer_estimate_bw.complete_all_prefetches: the sets not yet prefetched, the open one included.
void ReadBuffer::finish() {
    // Without a replay every word missed once and no boundary was reached.
    const std::int64_t words = m_replay ? m_misses_since_boundary : m_distinct_words;
    const std::int64_t sets = ceil_div(words, m_words_per_set);  // the open set included
    if (!m_first_prefetch_done) {
        m_prefetch_end = -1 - kReadLatencyCycles;
        m_prefetch_start = m_prefetch_end - ceil_div(sets * m_words_per_set, kDefaultWordsPerCycle) + 1;
        m_first_prefetch_done = true;
    }
    prefetch(words);
}

// read_buffer.set_fetch_matrix and prepare_hashed_buffer: line l holds valid addresses
// l * per_line ... (l + 1) * per_line - 1 of the prefetch order, and a last line, perhaps
// empty, the rest; then the active and prefetch halves in lines, as many as there are.
PrefetchReadBuffer::PrefetchReadBuffer(std::int64_t size_words, std::int64_t bandwidth,
                                       const std::vector<std::int32_t>& prefetch_order, std::int64_t fetch_slots,
                                       std::int64_t address_count)
    : m_bandwidth(bandwidth),
      m_active_words(ceil_div(size_words, 2)),
      m_prefetch_words(size_words - m_active_words),
      m_fetch_slots(fetch_slots) {
    const std::int64_t per_line = ceil_div(size_words, 100);
    const std::int64_t valid = static_cast<std::int64_t>(prefetch_order.size());
    m_lines = valid / per_line + 1;
    m_active_lines = std::min(m_lines, ceil_div(m_active_words, per_line));
    m_prefetch_lines = std::min(m_lines - m_active_lines, ceil_div(m_prefetch_words, per_line));
    // Counting sort by address: m_line_start[a] counts a's entries, then (summed) ends a's run;
    // the backward fill moves it down to the run's start, which ends a - 1's.
    m_line_start.assign(static_cast<std::size_t>(address_count + 1), 0);
    for (const std::int32_t a : prefetch_order) ++m_line_start[static_cast<std::size_t>(a)];
    for (std::size_t a = 1; a < m_line_start.size(); ++a) m_line_start[a] += m_line_start[a - 1];
    m_line_of.resize(prefetch_order.size());
    for (std::int64_t i = valid - 1; i >= 0; --i) {  // ascending lines per address
        const auto a = static_cast<std::size_t>(prefetch_order[static_cast<std::size_t>(i)]);
        m_line_of[--m_line_start[a]] = static_cast<std::int32_t>(i / per_line);
    }
}

// read_buffer.prefetch_active_buffer, at the first demand line: the active half's words (at
// most the whole fetch matrix, in lines of `bandwidth`) arrive in the cycles just before it.
void PrefetchReadBuffer::begin_line(std::int64_t cycle) {
    m_cycle = cycle;
    m_offset = 1;  // the hit latency
    if (m_started) return;
    m_started = true;
    const std::int64_t lines = std::min(ceil_div(m_active_words, m_bandwidth), ceil_div(m_fetch_slots, m_bandwidth));
    m_dram_words += lines * m_bandwidth;
    m_first_cycle = cycle - lines;
    m_last_cycle = cycle - 1;
    m_window_start = 0;
    m_window_end = m_active_lines;
}

// read_buffer.active_buffer_hit: the address is in one of the active lines.
bool PrefetchReadBuffer::held(std::int64_t address) const {
    const auto a = static_cast<std::size_t>(address);
    for (std::uint32_t i = m_line_start[a]; i < m_line_start[a + 1]; ++i) {
        const std::int64_t line = m_line_of[i];
        if (m_window_start < m_window_end ? line >= m_window_start && line < m_window_end
                                          : line >= m_window_start || line < m_window_end)
            return true;
    }
    return false;
}

// read_buffer.new_prefetch and service_reads: the window moves on by the prefetch half's lines,
// whose words arrive a cycle apart after the last prefetch; the demand line waits for them.
void PrefetchReadBuffer::prefetch_next(std::int64_t address) {
    if (m_line_start[static_cast<std::size_t>(address)] == m_line_start[static_cast<std::size_t>(address) + 1] ||
        m_prefetch_lines == 0)
        throw UserError("SCALE-Sim never finishes this layer in USER mode (a request its read buffer can never hold)");
    m_window_start = (m_window_start + m_prefetch_lines) % m_lines;
    m_window_end = (m_window_start + m_active_lines) % m_lines;
    const std::int64_t lines = ceil_div(m_prefetch_words, m_bandwidth);
    m_dram_words += lines * m_bandwidth;
    m_last_cycle += lines + 1;
    m_offset = std::max(m_offset, m_last_cycle - m_cycle);
}

}  // namespace fastsim::scalesim
