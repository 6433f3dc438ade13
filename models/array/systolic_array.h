// SPDX-License-Identifier: MIT
#pragma once

#include <systemc>

#include <cstdint>
#include <vector>

#include "fmac/chunk_planes.h"
#include "fmac/timing.h"

namespace fastsim::array {

/// Resolved parameters of one fMAC array.
struct ArrayParams {
    fmac::ArrayGeometry geometry;
    sc_core::sc_time clock_period{1, sc_core::SC_NS};  ///< one array cycle
};

/// One GEMM for the array, C = X * Y, with X given as its m rows and Y as its transpose (n
/// rows), both grouped along the reduction dimension with the array's g, run in `dataflow`
/// (fmac::Dataflow). `out` (m x n, row-major) is overwritten, or with `accumulate` it must
/// already hold m x n partial sums, which start each output's sum in place of +0.0f (a node
/// chains k-tiles this way and stays bit-identical to one whole-K GEMM).
struct ArrayJob {
    const fmac::ChunkPlanes* x = nullptr;
    const fmac::ChunkPlanes* y_transposed = nullptr;
    std::vector<float>* out = nullptr;
    bool accumulate = false;
    fmac::Dataflow dataflow = fmac::Dataflow::weight_stationary;
};

/// Counters of the array, incremented in the hot loop; energy is derived in the report.
struct ArrayStats {
    std::uint64_t busy_cycles = 0;  ///< cycles with a job in flight
    fmac::ArrayCounters counts;     ///< as the analytic formula counts them, one chunk pass per active PE per cycle
};

/// R x C array of fMACs in any of the three dataflows, modelled step by step (docs/array.md).
///
/// Two operands meet in the array: A, whose rows enter at the left edge (ws: X, is: Y^T,
/// os: X), and B (ws: Y^T, is: X, held in the PEs; os: Y^T, entering at the top). In step s
/// (P = (m_x/2)(m_y/2) cycles, one chunk pass per cycle) PE (r, c) of a fold works on
/// wavefront position s - r - c: in ws and is the A row of that index against its held B group
/// (B row c, k-group r), the partial sum then moving down; in os k-group s - r - c of A row r
/// and B row c, added to the output the PE holds. Every output's groups are added in
/// increasing k order starting from +0.0f (or the value in `out`), exactly as bfp::gemm
/// does, so results are bit-identical. Folds run column fold outer, row fold inner.
///
/// One SC_METHOD runs once per stationary load or drain cycle (one array row per cycle) and
/// once per step (P cycles: a PE's passes only touch its own accumulator, so they are
/// evaluated together), visiting only the PEs of the wavefront band. It is re-armed while a
/// job runs and sleeps otherwise: no per-PE processes, no free-running clock.
class SystolicArray : public sc_core::sc_module {
public:
    SystolicArray(const sc_core::sc_module_name& name, const ArrayParams& params);

    /// Starts `job` at the current time; done() fires when its last output has drained, and
    /// busy() stays true until then. Throws std::logic_error if busy, std::invalid_argument if
    /// the operands are not grouped by the array's g, disagree in length, or exceed 8 bits.
    void start(const ArrayJob& job);
    [[nodiscard]] const sc_core::sc_event& done() const { return m_done; }
    [[nodiscard]] bool busy() const { return m_job.out != nullptr; }
    [[nodiscard]] const ArrayStats& stats() const { return m_stats; }
    [[nodiscard]] const ArrayParams& params() const { return m_params; }

private:
    void step();
    void begin_fold();
    void load_row();
    void unload_row();
    template <bool Scalar>
    void stream_step();
    template <bool Scalar>
    void output_stationary_step();
    /// Group product of A group `a` and B group `b`, rounded once to fp32 (bfp::gemm's term).
    template <bool Scalar>
    float group_product(std::size_t a, std::size_t b) const;
    /// Where output (A row, B row) is in `out`.
    [[nodiscard]] std::size_t out_index(std::size_t a_row, std::size_t b_row) const {
        return a_row * m_out_stride_a + b_row * m_out_stride_b;
    }
    /// The value an output's sum starts from: +0.0f, or what `out` holds when the job
    /// accumulates or an earlier row fold (k-fold) left it there.
    [[nodiscard]] float start_value(std::size_t index) const {
        const bool earlier_k_fold = m_job.dataflow != fmac::Dataflow::output_stationary && m_row_fold > 0;
        return m_job.accumulate || earlier_k_fold ? (*m_job.out)[index] : 0.0f;
    }
    /// Columns [first, last] of array row r whose wavefront position s - r - c lies in
    /// [0, length) this step; empty when first > last.
    void band(std::size_t r, std::size_t length, std::ptrdiff_t& first, std::ptrdiff_t& last) const;

    enum class Phase : std::uint8_t { idle, load, stream, unload, finishing };

    ArrayParams m_params;
    ArrayJob m_job;
    ArrayStats m_stats;
    sc_core::sc_event m_tick;
    sc_core::sc_event m_done;

    // Job geometry (set by start()).
    const fmac::ChunkPlanes* m_a = nullptr;  ///< enters at the left edge
    const fmac::ChunkPlanes* m_b = nullptr;  ///< held (ws, is) or entering at the top (os)
    std::size_t m_a_rows = 0, m_b_rows = 0, m_groups = 0, m_out_stride_a = 0, m_out_stride_b = 0;
    std::size_t m_row_folds = 0, m_col_folds = 0;
    int m_passes = 1, m_lsb_offset = 0;
    fmac::GroupProductKernel m_kernel = nullptr;
    /// g = 1: each group's single value, mantissa * 2^(exponent - (m - 1)) (NaN for a NaN
    /// group), so a group product is one exact double product (bfp::group_product_to_float).
    std::vector<double> m_a_values, m_b_values;
    /// g = 1, ws and is: the fold's A values by array row (its k-group), then A row, so a
    /// wavefront reads them contiguously.
    std::vector<double> m_fold_a_values;

    // Fold state: rows of the fold hold k-groups (ws, is) or A rows (os), columns B rows.
    Phase m_phase = Phase::idle;
    std::size_t m_fold = 0, m_col_fold = 0, m_row_fold = 0, m_fold_rows = 0, m_fold_cols = 0;
    /// The array row being loaded (ws, is) or drained (os); the step within the fold.
    std::size_t m_transfer_row = 0, m_step = 0, m_last_step = 0;

    // Per-PE registers, index r * C + c.
    std::vector<std::int64_t> m_held_group;  ///< ws, is: B group held
    std::vector<double> m_held_values;       ///< ws, is at g = 1: that group's value
    /// ws, is: the partial sums moving down, each stored where it stays while it travels:
    /// column c's sum for A row i in slot ((i + c) mod r_f) * C + c. The r_f sums in flight in
    /// a column have distinct slots, the PEs of array row r all use slot (s - r) mod r_f in step
    /// s, and no sum is copied from PE to PE. os: the output each PE holds.
    std::vector<float> m_sums;
};

}  // namespace fastsim::array
