// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <tuple>

#include "bfp/format.h"
#include "common/checked.h"
#include "converter/converter_model.h"
#include "fmac/training_gemm.h"
#include "fmac/timing.h"
#include "memory/memory.h"
#include "node/phase_counters.h"
#include "node/tile_stage_log.h"
#include "vector/vector_model.h"
#include "workload/layer.h"

namespace fastsim::node {

/// Resolved parameters of one FAST node: array, converter, memories, clock, tiling.
struct NodeParams {
    fmac::ArrayGeometry array;
    std::uint64_t clock_hz = 1'000'000'000;
    converter::ConverterParams converter =
        converter::ConverterParams::feeding(16, 32);  ///< as a config resolves it for 32 columns
    vector::VectorParams vector;                      ///< the vector unit (non-GEMM layers)
    memory::SramParams sram;
    memory::DramParams dram;
    int exponent_bits = 8;               ///< shared-exponent width e of every BFP tensor
    int noise_bits = 8;                  ///< LFSR noise bits per stochastically rounded value
    std::uint64_t max_tile_rows = 1024;  ///< cap on X rows per tile (docs/node.md, "Tiling")
    /// The array's dataflow for each training phase's GEMMs, indexed by fmac::TrainingPhase
    /// (node.array.dataflow, node.array.dataflow_per_phase).
    std::array<fmac::Dataflow, 3> dataflow{fmac::Dataflow::weight_stationary, fmac::Dataflow::weight_stationary,
                                           fmac::Dataflow::weight_stationary};
    /// How convolutions' GEMMs meet the array (node.lowering: backward_data, depthwise).
    workload::Lowering lowering;
};

/// How a phase's output leaves the node.
enum class OutputForm : std::uint8_t {
    bfp_two_groupings,  ///< converted to BFP twice: grouped along rows and along columns
    fp32                ///< written as fp32 (weight gradients, for the fp32 update)
};

/// One GEMM of a training phase as the node runs it: C (m x n) = X (m x k) * Y (k x n), Y
/// stationary, both grouped along k.
struct PhaseJob {
    fmac::GemmShape shape;
    fmac::TrainingPhase phase = fmac::TrainingPhase::forward;  ///< picks the node's dataflow
    int x_mantissa_bits = 8;
    int y_mantissa_bits = 8;
    OutputForm output = OutputForm::bfp_two_groupings;
    int output_mantissa_bits = 8;  ///< bfp_two_groupings only
    bfp::Rounding output_rounding = bfp::Rounding::nearest;
    /// node.fusion: the output streams from the accumulators into the next layer's pass on the
    /// vector unit, so it is neither converted nor written to DRAM.
    bool output_streamed = false;
};

/// The dataflow `node` runs `job` in.
inline fmac::Dataflow dataflow_of(const PhaseJob& job, const NodeParams& node) {
    return node.dataflow[static_cast<std::size_t>(job.phase)];
}

/// The two SRAM banks of a node (docs/node.md, "Memory").
enum class SramBank : std::uint8_t { exponent, mantissa };

/// A phase does not fit the node's SRAM even with the smallest tile; `bank()` is the one too small.
class TilingError : public std::runtime_error {
public:
    TilingError(SramBank bank, const std::string& what) : std::runtime_error(what), m_bank(bank) {}
    [[nodiscard]] SramBank bank() const { return m_bank; }

private:
    SramBank m_bank;
};

/// Tile sizes of one phase and how many tiles along each dimension (docs/node.md, "Tiling").
/// Tiles run n-tile outer, m-tile middle, k-tile inner; edge tiles are smaller.
struct TilePlan {
    std::uint64_t tile_m = 0, tile_k = 0, tile_n = 0;  ///< tile_k is a multiple of g unless it is all of k
    std::uint64_t m_tiles = 0, k_tiles = 0, n_tiles = 0;
    /// Tiles in all; SizeOverflow beyond 64 bits.
    [[nodiscard]] std::uint64_t count() const {
        return checked_mul(checked_mul(m_tiles, k_tiles, "tiles of a phase"), n_tiles, "tiles of a phase");
    }
};

/// SRAM bits a tile (m x k x n) reserves: two buffers each of X, Y and the fp32 accumulators.
struct TileFootprint {
    std::uint64_t exponent_bits = 0;
    std::uint64_t mantissa_bits = 0;
};
TileFootprint tile_footprint(const PhaseJob& job, const NodeParams& node, std::uint64_t m, std::uint64_t k,
                             std::uint64_t n);

/// Chooses tile sizes (docs/node.md, "Tiling") for the phase's dataflow: the streamed
/// dimension first (ws: m, is: n, os: k; halved only if one fold row of the next does not
/// fit), then the most whole fold rows of the dimension spread down the array (ws, is: R g of
/// k; os: R of m), then the most column folds of the last. m never exceeds max_tile_rows.
/// Throws TilingError, naming the bank and the bits needed, if a 1 x min(k, g) x 1 tile
/// does not fit.
TilePlan plan_tiles(const PhaseJob& job, const NodeParams& node);

/// Work and stage durations of one tile (cycles), as both fidelities use them.
struct TileWork {
    std::uint64_t m = 0, k = 0, n = 0;  ///< this tile's dimensions
    memory::BfpBits load;               ///< X and Y bits fetched (0 if still resident)
    std::uint64_t load_cycles = 0;      ///< DMA read
    fmac::GemmTiming array;             ///< the array's part of the tile
    std::uint64_t sram_stall_cycles = 0;
    bool last_k = false;                   ///< completes an output tile
    converter::ConversionCost conversion;  ///< output conversion (last k-tile only)
    std::uint64_t write_cycles = 0;        ///< DMA write
    memory::Traffic traffic;               ///< SRAM bits; DRAM bits: the load and the output written (last k-tile only)
};

/// Memo of the array's per-tile timing: it depends only on (m, k, n, m_x, m_y, dataflow) for
/// a geometry, never on the data (docs/node.md, "Fidelity").
class ArrayTimingMemo {
public:
    const fmac::GemmTiming& timing(const fmac::GemmShape& shape, const fmac::ArrayGeometry& array, int x_bits,
                                   int y_bits, fmac::Dataflow dataflow);
    [[nodiscard]] std::size_t size() const { return m_cache.size(); }
    /// Tiles whose work was computed one by one (repeats skipped by run_phase_memo are not).
    [[nodiscard]] std::uint64_t tiles_worked() const { return m_tiles_worked; }
    void count_tile_worked() { ++m_tiles_worked; }

private:
    std::uint64_t m_tiles_worked = 0;
    std::map<std::tuple<std::uint64_t, std::uint64_t, std::uint64_t, int, int, fmac::Dataflow>, fmac::GemmTiming>
        m_cache;
};

/// Work of tile (n_index, m_index, k_index) of a plan; `previous` is the tile before it in
/// run order (nullptr for the first), to tell which operands are still resident.
struct TileIndex {
    std::uint64_t n = 0, m = 0, k = 0;
};
TileWork tile_work(const PhaseJob& job, const NodeParams& node, const TilePlan& plan, const TileIndex& index,
                   const TileIndex* previous, ArrayTimingMemo& memo);

/// Adds one tile's work to the counters (everything but the pipeline's waits and cycles).
void add_tile_counts(PhaseCounters& counters, const TileWork& work);

/// The tile pipeline of docs/node.md, "Double buffering", as a recurrence over the tiles:
/// the memoised fidelity. The SystemC node (fidelity stepped) runs the same rules with
/// events and must give identical counters. With `stages`, also appends every tile stage's
/// timing to it (tile_stage_log.h).
PhaseCounters run_phase_memo(const PhaseJob& job, const NodeParams& node, ArrayTimingMemo& memo,
                             TileStageLog* stages = nullptr);

/// Visits the tiles of a plan in run order.
template <typename Visit>
void for_each_tile(const TilePlan& plan, Visit&& visit) {
    for (std::uint64_t n = 0; n < plan.n_tiles; ++n)
        for (std::uint64_t m = 0; m < plan.m_tiles; ++m)
            for (std::uint64_t k = 0; k < plan.k_tiles; ++k) visit(TileIndex{n, m, k});
}

}  // namespace fastsim::node
