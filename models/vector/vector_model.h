// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <iterator>

#include "common/counter_fields.h"

namespace fastsim::vector {

/// The node's vector unit (docs/vector_unit.md): `lanes` fp32 lanes beside the converter, each
/// issuing `ops_per_lane_per_cycle` operations per cycle (an add, multiply, compare, exp or
/// tanh each count one), pipelined with a fill latency.
struct VectorParams {
    int lanes = 16;
    int ops_per_lane_per_cycle = 1;
    int pipeline_latency_cycles = 4;

    /// The defaults for an array `array_cols` columns wide: one lane per column, so the unit
    /// takes a row of the array's outputs per cycle.
    static VectorParams derived_from(int array_cols);
    /// Operations issued per cycle: lanes x ops_per_lane_per_cycle.
    [[nodiscard]] std::uint64_t ops_per_cycle() const;
};

/// What the vector unit did: node::PhaseCounters holds one, energy charges its operations.
struct VectorUnitCounts {
    std::uint64_t ops = 0;  ///< operations issued
};

/// Every counter of VectorUnitCounts, in report order (common/counter_fields.h).
inline constexpr CounterField<VectorUnitCounts> kVectorUnitCountFields[] = {
    {&VectorUnitCounts::ops, {"vector_ops", "vector-unit ops", CounterKind::action, CounterShow::detail}},
};
static_assert(sizeof(VectorUnitCounts) == std::size(kVectorUnitCountFields) * sizeof(std::uint64_t),
              "every VectorUnitCounts member is in kVectorUnitCountFields");

/// Cycles of one job of `ops` operations: latency + ceil(ops / ops_per_cycle); 0 ops cost
/// nothing. Throws std::invalid_argument for lanes or ops per lane < 1 or a negative latency.
std::uint64_t job_cycles(const VectorParams& params, std::uint64_t ops);

}  // namespace fastsim::vector
