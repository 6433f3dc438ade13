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

/// One GEMM for the array, C = X * Y: X (m rows) streams in from the left, Y is held
/// stationary and given as its transpose (n rows); both are grouped along the reduction
/// dimension with the array's g. `out` (m x n, row-major) is overwritten, or with `accumulate`
/// it must already hold m x n partial sums, which enter the first k-fold in place of +0.0f
/// (a node chains k-tiles this way and stays bit-identical to one whole-K GEMM).
struct ArrayJob {
    const fmac::ChunkPlanes* x = nullptr;
    const fmac::ChunkPlanes* y_transposed = nullptr;
    std::vector<float>* out = nullptr;
    bool accumulate = false;
};

/// Counters of the array, incremented in the hot loop; energy is derived in the report.
struct ArrayStats {
    std::uint64_t busy_cycles = 0;  ///< cycles with a job in flight
    fmac::ArrayCounters counts;     ///< as the analytic formula counts them, one chunk pass per active PE per cycle
};

/// Weight-stationary R x C array of fMACs, modelled cycle by cycle (docs/array.md).
///
/// PE (r, c) of fold (n-fold, k-fold) holds stationary group (column n, k-group r). In step s
/// (P = (m_x/2)(m_y/2) cycles, one chunk pass per cycle) it multiplies X row s - r - c by its
/// group; X rows move right and partial sums move down one PE per step. A partial sum enters
/// row 0 as +0.0f (first k-fold) or the value the previous k-fold left in the output, and
/// leaves row r_f - 1 into the output: groups are added in increasing k order, exactly as
/// bfp::gemm does, so results are bit-identical. Folds run n-fold outer, k-fold inner.
///
/// One SC_METHOD steps flat per-PE registers (compute, then swap). It runs once per weight-load
/// cycle and once per step (P cycles: a PE's passes only touch its own accumulator, so they
/// are evaluated together), is re-armed while a job runs and sleeps otherwise. No per-PE
/// processes, no free-running clock.
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
    void compute_step();
    void finish_step();
    /// The partial sum that enters array row 0 with X row `row` for output column `col`.
    [[nodiscard]] float entering_psum(std::size_t row, std::size_t col) const {
        return m_k_fold == 0 && !m_job.accumulate ? 0.0f : (*m_job.out)[row * m_cols_out + col];
    }

    enum class Phase : std::uint8_t { idle, load, stream, draining };

    ArrayParams m_params;
    ArrayJob m_job;
    ArrayStats m_stats;
    sc_core::sc_event m_tick;
    sc_core::sc_event m_done;

    // Job geometry (set by start()).
    std::size_t m_rows_x = 0, m_cols_out = 0, m_groups = 0, m_k_folds = 0, m_n_folds = 0;
    int m_passes = 1, m_chunks_y = 1;

    // Fold state.
    Phase m_phase = Phase::idle;
    std::size_t m_fold = 0, m_n_fold = 0, m_k_fold = 0, m_fold_rows = 0, m_fold_cols = 0;
    std::size_t m_load_row = 0, m_step = 0, m_last_step = 0;

    /// Columns [first, last] of array row r that hold an X row in the current step (the
    /// wavefront band); empty when first > last.
    void band(std::size_t r, std::ptrdiff_t& first, std::ptrdiff_t& last) const;

    // Per-PE registers, index r * C + c; the *_next arrays are the swap targets.
    std::vector<std::int64_t> m_stationary_group;          ///< Y group held, or -1
    std::vector<const std::int16_t*> m_stationary_chunks;  ///< its chunk 0
    std::vector<std::int64_t> m_x_row, m_x_row_next;       ///< X row in the PE, or -1 (bubble)
    std::vector<const std::int16_t*> m_x_chunks, m_x_chunks_next;  ///< chunk 0 of that row's group
    std::vector<float> m_psum, m_psum_next;                ///< partial sum travelling with that row
    std::vector<float> m_psum_out;                         ///< psum + group product, at the end of a step
};

}  // namespace fastsim::array
