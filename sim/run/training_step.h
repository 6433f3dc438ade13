// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "config/params.h"
#include "energy/energy.h"
#include "node/node_model.h"
#include "node/training_step.h"
#include "run/timeline.h"
#include "run/work.h"

namespace fastsim::run {

/// One phase of the step: what ran, what it cost in cycles and actions, and its energy.
struct PhaseResult {
    node::StepPhase step;
    node::PhaseCounters counters;  ///< all `step.count` GEMMs of the phase
    energy::EnergyBreakdown energy;
    std::uint64_t dram_saved_bits = 0;  ///< node.fusion: DRAM bits read and written fewer than unfused
};

struct TrainingStepResult {
    std::vector<PhaseResult> phases;  ///< in run order
    node::PhaseCounters total;
    energy::EnergyBreakdown total_energy;
    std::size_t distinct_tile_shapes = 0;  ///< memo entries (memo fidelity)
    std::optional<Timeline> timeline;      ///< when asked for: phases and tile stages, in cycles
};

/// Runs one training step of params.workload on params.node at params.run.fidelity:
/// memo = the plain tile recurrence with memoised array timing; stepped = the SystemC node
/// on synthetic operands (normal values from params.run.seed, quantised per phase), which
/// must give the same counters. Energy is computed here, from the counters, once each
/// phase has run. With `timeline`, also records the step's timeline (run/node_timeline.h);
/// the phases run back to back, and `count` GEMMs of a phase one after another. `progress`
/// hears the fraction done after each phase (memo) or GEMM (stepped). A count that overflows
/// 64 bits is a ConfigError naming the layer (config::layer_size_error).
TrainingStepResult run_training_step(const config::Params& params, const WorkProgress& progress = {},
                                     const std::optional<TimelineRequest>& timeline = std::nullopt);

/// Phases whose converter held the array (or vector unit) idle for more than this share of
/// their cycles are converter-bound.
inline constexpr double kConverterBoundShare = 0.10;

/// The step's converter-bound phases (cycles.converter_wait over kConverterBoundShare of the
/// phase's cycles), or nullopt if none: one line naming how many, the converter's share of the
/// whole step, the worst (layer, phase and share) and the converter lanes against what would
/// feed the array (docs/converter.md, "Lanes").
std::optional<std::string> converter_bound_note(const config::Params& params, const TrainingStepResult& step);

/// One precision segment of a whole run (config::PrecisionSegment) and what a step of it costs.
struct RunSegment {
    std::uint64_t first_step = 0, steps = 0;
    bool uniform = true;           ///< every layer and phase at one width
    node::TensorPrecision widths;  ///< that width if uniform, else the segment's defaults (before overrides)
    std::uint64_t step_cycles = 0;
    double step_energy_pj = 0;
};

/// A whole training run: workload.steps steps, in the segments of precision.schedule.
struct WholeRunResult {
    std::vector<RunSegment> segments;
    std::uint64_t total_cycles = 0;  ///< sum of steps x step_cycles
    double total_energy_pj = 0;
    std::size_t distinct_steps = 0;  ///< training steps simulated
};

/// The whole run of `params`, given step 0's result: each segment whose per-layer precision
/// no earlier segment has is simulated once. Throws UserError naming workload.steps if the
/// run's cycles exceed 64 bits.
WholeRunResult run_whole_training(const config::Params& params, const TrainingStepResult& first_step,
                                  const WorkProgress& progress = {});

/// run_whole_training when the run has more than one step (workload.steps) or precision
/// (precision.schedule); nothing for a run of one step.
std::optional<WholeRunResult> whole_training_if_any(const config::Params& params, const TrainingStepResult& first_step,
                                                    const WorkProgress& progress = {});

/// The energy of `counters` on a node of `arrays` arrays of `node` (each with `sram_kib` of
/// SRAM), leakage over counters.cycles.
energy::EnergyBreakdown counters_energy(const node::PhaseCounters& counters, const node::NodeParams& node,
                                        double sram_kib, std::uint64_t arrays, const energy::EnergyTable& table);

/// The energy of `counters` on the configured node with the configured table.
energy::EnergyBreakdown phase_energy(const config::Params& params, const node::PhaseCounters& counters);

/// The parts of `arrays` arrays of `node`, each with banks of `exponent_kib` and `mantissa_kib`,
/// under the BFP settings `bfp` (energy::area_of's input).
energy::NodeHardware node_hardware(const node::NodeParams& node, double exponent_kib, double mantissa_kib,
                                   std::uint64_t arrays, const config::BfpParams& bfp);

/// The configured node's area at energy.process_nm (the table's node if unset), or nullopt
/// when the energy table has no `area` section (docs/energy.md, "Area").
std::optional<energy::AreaBreakdown> node_area(const config::Params& params);

/// The area of `hardware` under `table` at `process_nm` (unset: the table's own node), or nullopt
/// when the table has no `area` section.
std::optional<energy::AreaBreakdown> hardware_area(const energy::EnergyTable& table, std::optional<double> process_nm,
                                                   const energy::NodeHardware& hardware);

/// One node of cluster node type `type` (its `arrays` arrays, each with the type's SRAM) under
/// the type's energy table, as node_area; nullopt without an `area` section.
std::optional<energy::AreaBreakdown> node_type_area(const config::Params& params, const config::NodeTypeParams& type);

/// Every node of the cluster, summed by component (links' SerDes and switches not counted;
/// docs/energy.md, "Area"); nullopt when a node type's table has no `area` section.
std::optional<energy::AreaBreakdown> cluster_area(const config::Params& params);

}  // namespace fastsim::run
