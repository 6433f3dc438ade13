// SPDX-License-Identifier: MIT
#include "vector/vector_model.h"

#include <stdexcept>

#include "common/checked.h"

namespace fastsim::vector {

VectorParams VectorParams::derived_from(int array_cols) {
    VectorParams p;
    p.lanes = array_cols;
    return p;
}

std::uint64_t VectorParams::ops_per_cycle() const {
    if (lanes < 1 || ops_per_lane_per_cycle < 1 || pipeline_latency_cycles < 0)
        throw std::invalid_argument("vector unit: lanes and ops per lane must be >= 1, the latency >= 0");
    return static_cast<std::uint64_t>(lanes) * static_cast<std::uint64_t>(ops_per_lane_per_cycle);
}

std::uint64_t job_cycles(const VectorParams& params, std::uint64_t ops) {
    const std::uint64_t per_cycle = params.ops_per_cycle();
    if (ops == 0) return 0;
    return checked_add(static_cast<std::uint64_t>(params.pipeline_latency_cycles), (ops - 1) / per_cycle + 1,
                       "vector unit cycles");
}

}  // namespace fastsim::vector
