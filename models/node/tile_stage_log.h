// SPDX-License-Identifier: MIT
#pragma once

// The optional timing record of a phase's tile pipeline, for timelines. Contract: the node
// models fill a TileStageLog only when the caller passes one; without it they do no extra work.

#include <cstdint>
#include <vector>

namespace fastsim::node {

/// The engine a tile stage runs on (docs/node.md, "Double buffering").
enum class TileStage : std::uint8_t {
    load,       ///< DMA: operands from DRAM into SRAM
    compute,    ///< array: the tile's GEMM, SRAM stalls included
    convert,    ///< converter: a finished output tile to BFP (both groupings)
    write_back  ///< DMA: a finished output tile to DRAM
};

/// When one stage of one tile ran. Times in cycles from the phase start, end_cycle >
/// start_cycle: stages of zero cycles are not logged.
struct TileStageSpan {
    TileStage stage = TileStage::compute;
    std::uint64_t tile = 0;  ///< index in run order (for_each_tile)
    std::uint64_t start_cycle = 0;
    std::uint64_t end_cycle = 0;
    /// load and write_back: DRAM bits moved; compute: useful MACs; convert: BFP groups made.
    std::uint64_t quantity = 0;

    friend bool operator==(const TileStageSpan& a, const TileStageSpan& b) {
        return a.stage == b.stage && a.tile == b.tile && a.start_cycle == b.start_cycle && a.end_cycle == b.end_cycle &&
               a.quantity == b.quantity;
    }
};

/// The stages of one phase. Per engine (DMA: loads and write-backs; array; converter) the
/// spans are appended in time order and do not overlap; engines interleave.
using TileStageLog = std::vector<TileStageSpan>;

}  // namespace fastsim::node
