// SPDX-License-Identifier: MIT
#include "node/node.h"

#include <algorithm>
#include <stdexcept>

#include "fmac/chunk_planes.h"

namespace fastsim::node {
namespace {

const sc_core::sc_time kCycle(1, sc_core::SC_NS);

std::uint64_t cycles_since(const sc_core::sc_time& start) {
    return static_cast<std::uint64_t>((sc_core::sc_time_stamp() - start) / kCycle + 0.5);
}

/// Spawns a pipeline's three engines (DMA, compute, conversion) as SystemC threads and waits,
/// from the calling thread, until every one has ended.
template <typename Dma, typename Compute, typename Convert>
void run_engines(Dma& dma, Compute& compute, const char* compute_name, Convert& convert) {
    sc_core::sc_spawn_options thread;
    sc_core::sc_process_handle handles[3] = {
        sc_core::sc_spawn(dma, sc_core::sc_gen_unique_name("dma"), &thread),
        sc_core::sc_spawn(compute, sc_core::sc_gen_unique_name(compute_name), &thread),
        sc_core::sc_spawn(convert, sc_core::sc_gen_unique_name("convert"), &thread)};
    for (auto& h : handles)
        if (!h.terminated()) sc_core::wait(h.terminated_event());
}

/// A phase's cycles from `start` to now, and its drain: the cycles after the last compute ended.
void finish_phase(PhaseCounters& counters, const sc_core::sc_time& start, const sc_core::sc_time& end_compute) {
    counters.cycles = cycles_since(start);
    counters.drain_cycles = counters.cycles - static_cast<std::uint64_t>((end_compute - start) / kCycle + 0.5);
}

}  // namespace

bfp::BfpMatrix slice(const bfp::BfpMatrix& matrix, std::size_t row0, std::size_t rows, std::size_t group0,
                     std::size_t groups) {
    const auto g = static_cast<std::size_t>(matrix.data.format.group_size);
    bfp::BfpMatrix out;
    out.rows = rows;
    out.cols = groups * g;
    out.groups_per_row = groups;
    out.data.format = matrix.data.format;
    out.data.size = rows * groups * g;
    out.data.exponents.reserve(rows * groups);
    out.data.magnitudes.reserve(rows * groups * g);
    out.data.negative.reserve(rows * groups * g);
    for (std::size_t r = row0; r < row0 + rows; ++r) {
        const std::size_t first = r * matrix.groups_per_row + group0;
        out.data.exponents.insert(out.data.exponents.end(), matrix.data.exponents.begin() + first,
                                  matrix.data.exponents.begin() + first + groups);
        out.data.magnitudes.insert(out.data.magnitudes.end(), matrix.data.magnitudes.begin() + first * g,
                                   matrix.data.magnitudes.begin() + (first + groups) * g);
        out.data.negative.insert(out.data.negative.end(), matrix.data.negative.begin() + first * g,
                                 matrix.data.negative.begin() + (first + groups) * g);
    }
    return out;
}

Node::Node(const sc_core::sc_module_name& name, const NodeParams& params)
    : sc_core::sc_module(name),
      m_params(params),
      m_array("array", array::ArrayParams{params.array, kCycle}),
      m_vector_unit("vector_unit", params.vector, kCycle) {}

PhaseCounters Node::run_phase(const PhaseJob& job, const bfp::BfpMatrix& x, const bfp::BfpMatrix& y_transposed,
                              std::vector<float>& out, TileStageLog* stages) {
    const fmac::GemmShape& s = job.shape;
    if (x.rows != s.m || y_transposed.rows != s.n || x.groups_per_row != y_transposed.groups_per_row)
        throw std::invalid_argument(std::string(name()) + ": operands do not match the job's shape");
    out.assign(s.m * s.n, 0.0f);
    PhaseCounters counters;
    const TilePlan plan = plan_tiles(job, m_params);
    if (plan.count() == 0) return counters;

    // (1) The tiles and their work, in run order.
    ArrayTimingMemo memo;
    std::vector<TileIndex> indices;
    std::vector<TileWork> work;
    for_each_tile(plan, [&](const TileIndex& index) {
        work.push_back(tile_work(job, m_params, plan, index, indices.empty() ? nullptr : &indices.back(), memo));
        indices.push_back(index);
    });
    const std::size_t tiles = work.size();
    // (2) Shared pipeline state: how many tiles are loaded, computed and converted.
    std::size_t loaded = 0, computed = 0, converted = 0;
    sc_core::sc_event loaded_event, computed_event, converted_event, dma_done, compute_done, convert_done;
    const sc_core::sc_time start = sc_core::sc_time_stamp();
    const auto g = static_cast<std::size_t>(m_params.array.group_size);
    sc_core::sc_time end_compute = start;
    const auto log = [&](TileStage stage, std::size_t tile, std::uint64_t start_cycle, std::uint64_t quantity) {
        const std::uint64_t end_cycle = cycles_since(start);
        if (stages && end_cycle > start_cycle) stages->push_back({stage, tile, start_cycle, end_cycle, quantity});
    };

    // Per tile: when its compute ended, and by how much the converter held up its load
    // (converter_delay), both in cycles from the phase start.
    std::vector<std::uint64_t> compute_end(tiles, 0), load_held(tiles, 0);
    auto dma = [&] {
        std::uint64_t write_back_wait = 0;  // the last write-back's wait for its conversion
        for (std::size_t i = 0; i <= tiles; ++i) {
            if (i < tiles) {  // load i, after tile i-2 freed its buffer
                const std::uint64_t dma_free = cycles_since(start);
                while (i >= 2 && computed < i - 1) wait(computed_event);
                load_held[i] = converter_delay(dma_free, i >= 2 ? compute_end[i - 2] : 0, write_back_wait);
                write_back_wait = 0;
                const std::uint64_t load_start = cycles_since(start);
                wait(kCycle * static_cast<double>(work[i].load_cycles));
                log(TileStage::load, i, load_start, work[i].traffic.dram_read_bits);
                loaded = i + 1;
                loaded_event.notify(sc_core::SC_ZERO_TIME);
            }
            if (i >= 1 && work[i - 1].write_cycles > 0) {  // write-back of tile i-1
                const std::uint64_t ready = cycles_since(start);
                while (converted < i) wait(converted_event);  // tile i-1 is computed too
                const std::uint64_t write_start = cycles_since(start);
                write_back_wait = write_start - std::max(ready, compute_end[i - 1]);  // the converter's part
                wait(kCycle * static_cast<double>(work[i - 1].write_cycles));
                log(TileStage::write_back, i - 1, write_start, work[i - 1].traffic.dram_write_bits);
            }
        }
        dma_done.notify(sc_core::SC_ZERO_TIME);
    };
    auto compute = [&] {
        std::vector<float> tile_out;
        for (std::size_t i = 0; i < tiles; ++i) {
            const TileWork& w = work[i];
            const TileIndex& index = indices[i];
            while (loaded <= i) wait(loaded_event);
            add_load_wait(counters, cycles_since(end_compute), load_held[i]);
            // The array runs the tile on its operands; partial sums of earlier k-tiles go back in.
            const std::size_t group0 = index.k * plan.tile_k / g, groups = (w.k + g - 1) / g;
            const fmac::ChunkPlanes x_tile(slice(x, index.m * plan.tile_m, w.m, group0, groups));
            const fmac::ChunkPlanes y_tile(slice(y_transposed, index.n * plan.tile_n, w.n, group0, groups));
            tile_out.assign(w.m * w.n, 0.0f);
            const std::size_t row0 = index.m * plan.tile_m, col0 = index.n * plan.tile_n;
            if (index.k > 0)
                for (std::size_t r = 0; r < w.m; ++r)
                    std::copy_n(&out[(row0 + r) * s.n + col0], w.n, &tile_out[r * w.n]);
            const fmac::ArrayCounters before = m_array.stats().counts;
            const std::uint64_t compute_start = cycles_since(start);
            const sc_core::sc_time array_start = sc_core::sc_time_stamp();
            m_array.start({&x_tile, &y_tile, &tile_out, index.k > 0, dataflow_of(job, m_params)});
            wait(m_array.done());
            TileWork measured = w;
            measured.array.cycles = cycles_since(array_start);
            measured.array.counts = m_array.stats().counts - before;
            for (std::size_t r = 0; r < w.m; ++r) std::copy_n(&tile_out[r * w.n], w.n, &out[(row0 + r) * s.n + col0]);
            if (w.sram_stall_cycles > 0) wait(kCycle * static_cast<double>(w.sram_stall_cycles));
            log(TileStage::compute, i, compute_start, w.array.macs);
            add_tile_counts(counters, measured);
            end_compute = sc_core::sc_time_stamp();
            compute_end[i] = cycles_since(start);
            computed = i + 1;
            computed_event.notify(sc_core::SC_ZERO_TIME);
        }
        compute_done.notify(sc_core::SC_ZERO_TIME);
    };
    auto convert = [&] {
        for (std::size_t i = 0; i < tiles; ++i) {
            if (work[i].last_k) {
                while (computed <= i) wait(computed_event);
                const std::uint64_t convert_start = cycles_since(start);
                wait(kCycle * static_cast<double>(work[i].conversion.cycles));
                log(TileStage::convert, i, convert_start, work[i].conversion.groups);
            }
            converted = i + 1;
            converted_event.notify(sc_core::SC_ZERO_TIME);
        }
        convert_done.notify(sc_core::SC_ZERO_TIME);
    };

    // (3) Run the three engines and wait for all of them.
    run_engines(dma, compute, "compute", convert);
    finish_phase(counters, start, end_compute);
    return counters;
}

PhaseCounters Node::run_vector_phase(const VectorJob& job) {
    PhaseCounters counters;
    const VectorPlan plan = plan_vector_chunks(job, m_params);
    std::vector<VectorChunkWork> work;
    for (std::uint64_t i = 0; i < plan.chunks; ++i) work.push_back(vector_chunk_work(job, m_params, plan, i));
    const std::size_t chunks = work.size();
    std::size_t loaded = 0, computed = 0, converted = 0;
    sc_core::sc_event loaded_event, computed_event, converted_event;
    const sc_core::sc_time start = sc_core::sc_time_stamp();
    sc_core::sc_time end_compute = start;

    std::vector<std::uint64_t> compute_end(chunks, 0), load_held(chunks, 0);  // as in run_phase
    auto dma = [&] {
        std::uint64_t write_back_wait = 0;
        for (std::size_t i = 0; i <= chunks; ++i) {
            if (i < chunks) {  // load i, after chunk i-2 freed its buffer
                const std::uint64_t dma_free = cycles_since(start);
                while (i >= 2 && computed < i - 1) wait(computed_event);
                load_held[i] = converter_delay(dma_free, i >= 2 ? compute_end[i - 2] : 0, write_back_wait);
                write_back_wait = 0;
                wait(kCycle * static_cast<double>(work[i].load_cycles));
                loaded = i + 1;
                loaded_event.notify(sc_core::SC_ZERO_TIME);
            }
            if (i >= 1 && work[i - 1].write_cycles > 0) {  // write-back of chunk i-1
                const std::uint64_t ready = cycles_since(start);
                while (converted < i) wait(converted_event);  // chunk i-1 is computed too
                write_back_wait = cycles_since(start) - std::max(ready, compute_end[i - 1]);
                wait(kCycle * static_cast<double>(work[i - 1].write_cycles));
            }
        }
    };
    auto compute = [&] {
        for (std::size_t i = 0; i < chunks; ++i) {
            while (loaded <= i) wait(loaded_event);
            add_load_wait(counters, cycles_since(end_compute), load_held[i]);
            const vector::VectorUnitStats before = m_vector_unit.stats();
            m_vector_unit.start(work[i].ops);
            wait(m_vector_unit.done());
            VectorChunkWork measured = work[i];
            measured.ops = m_vector_unit.stats().ops - before.ops;
            measured.compute_cycles = m_vector_unit.stats().busy_cycles - before.busy_cycles;
            add_chunk_counts(counters, measured);
            end_compute = sc_core::sc_time_stamp();
            compute_end[i] = cycles_since(start);
            computed = i + 1;
            computed_event.notify(sc_core::SC_ZERO_TIME);
        }
    };
    auto convert = [&] {
        for (std::size_t i = 0; i < chunks; ++i) {
            while (computed <= i) wait(computed_event);
            wait(kCycle * static_cast<double>(work[i].conversion.cycles));
            converted = i + 1;
            converted_event.notify(sc_core::SC_ZERO_TIME);
        }
    };
    run_engines(dma, compute, "vector", convert);
    finish_phase(counters, start, end_compute);
    counters.macs = job.macs;
    return counters;
}

}  // namespace fastsim::node
