// SPDX-License-Identifier: MIT
#include "run/node_timeline.h"

#include <string>

namespace fastsim::run {

NodeTimeline::NodeTimeline(const workload::Workload& network, std::uint64_t clock_hz, const TimelineRequest& request)
    : m_network(network),
      m_builder(TickUnit::cycles, clock_hz, request,
                "one span per layer and phase on each of the array, converter and DMA tracks, from its first tile "
                "stage to its last; args: spans (tile stages), busy_cycles, and macs, bfp_groups or dram_bits summed") {
    const std::uint32_t node = m_builder.add_process("node");
    m_phases_track = m_builder.add_track(node, "phases", 0);
    const std::uint32_t array = m_builder.add_track(node, "array", 1);
    const std::uint32_t converter = m_builder.add_track(node, "converter", 2);
    const std::uint32_t dma = m_builder.add_track(node, "DMA", 3);
    const auto style = [&](node::TileStage stage, std::uint32_t track, const char* name, const char* category,
                           const char* quantity_key) {
        m_styles[static_cast<std::size_t>(stage)] = {track, m_builder.name_id(name), category, quantity_key};
    };
    style(node::TileStage::load, dma, "load", "load", "dram_bits");
    style(node::TileStage::compute, array, "tile", "compute", "macs");
    style(node::TileStage::convert, converter, "convert", "convert", "bfp_groups");
    style(node::TileStage::write_back, dma, "store", "store", "dram_bits");
}

std::uint32_t NodeTimeline::phase_name(const node::StepPhase& phase) {
    return m_builder.name_id(m_network.layers.at(phase.layer).name + " " + std::string(node::phase_name(phase)));
}

void NodeTimeline::add_gemm(const node::StepPhase& phase, std::uint64_t gemm, std::uint64_t start_cycle,
                            const node::TileStageLog& stages) {
    const std::uint32_t group = phase_name(phase);
    for (const node::TileStageSpan& stage : stages) {
        const StageStyle& style = m_styles[static_cast<std::size_t>(stage.stage)];
        TimelineSpan s;
        s.track = style.track;
        s.name = style.name;
        s.category = style.category;
        s.start = start_cycle + stage.start_cycle;
        s.end = start_cycle + stage.end_cycle;
        s.args[0] = {style.quantity_key, stage.quantity};
        s.args[1] = {"tile", stage.tile};
        if (phase.gemm_count() > 1) s.args[2] = {"gemm", gemm};
        m_builder.add_detail(group, s);
    }
}

void NodeTimeline::add_phase(const node::StepPhase& phase, std::uint64_t start_cycle,
                             const node::PhaseCounters& counters) {
    TimelineSpan s;
    s.track = m_phases_track;
    s.name = phase_name(phase);
    s.category = "phase";
    s.start = start_cycle;
    s.end = start_cycle + counters.cycles;
    s.args[0] = {"tiles", counters.tiles};
    s.args[1] = {"macs", counters.macs};
    s.args[2] = {"gemms", phase.gemm_count()};
    m_builder.add_outline(s);
}

Timeline NodeTimeline::finish(std::uint64_t total_cycles) { return m_builder.finish(total_cycles); }

}  // namespace fastsim::run
