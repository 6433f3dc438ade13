// SPDX-License-Identifier: MIT
#include "node/node_model.h"

#include <algorithm>
#include <array>
#include <vector>

#include "common/checked.h"

namespace fastsim::node {
namespace {

bool fits(const TileFootprint& f, const NodeParams& node) {
    return f.exponent_bits <= node.sram.exponent_bank.capacity_bits &&
           f.mantissa_bits <= node.sram.mantissa_bank.capacity_bits;
}

/// The largest value in {step, 2 step, ...} capped at `limit` (and at least min(step, limit))
/// for which `ok` holds, or 0 if none does; `ok` must be monotone (true up to some point).
template <typename Ok>
std::uint64_t largest_fitting(std::uint64_t step, std::uint64_t limit, Ok&& ok) {
    const std::uint64_t units = ceil_div(limit, step);
    auto value = [&](std::uint64_t u) { return std::min(u * step, limit); };
    if (!ok(value(1))) return 0;
    std::uint64_t lo = 1, hi = units;  // ok(value(lo)) holds
    while (lo < hi) {
        const std::uint64_t mid = lo + (hi - lo + 1) / 2;
        if (ok(value(mid)))
            lo = mid;
        else
            hi = mid - 1;
    }
    return value(lo);
}

memory::BfpBits operand_bits(std::uint64_t rows, std::uint64_t k, int mantissa_bits, const NodeParams& node) {
    const auto g = static_cast<std::uint64_t>(node.array.group_size);
    return memory::bfp_bits(checked_mul(rows, ceil_div(k, g), "BFP groups of an operand"), node.array.group_size,
                            mantissa_bits, node.exponent_bits);
}

/// operand_bits() saturated at 2^64 - 1 (only compared with a bank's capacity).
memory::BfpBits saturated_bits(std::uint64_t rows, std::uint64_t k, int mantissa_bits, const NodeParams& node) {
    const auto g = static_cast<std::uint64_t>(node.array.group_size);
    return memory::bfp_bits_saturated(saturating_mul(rows, ceil_div(k, g)), node.array.group_size, mantissa_bits,
                                      node.exponent_bits);
}

}  // namespace

TileFootprint tile_footprint(const PhaseJob& job, const NodeParams& node, std::uint64_t m, std::uint64_t k,
                             std::uint64_t n) {
    // Saturated, not checked: a tile too large to count is one that does not fit.
    const memory::BfpBits x = saturated_bits(m, k, job.x_mantissa_bits, node);
    const memory::BfpBits y = saturated_bits(n, k, job.y_mantissa_bits, node);
    const std::uint64_t accumulators = saturating_mul(saturating_mul(m, n), memory::kFp32Bits);
    return {saturating_mul(2, saturating_add(x.exponent, y.exponent)),
            saturating_mul(2, saturating_add(saturating_add(x.mantissa, y.mantissa), accumulators))};
}

TilePlan plan_tiles(const PhaseJob& job, const NodeParams& node) {
    const fmac::GemmShape& s = job.shape;
    TilePlan plan;
    if (s.m == 0 || s.k == 0 || s.n == 0) return plan;
    const auto g = static_cast<std::uint64_t>(node.array.group_size);
    const auto rows = static_cast<std::uint64_t>(node.array.rows);
    const auto cols = static_cast<std::uint64_t>(node.array.cols);
    // The dataflow's roles (fmac::FoldMapping): which of m, k, n streams, which spreads over
    // the array's rows and which over its columns; each with its whole-fold unit and its
    // finest step (k moves in groups). X rows (m) never exceed max_tile_rows.
    enum Dim : std::size_t { kM, kK, kN };
    struct Role {
        Dim dim;
        std::uint64_t unit, fine;
    };
    Role stream{kM, 1, 1}, down{kK, rows * g, g}, across{kN, cols, 1};
    switch (dataflow_of(job, node)) {
    case fmac::Dataflow::weight_stationary: break;
    case fmac::Dataflow::input_stationary: stream = {kN, 1, 1}, across = {kM, cols, 1}; break;
    case fmac::Dataflow::output_stationary: stream = {kK, g, g}, down = {kM, rows, 1}; break;
    }
    const std::array<std::uint64_t, 3> total{s.m, s.k, s.n};
    const std::array<std::uint64_t, 3> limit{std::min(s.m, node.max_tile_rows), s.k, s.n};
    std::array<std::uint64_t, 3> tile{};
    auto ok_with = [&](Dim dim, std::uint64_t value) {
        std::array<std::uint64_t, 3> t = tile;
        t[dim] = value;
        return fits(tile_footprint(job, node, t[kM], t[kK], t[kN]), node);
    };

    // (1) The streamed dimension first: fill and drain cost r_f + c_f - 2 steps per fold, so a
    // fold streams as much as allowed; it is halved only if not even one fold row of the
    // dimension spread down the array fits. (2) Then that dimension: the most whole fold rows,
    // all of it if it fits. Sized next to one column fold, or (tiny SRAM) next to a single
    // column.
    const auto halve = [&](std::uint64_t v) {
        return std::min(total[stream.dim], ceil_div(ceil_div(v, stream.unit), 2) * stream.unit);
    };
    const std::uint64_t stream_floor = std::min(total[stream.dim], stream.fine);
    bool found = false;
    for (const std::uint64_t across_probe : {std::min(limit[across.dim], across.unit), std::uint64_t{1}}) {
        tile[across.dim] = across_probe;
        for (const std::uint64_t down_step : {down.unit, down.fine}) {
            for (std::uint64_t v = limit[stream.dim];; v = halve(v)) {
                tile[stream.dim] = v;
                tile[down.dim] =
                    largest_fitting(down_step, limit[down.dim], [&](std::uint64_t d) { return ok_with(down.dim, d); });
                if (tile[down.dim] > 0 || v <= stream_floor) break;
            }
            if ((found = tile[down.dim] > 0)) break;
        }
        if (found) break;
    }
    if (!found) {
        const TileFootprint f = tile_footprint(job, node, 1, std::min(s.k, g), 1);
        const bool exponent_short = f.exponent_bits > node.sram.exponent_bank.capacity_bits;
        throw TilingError(exponent_short ? SramBank::exponent : SramBank::mantissa,
                          std::string("the smallest tile (1 x ") + std::to_string(std::min(s.k, g)) +
                              " x 1, double-buffered) needs " +
                              std::to_string(exponent_short ? f.exponent_bits : f.mantissa_bits) + " bits of the " +
                              (exponent_short ? "exponent" : "mantissa") + " bank, which holds " +
                              std::to_string(exponent_short ? node.sram.exponent_bank.capacity_bits
                                                            : node.sram.mantissa_bank.capacity_bits));
    }
    // (3) Then the dimension across the columns: as many column folds as fit (the streamed
    // operand is re-read per column fold).
    const auto ok_across = [&](std::uint64_t v) { return ok_with(across.dim, v); };
    tile[across.dim] = largest_fitting(across.unit, limit[across.dim], ok_across);
    if (tile[across.dim] == 0)  // less than one column fold fits (sized with a probe of 1 above)
        tile[across.dim] = largest_fitting(across.fine, std::min(limit[across.dim], across.unit), ok_across);
    plan.tile_m = tile[kM];
    plan.tile_k = tile[kK];
    plan.tile_n = tile[kN];
    plan.m_tiles = ceil_div(s.m, plan.tile_m);
    plan.k_tiles = ceil_div(s.k, plan.tile_k);
    plan.n_tiles = ceil_div(s.n, plan.tile_n);
    return plan;
}

const fmac::GemmTiming& ArrayTimingMemo::timing(const fmac::GemmShape& shape, const fmac::ArrayGeometry& array,
                                                int x_bits, int y_bits, fmac::Dataflow dataflow) {
    const auto key = std::make_tuple(shape.m, shape.k, shape.n, x_bits, y_bits, dataflow);
    auto it = m_cache.find(key);
    if (it == m_cache.end())
        it = m_cache.emplace(key, fmac::analytic_gemm_timing(shape, array, x_bits, y_bits, dataflow)).first;
    return it->second;
}

TileWork tile_work(const PhaseJob& job, const NodeParams& node, const TilePlan& plan, const TileIndex& index,
                   const TileIndex* previous, ArrayTimingMemo& memo) {
    const fmac::GemmShape& s = job.shape;
    TileWork w;
    w.m = std::min(plan.tile_m, s.m - index.m * plan.tile_m);
    w.k = std::min(plan.tile_k, s.k - index.k * plan.tile_k);
    w.n = std::min(plan.tile_n, s.n - index.n * plan.tile_n);
    w.last_k = index.k + 1 == plan.k_tiles;
    memory::Traffic& t = w.traffic;

    // (1) DMA load of the operands not already resident from the previous tile.
    const memory::BfpBits x = operand_bits(w.m, w.k, job.x_mantissa_bits, node);
    const memory::BfpBits y = operand_bits(w.n, w.k, job.y_mantissa_bits, node);
    const bool x_resident = previous && previous->m == index.m && previous->k == index.k;
    const bool y_resident = previous && previous->n == index.n && previous->k == index.k;
    if (!x_resident) w.load += x;
    if (!y_resident) w.load += y;
    t.dram_read_bits = w.load.total();
    w.load_cycles = memory::dram_transfer_cycles(node.dram, node.clock_hz, t.dram_read_bits);

    memo.count_tile_worked();
    // (2) Array: the memoised tile timing in the phase's dataflow.
    w.array =
        memo.timing({w.m, w.k, w.n}, node.array, job.x_mantissa_bits, job.y_mantissa_bits, dataflow_of(job, node));

    // (3) SRAM traffic: DMA fills; X and Y read as often as the dataflow passes them through
    // the array (fmac::OperandPasses: the held operand once, the streamed one once per column
    // fold); fp32 partial sums written each time they leave the array and read back each time
    // but the first of the first k-tile; the finished accumulators read once by the converter
    // / write-back.
    constexpr const char* kSramBits = "SRAM bits of a tile";
    const fmac::OperandPasses& passes = w.array.passes_of_operands;
    const std::uint64_t psum_bits = checked_mul(checked_mul(w.m, w.n, kSramBits), memory::kFp32Bits, kSramBits);
    const auto read_bits = [&](std::uint64_t x_bits, std::uint64_t y_bits) {
        return checked_add(checked_mul(x_bits, passes.x_reads, kSramBits),
                           checked_mul(y_bits, passes.y_reads, kSramBits), kSramBits);
    };
    t.sram_exponent_write_bits = w.load.exponent;
    t.sram_mantissa_write_bits =
        checked_add(w.load.mantissa, checked_mul(psum_bits, passes.psum_writes, kSramBits), kSramBits);
    t.sram_exponent_read_bits = read_bits(x.exponent, y.exponent);
    // Every tile has m, k, n >= 1, so its partial sums leave the array at least once.
    const std::uint64_t psum_reads = passes.psum_writes - 1 + (index.k > 0 ? 1 : 0) + (w.last_k ? 1 : 0);
    t.sram_mantissa_read_bits =
        checked_add(read_bits(x.mantissa, y.mantissa), checked_mul(psum_bits, psum_reads, kSramBits), kSramBits);
    // Each port streams its tile's bits alongside the array, a read after the bank's access
    // latency; the tile stalls for what the busiest port needs beyond the array's cycles.
    const std::uint64_t port_cycles =
        std::max({memory::bank_read_cycles(node.sram.exponent_bank, t.sram_exponent_read_bits),
                  memory::bank_cycles(node.sram.exponent_bank, t.sram_exponent_write_bits),
                  memory::bank_read_cycles(node.sram.mantissa_bank, t.sram_mantissa_read_bits),
                  memory::bank_cycles(node.sram.mantissa_bank, t.sram_mantissa_write_bits)});
    w.sram_stall_cycles = port_cycles > w.array.cycles ? port_cycles - w.array.cycles : 0;

    // (4) Output: converted (twice, one per grouping) and written back, or written as fp32;
    // nothing when it streams into a fused layer.
    if (w.last_k && !job.output_streamed) {
        const std::uint64_t values = checked_mul(w.m, w.n, "output values of a tile");
        if (job.output == OutputForm::fp32) {
            t.dram_write_bits = checked_mul(values, memory::kFp32Bits, "output bits of a tile");
        } else {
            const converter::ConversionCost once =
                converter::conversion_cost(node.converter, values, job.output_rounding, node.noise_bits);
            w.conversion += once;  // grouped along rows
            w.conversion += once;  // grouped along columns
            t.dram_write_bits = checked_mul(
                2,
                memory::bfp_bits(once.groups, node.array.group_size, job.output_mantissa_bits, node.exponent_bits)
                    .total(),
                "output bits of a tile");
        }
        w.write_cycles = memory::dram_transfer_cycles(node.dram, node.clock_hz, t.dram_write_bits);
    }
    return w;
}

void add_tile_counts(PhaseCounters& c, const TileWork& w) {
    constexpr const char* kWhat = "a counter of a phase";
    ++c.tiles;
    checked_accumulate(c.macs, w.array.macs, kWhat);
    checked_accumulate(c.array_cycles, w.array.cycles, kWhat);
    checked_accumulate(c.sram_stall_cycles, w.sram_stall_cycles, kWhat);
    add_counters(c.array, w.array.counts, fmac::kArrayCounterFields, kWhat);
    c.conversion += w.conversion;
    add_counters(c.traffic, w.traffic, memory::kTrafficFields, kWhat);
}

namespace {

/// The tile pipeline's clocks between two tiles (cycles from the phase start).
struct TileClocks {
    std::uint64_t dma_free = 0, end_compute = 0, end_convert = 0;
    std::uint64_t end_compute_history[2] = {0, 0};  ///< compute ends of tiles i-2, i-1
    std::uint64_t pending_end_convert = 0;          ///< conversion end of the tile awaiting write-back
    std::uint64_t write_back_wait = 0;              ///< cycles the DMA's last write-back waited for its conversion

