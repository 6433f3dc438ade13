// SPDX-License-Identifier: MIT
#include "vector/vector_unit.h"

#include <algorithm>
#include <stdexcept>

namespace fastsim::vector {

VectorUnit::VectorUnit(const sc_core::sc_module_name& name, const VectorParams& params,
                       const sc_core::sc_time& clock_period)
    : sc_core::sc_module(name), m_params(params), m_period(clock_period), m_ops_per_cycle(params.ops_per_cycle()) {
    SC_HAS_PROCESS(VectorUnit);
    SC_METHOD(step);
    sensitive << m_wake;
    dont_initialize();
}

void VectorUnit::start(std::uint64_t ops) {
    if (m_busy) throw std::logic_error(std::string(name()) + ": start while a job is running");
    if (ops == 0) {
        m_done.notify(sc_core::SC_ZERO_TIME);
        return;
    }
    m_busy = true;
    m_remaining = ops;
    m_draining = static_cast<std::uint64_t>(m_params.pipeline_latency_cycles);
    m_wake.notify(sc_core::SC_ZERO_TIME);
}

// Runs at the start of each busy cycle: issues that cycle's operations (or drains one cycle of
// latency) and wakes again one period later; the job is done at the end of its last cycle.
void VectorUnit::step() {
    if (m_remaining > 0) {
        const std::uint64_t issued = std::min(m_remaining, m_ops_per_cycle);
        m_remaining -= issued;
        m_stats.ops += issued;
    } else {
        --m_draining;
    }
    ++m_stats.busy_cycles;
    if (m_remaining == 0 && m_draining == 0) {
        m_busy = false;
        m_done.notify(m_period);
    } else {
        m_wake.notify(m_period);
    }
}

}  // namespace fastsim::vector
