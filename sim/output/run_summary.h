// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "common/summary.h"
#include "config/params.h"
#include "run/cluster_step.h"
#include "run/training_step.h"

namespace fastsim::output {

/// What a paper quotes of a step: average power, efficiency and energy-delay product, and, when
/// the area is known, area and throughput per mm². An op is half a MAC (TOPS = 2 x MACs / s / 1e12).
struct Efficiency {
    double power_w = 0;                  ///< step energy / step time
    double tops_per_w = 0;               ///< 2 x MACs / energy in J / 1e12
    double edp_js = 0;                   ///< step energy (J) x step time (s)
    double energy_per_sample_uj = 0;     ///< step energy / batch
    std::optional<double> area;          ///< mm²
    std::optional<double> tops_per_mm2;  ///< 2 x MACs / step time / 1e12 / area
};
Efficiency efficiency(double macs, double seconds, double energy_pj, std::uint64_t batch, std::optional<double> area);

/// The summary fields of a node's area: the total, then area_<component>_mm2.
Summary area_summary(const energy::AreaBreakdown& area);

/// A training step's summary fields (kSummaryFields: cycles, time, MACs, energy, energy per MAC,
/// utilisation), then the cycle breakdown (node::kCycleParts), the DRAM traffic and
/// energy_<component>_uj, then power_w, tops_per_w, edp_js, energy_per_sample_uj and, when the
/// energy table has an area section, the area (total and area_<component>_mm2) and tops_per_mm2.
Summary training_step_summary(const config::Params& params, const run::TrainingStepResult& result);
/// A cluster step's summary fields (kSummaryFields: simulated and planned step, planned
/// communication, MACs, energy, energy per MAC), then energy_<component>_uj including links.
Summary cluster_step_summary(const run::ClusterStepResult& result);

}  // namespace fastsim::output
