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
        const std::int64_t quiet = std::clamp<std::int64_t>(draining ? m_free - 1 : m_free - m_active_size, 0, words - 1);
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
    const std::size_t count = std::min(static_cast<std::size_t>(ceil_div(m_drain_size, m_line_words)), m_line_fill.size());
    if (count == 0)
        throw UserError("SCALE-Sim fails on this layer (an empty drain in write_buffer.py): choose a larger OfmapSramSzkB");
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

void ReadBuffer::prefetch(std::int64_t words) {
    const std::int64_t cycles = m_prefetch_end - m_prefetch_start + 1;
    if (cycles <= 0)
        throw UserError("SCALE-Sim fails on this layer (a division by zero in read_buffer_estimate_bw.py: two halves of a "
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

}  // namespace fastsim::scalesim
