// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <cstdint>

#include "node/tile_stage_log.h"
#include "node/training_step.h"
#include "run/timeline.h"
#include "workload/layer.h"

namespace fastsim::run {

/// The timeline of one node's training step, ticks in cycles: a process "node" with tracks
/// phases (one outline span per layer and phase), array (tiles), converter (conversions) and
/// DMA (loads and stores). Detailed spans are grouped by their layer and phase.
class NodeTimeline {
public:
    NodeTimeline(const workload::Workload& network, std::uint64_t clock_hz, const TimelineRequest& request);

    /// GEMM number `gemm` (from 0) of `phase`, which started at `start_cycle` of the step and
    /// ran `stages` (cycles from its own start).
    void add_gemm(const node::StepPhase& phase, std::uint64_t gemm, std::uint64_t start_cycle,
                  const node::TileStageLog& stages);
    /// The outline span of `phase`: [start_cycle, start_cycle + counters.cycles).
    void add_phase(const node::StepPhase& phase, std::uint64_t start_cycle, const node::PhaseCounters& counters);

    /// The timeline of a step of `total_cycles`. The NodeTimeline is spent afterwards.
    Timeline finish(std::uint64_t total_cycles);

private:
    std::uint32_t phase_name(const node::StepPhase& phase);

    /// How a tile stage is drawn.
    struct StageStyle {
        std::uint32_t track = 0;
        std::uint32_t name = 0;
        const char* category = "";
        const char* quantity_key = "";  ///< TileStageSpan::quantity's meaning, with its unit
    };

    const workload::Workload& m_network;
    TimelineBuilder m_builder;
    std::uint32_t m_phases_track = 0;
    std::array<StageStyle, 4> m_styles;  ///< by node::TileStage
};

}  // namespace fastsim::run