    /// Every clock less end_compute (mod 2^64), each first raised to the least clock it is only
    /// ever compared with by max() from here on (a conversion starts after the next compute end;
    /// the next load after dma_free, as does a write-back), and the last write-back's wait: equal at
    /// the starts of two runs of tiles with the same work means the second run takes the same
    /// cycles, split alike, as the first, shifted.
    [[nodiscard]] std::array<std::uint64_t, 6> relative() const {
        // The next load compares end_compute_history[0] with dma_free and, for the converter's
        // share of its wait, with dma_free - write_back_wait (<= dma_free).
        return {dma_free - end_compute,
                std::max(end_convert, end_compute) - end_compute,
                std::max(end_compute_history[0], dma_free - write_back_wait) - end_compute,
                std::max(end_compute_history[1], dma_free) - end_compute,
                std::max(pending_end_convert, dma_free) - end_compute,
                write_back_wait};
    }
    void shift(std::uint64_t cycles) {
        constexpr const char* kCycles = "cycles of a phase";
        for (std::uint64_t* clock : {&dma_free, &end_compute, &end_convert, &end_compute_history[0],
                                     &end_compute_history[1], &pending_end_convert})
            *clock = checked_add(*clock, cycles, kCycles);
    }
};

}  // namespace

PhaseCounters run_phase_memo(const PhaseJob& job, const NodeParams& node, ArrayTimingMemo& memo, TileStageLog* stages) {
    PhaseCounters c;
    const TilePlan plan = plan_tiles(job, node);
    if (plan.count() == 0) return c;
    // Times are in cycles from the phase start.
    constexpr const char* kCycles = "cycles of a phase";
    TileClocks clock;
    TileWork pending_write;  // tile i-1, written after load i
    bool has_pending = false;
    const auto log = [stages](TileStage stage, std::uint64_t tile, std::uint64_t start, std::uint64_t end,
                              std::uint64_t quantity) {
        if (stages && end > start) stages->push_back({stage, tile, start, end, quantity});
    };
    // `computed`: when the tile's compute ended; the write-back's wait past it (and past the
    // DMA) is the converter's.
    auto write_back = [&](const TileWork& w, std::uint64_t tile, std::uint64_t ready, std::uint64_t computed) {
        clock.write_back_wait = 0;
        if (w.write_cycles == 0) return;
        const std::uint64_t start = std::max(clock.dma_free, ready);
        clock.write_back_wait = start - std::max(clock.dma_free, computed);
        clock.dma_free = checked_add(start, w.write_cycles, kCycles);
        log(TileStage::write_back, tile, start, clock.dma_free, w.traffic.dram_write_bits);
    };
    TileIndex previous;
    std::uint64_t i = 0;
    const auto run_tile = [&](const TileIndex& index, PhaseCounters& into) {
        const TileWork w = tile_work(job, node, plan, index, i == 0 ? nullptr : &previous, memo);
        // (1) Load i, in DMA order, after tile i-2 freed its buffer. Consecutive tiles never
        // share both operands, so every tile loads something.
        const std::uint64_t buffer_free = i >= 2 ? clock.end_compute_history[0] : 0;
        const std::uint64_t start_load = std::max(clock.dma_free, buffer_free);
        const std::uint64_t held = converter_delay(clock.dma_free, buffer_free, clock.write_back_wait);
        clock.write_back_wait = 0;
        const std::uint64_t end_load = checked_add(start_load, w.load_cycles, kCycles);
        clock.dma_free = end_load;
        log(TileStage::load, i, start_load, end_load, w.traffic.dram_read_bits);
        // (2) Compute i, after its load and tile i-1.
        const std::uint64_t start = std::max(end_load, clock.end_compute);
        add_load_wait(into, start - clock.end_compute, held);
        clock.end_compute = checked_add(checked_add(start, w.array.cycles, kCycles), w.sram_stall_cycles, kCycles);
        log(TileStage::compute, i, start, clock.end_compute, w.array.macs);
        clock.end_compute_history[0] = clock.end_compute_history[1];
        clock.end_compute_history[1] = clock.end_compute;
        // (3) Convert i (a finished output tile), after tile i's compute and the previous conversion.
        std::uint64_t convert_done = clock.end_convert;
        if (w.last_k) {
            const std::uint64_t start_convert = std::max(clock.end_compute, clock.end_convert);
            convert_done = checked_add(start_convert, w.conversion.cycles, kCycles);
            clock.end_convert = convert_done;
            log(TileStage::convert, i, start_convert, convert_done, w.conversion.groups);
        }
        // (4) Write-back of tile i-1 follows load i in DMA order.
        if (has_pending)  // tile i-1, computed at end_compute_history[0]
            write_back(pending_write, i - 1, clock.pending_end_convert, clock.end_compute_history[0]);
        add_tile_counts(into, w);
        pending_write = w;
        clock.pending_end_convert = convert_done;
        has_pending = true;
        previous = index;
        ++i;
    };
    // Repeats (docs/node.md, "Memo fidelity"): rows 1 .. m_tiles-2 of an n-tile do the same work,
    // as do n-tiles 1 .. n_tiles-2. Once such a unit, starting at tile 2 or later, leaves the
    // clocks where it found them relative to end_compute, every further one repeats it shifted:
    // they are added at once, exactly. Not while logging every stage.
    const bool repeats_allowed = stages == nullptr;
    const auto repeats_after = [&](std::uint64_t unit, std::uint64_t units, std::uint64_t first_tile,
                                   const std::array<std::uint64_t, 6>& start) -> std::uint64_t {
        if (!repeats_allowed || unit < 1 || unit + 2 >= units || first_tile < 2 || clock.relative() != start) return 0;
        return units - 2 - unit;
    };
    for (std::uint64_t n = 0; n < plan.n_tiles; ++n) {
        PhaseCounters n_tile;
        const auto n_start = clock.relative();
        const std::uint64_t n_start_compute = clock.end_compute, n_first_tile = i;
        for (std::uint64_t m = 0; m < plan.m_tiles; ++m) {
            PhaseCounters row;
            const auto m_start = clock.relative();
            const std::uint64_t m_start_compute = clock.end_compute, m_first_tile = i;
            for (std::uint64_t k = 0; k < plan.k_tiles; ++k) {
                // k-tiles 1 .. k_tiles-2 of a row do the same work too (neither operand resident).
                PhaseCounters tile;
                const auto k_start = clock.relative();
                const std::uint64_t k_start_compute = clock.end_compute, k_first_tile = i;
                run_tile(TileIndex{n, m, k}, tile);
                row += tile;
                if (const std::uint64_t more = repeats_after(k, plan.k_tiles, k_first_tile, k_start)) {
                    clock.shift(checked_mul(clock.end_compute - k_start_compute, more, kCycles));
                    row += tile.repeated(more);
                    i = checked_add(i, more, kCycles);
                    k += more;
                    previous = {n, m, k};
                }
            }
            n_tile += row;
            if (const std::uint64_t more = repeats_after(m, plan.m_tiles, m_first_tile, m_start)) {
                clock.shift(checked_mul(clock.end_compute - m_start_compute, more, kCycles));
                n_tile += row.repeated(more);
                i = checked_add(i, checked_mul(more, plan.k_tiles, kCycles), kCycles);
                m += more;
                previous = {n, m, plan.k_tiles - 1};
            }
        }
        c += n_tile;
        if (const std::uint64_t more = repeats_after(n, plan.n_tiles, n_first_tile, n_start)) {
            clock.shift(checked_mul(clock.end_compute - n_start_compute, more, kCycles));
            c += n_tile.repeated(more);
            i = checked_add(i, checked_mul(more, checked_mul(plan.m_tiles, plan.k_tiles, kCycles), kCycles), kCycles);
            n += more;
            previous = {n, plan.m_tiles - 1, plan.k_tiles - 1};
        }
    }
    write_back(pending_write, i - 1, clock.pending_end_convert, clock.end_compute);
    c.cycles = std::max({clock.end_compute, clock.end_convert, clock.dma_free});
    c.drain_cycles = c.cycles - clock.end_compute;
    return c;
}

}  // namespace fastsim::node
