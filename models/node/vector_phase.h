// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>

#include "bfp/format.h"
#include "converter/converter_model.h"
#include "memory/memory.h"
#include "node/node_model.h"
#include "node/phase_counters.h"
#include "workload/vector_work.h"

namespace fastsim::node {

/// One phase of a vector-unit layer as the node runs it (docs/vector_unit.md): its BFP
/// operands stream in from DRAM, the vector unit works on them, and its result is converted
/// to BFP (grouped along rows and along columns, as a GEMM's output) and written back.
struct VectorJob {
    workload::VectorWork work;
    int activation_bits = 8;  ///< mantissa width of the activation tensors read
    int gradient_bits = 8;    ///< mantissa width of the gradient tensors read
    int output_bits = 8;      ///< mantissa width of the result
    bfp::Rounding output_rounding = bfp::Rounding::nearest;
    /// node.fusion: the result streams into the next layer's pass, so its BFP form is neither
    /// converted nor written to DRAM (fp32 writes stay).
    bool output_streamed = false;
    /// Multiply-accumulates the job does, counted in PhaseCounters::macs: a convolution's (a
    /// grouped one under node.lowering.depthwise vector); 0 for other vector work.
    std::uint64_t macs = 0;
};

/// The job in chunks: chunk i makes values [i * chunk_values, (i + 1) * chunk_values) of the
/// result, and takes the same share (rounded down at both ends, so shares add up exactly) of
/// the operations and of each operand tensor.
struct VectorPlan {
    std::uint64_t chunk_values = 0;
    std::uint64_t chunks = 0;
};

/// The largest multiple of g (at least g) of result values whose chunk, double-buffered, fits
/// both SRAM banks; no chunks for a job that writes nothing. Throws TilingError if one group
/// does not fit.
VectorPlan plan_vector_chunks(const VectorJob& job, const NodeParams& node);

/// Work and stage durations of one chunk, in cycles.
struct VectorChunkWork {
    std::uint64_t ops = 0;
    std::uint64_t load_cycles = 0;         ///< DMA read of the chunk's operands
    std::uint64_t compute_cycles = 0;      ///< vector::job_cycles of its ops
    converter::ConversionCost conversion;  ///< its result, converted twice
    std::uint64_t write_cycles = 0;        ///< DMA write of the result
    memory::Traffic traffic;               ///< operands through SRAM; DRAM read and write
};
VectorChunkWork vector_chunk_work(const VectorJob& job, const NodeParams& node, const VectorPlan& plan,
                                  std::uint64_t chunk);

/// Adds one chunk's work to the counters (everything but the pipeline's waits and cycles).
void add_chunk_counts(PhaseCounters& counters, const VectorChunkWork& work);

/// The chunks through the tile pipeline of docs/node.md ("Double buffering") with the vector
/// unit in the array's place: load i after chunk i-2's compute freed its buffer, compute
/// after load i and chunk i-1, conversion after compute, write-back of i-1 after load i. The
/// memoised fidelity; Node::run_vector_phase runs the same rules with events.
PhaseCounters run_vector_memo(const VectorJob& job, const NodeParams& node);

}  // namespace fastsim::node
