// SPDX-License-Identifier: MIT
#pragma once

#include <systemc>

#include <cstdint>

#include "vector/vector_model.h"

namespace fastsim::vector {

/// Counters of the vector unit.
struct VectorUnitStats {
    std::uint64_t busy_cycles = 0;  ///< cycles with a job in flight, fill latency included
    std::uint64_t ops = 0;          ///< operations issued
};

/// The vector unit in SystemC (fidelity stepped), cycle by cycle: each cycle it issues up to
/// lanes x ops_per_lane_per_cycle of the job's operations; after the last issue the pipeline
/// drains for its fill latency. One SC_METHOD, re-armed every cycle while a job runs, asleep
/// otherwise. Must take job_cycles(params, ops) for every job (tested).
class VectorUnit : public sc_core::sc_module {
public:
    VectorUnit(const sc_core::sc_module_name& name, const VectorParams& params,
               const sc_core::sc_time& clock_period = sc_core::sc_time(1, sc_core::SC_NS));

    /// Starts a job of `ops` operations now; done() fires when it has left the pipeline (at
    /// once, in the next delta cycle, for 0 ops). Throws std::logic_error if busy.
    void start(std::uint64_t ops);
    [[nodiscard]] const sc_core::sc_event& done() const { return m_done; }
    [[nodiscard]] bool busy() const { return m_busy; }
    [[nodiscard]] const VectorUnitStats& stats() const { return m_stats; }

private:
    void step();

    VectorParams m_params;
    sc_core::sc_time m_period;
    std::uint64_t m_ops_per_cycle = 1;
    std::uint64_t m_remaining = 0;  ///< operations not yet issued
    std::uint64_t m_draining = 0;   ///< latency cycles left after the last issue
    bool m_busy = false;
    sc_core::sc_event m_wake, m_done;
    VectorUnitStats m_stats;
};

}  // namespace fastsim::vector
