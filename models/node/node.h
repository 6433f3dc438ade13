// SPDX-License-Identifier: MIT
#pragma once

#include <systemc>

#include <vector>

#include "array/systolic_array.h"
#include "bfp/dot.h"
#include "node/node_model.h"
#include "node/vector_phase.h"
#include "vector/vector_unit.h"

namespace fastsim::node {

/// A FAST node in SystemC (fidelity stepped): a DMA engine, the cycle-stepped fMAC array, the
/// cycle-stepped vector unit and the BFP converter, each its own thread, following the tile pipeline of docs/node.md with
/// real operands. Time is counted in cycles: one cycle is 1 ns of SystemC time whatever the
/// clock (the report converts with clock_hz), so no clock period is ever rounded.
class Node : public sc_core::sc_module {
public:
    Node(const sc_core::sc_module_name& name, const NodeParams& params);

    /// Runs one phase on data and returns its counters; call from an SC_THREAD (it blocks
    /// for the phase's simulated time). `x` (m rows) and `y_transposed` (n rows) are grouped
    /// along k with the node's g and carry job.x/y_mantissa_bits; `out` becomes the m x n
    /// fp32 result, bit-identical to bfp::gemm(x, y_transposed). With `stages`, also appends
    /// every tile stage's timing, the same as run_phase_memo's (tile_stage_log.h).
    PhaseCounters run_phase(const PhaseJob& job, const bfp::BfpMatrix& x, const bfp::BfpMatrix& y_transposed,
                            std::vector<float>& out, TileStageLog* stages = nullptr);

    /// Runs one phase of a vector-unit layer and returns its counters; call from an SC_THREAD.
    /// The DMA, the vector unit and the converter follow the pipeline of run_vector_memo,
    /// with events, and must give its counters.
    PhaseCounters run_vector_phase(const VectorJob& job);

    [[nodiscard]] const NodeParams& params() const { return m_params; }

private:
    NodeParams m_params;
    array::SystolicArray m_array;
    vector::VectorUnit m_vector_unit;
};

/// Rows [row0, row0 + rows) and groups [group0, group0 + groups) of a BFP matrix.
bfp::BfpMatrix slice(const bfp::BfpMatrix& matrix, std::size_t row0, std::size_t rows, std::size_t group0,
                     std::size_t groups);

}  // namespace fastsim::node
