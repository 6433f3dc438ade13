// SPDX-License-Identifier: MIT
#include "array/systolic_array.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "bfp/dot.h"

namespace fastsim::array {

SystolicArray::SystolicArray(const sc_core::sc_module_name& name, const ArrayParams& params)
    : sc_core::sc_module(name), m_params(params) {
    const auto pes = static_cast<std::size_t>(params.geometry.rows) * static_cast<std::size_t>(params.geometry.cols);
    m_stationary_group.assign(pes, -1);
    m_stationary_chunks.assign(pes, nullptr);
    m_x_row.assign(pes, -1);
    m_x_row_next.assign(pes, -1);
    m_x_chunks.assign(pes, nullptr);
    m_x_chunks_next.assign(pes, nullptr);
    m_psum.assign(pes, 0.0f);
    m_psum_next.assign(pes, 0.0f);
    m_psum_out.assign(pes, 0.0f);
    SC_HAS_PROCESS(SystolicArray);
    SC_METHOD(step);
    sensitive << m_tick;
    dont_initialize();
}

void SystolicArray::start(const ArrayJob& job) {
    // Checked in every build: these are the callers' contract, not internal invariants.
    if (busy()) throw std::logic_error(std::string(name()) + ": start() while a job is running");
    const auto g = static_cast<std::size_t>(m_params.geometry.group_size);
    if (job.x->group_size() != g || job.y_transposed->group_size() != g)
        throw std::invalid_argument(std::string(name()) + ": operands must be grouped by the array's g = " + std::to_string(g));
    if (job.x->groups_per_row() != job.y_transposed->groups_per_row())
        throw std::invalid_argument(std::string(name()) + ": X and Y^T reduction lengths differ");
    // fmac::group_product_passes is exact up to 8-bit mantissas (docs/array.md).
    if (job.x->mantissa_bits() > 8 || job.y_transposed->mantissa_bits() > 8)
        throw std::invalid_argument(std::string(name()) + ": the fMAC array takes mantissas of at most 8 bits");
    m_job = job;
    m_rows_x = job.x->rows();
    m_cols_out = job.y_transposed->rows();
    m_groups = job.x->groups_per_row();
    if (!job.accumulate)
        m_job.out->assign(m_rows_x * m_cols_out, 0.0f);
    else if (job.out->size() != m_rows_x * m_cols_out)
        throw std::invalid_argument(std::string(name()) + ": an accumulating job needs m x n partial sums in out");
    m_passes = fmac::passes_per_group(job.x->mantissa_bits(), job.y_transposed->mantissa_bits());
    m_chunks_y = job.y_transposed->chunks_per_element();
    const auto rows = static_cast<std::size_t>(m_params.geometry.rows);
    const auto cols = static_cast<std::size_t>(m_params.geometry.cols);
    m_k_folds = (m_groups + rows - 1) / rows;
    m_n_folds = (m_cols_out + cols - 1) / cols;
    m_fold = 0;
    if (m_rows_x == 0 || m_groups == 0 || m_cols_out == 0) {
        m_phase = Phase::draining;  // nothing to compute: done in the next delta cycle
        m_tick.notify(sc_core::SC_ZERO_TIME);
        return;
    }
    begin_fold();
    m_tick.notify(sc_core::SC_ZERO_TIME);
}

void SystolicArray::begin_fold() {
    const auto rows = static_cast<std::size_t>(m_params.geometry.rows);
    const auto cols = static_cast<std::size_t>(m_params.geometry.cols);
    m_n_fold = m_fold / m_k_folds;
    m_k_fold = m_fold % m_k_folds;
    m_fold_rows = std::min(rows, m_groups - m_k_fold * rows);
    m_fold_cols = std::min(cols, m_cols_out - m_n_fold * cols);
    m_phase = Phase::load;
    m_load_row = 0;
    std::fill(m_stationary_group.begin(), m_stationary_group.end(), -1);
    std::fill(m_stationary_chunks.begin(), m_stationary_chunks.end(), nullptr);
    ++m_stats.counts.folds;
}

void SystolicArray::band(std::size_t r, std::ptrdiff_t& first, std::ptrdiff_t& last) const {
    // PE (r, c) holds X row step - r - c, valid when 0 <= step - r - c < rows of X.
    const auto lead = static_cast<std::ptrdiff_t>(m_step) - static_cast<std::ptrdiff_t>(r);
    last = std::min(lead, static_cast<std::ptrdiff_t>(m_fold_cols) - 1);
    first = std::max<std::ptrdiff_t>(0, lead - static_cast<std::ptrdiff_t>(m_rows_x) + 1);
}

void SystolicArray::load_row() {
    // (1) One array row of stationary groups per cycle, from the top.
    const auto cols = static_cast<std::size_t>(m_params.geometry.cols);
    const std::size_t r = m_load_row;
    for (std::size_t c = 0; c < m_fold_cols; ++c) {
        const std::size_t n = m_n_fold * cols + c;
        const std::size_t k_group = m_k_fold * static_cast<std::size_t>(m_params.geometry.rows) + r;
        const std::size_t group = n * m_groups + k_group;
        m_stationary_group[r * cols + c] = static_cast<std::int64_t>(group);
        m_stationary_chunks[r * cols + c] = m_job.y_transposed->group_chunks(group);
    }
    ++m_stats.counts.weight_load_cycles;
    if (++m_load_row == m_fold_rows) {
        // (2) Stream phase: empty pipeline but for X row 0 entering PE (0, 0) in step 0.
        m_phase = Phase::stream;
        m_step = 0;
        m_last_step = m_rows_x + m_fold_rows + m_fold_cols - 3;
        std::fill(m_x_row.begin(), m_x_row.end(), -1);
        std::fill(m_x_chunks.begin(), m_x_chunks.end(), nullptr);
        m_x_row[0] = 0;
        m_x_chunks[0] = m_job.x->group_chunks(m_k_fold * static_cast<std::size_t>(m_params.geometry.rows));
        m_psum[0] = entering_psum(0, m_n_fold * cols);
    }
}

void SystolicArray::compute_step() {
    // (3) Every PE holding an X row does the P chunk passes (i, j) of its group product, one
    // per cycle; nothing leaves a PE until the step ends, so the passes are evaluated
    // back to back here and the method sleeps for the step's P cycles.
    const auto cols = static_cast<std::size_t>(m_params.geometry.cols);
    const std::size_t blocks = m_job.x->lane_stride() / fmac::kLaneBlock;
    const std::size_t x_stride = m_job.x->lane_stride(), y_stride = m_job.y_transposed->lane_stride();
    const int chunks_x = m_job.x->chunks_per_element();
    const std::size_t k_base = m_k_fold * static_cast<std::size_t>(m_params.geometry.rows);
    const int lsb_offset = (m_job.x->mantissa_bits() - 1) + (m_job.y_transposed->mantissa_bits() - 1);
    const fmac::GroupProductKernel kernel = fmac::select_group_product_kernel(blocks, chunks_x, m_chunks_y);
    for (std::size_t r = 0; r < m_fold_rows; ++r) {
        std::ptrdiff_t first, last;
        band(r, first, last);
        for (std::ptrdiff_t c = first; c <= last; ++c) {
            const std::size_t pe = r * cols + static_cast<std::size_t>(c);
            const std::int64_t sum =
                kernel(m_x_chunks[pe], x_stride, chunks_x, m_stationary_chunks[pe], y_stride, m_chunks_y, blocks);
            // (4) The group product completes: normalise to fp32, add to the travelling psum.
            const std::size_t xg = static_cast<std::size_t>(m_x_row[pe]) * m_groups + k_base + r;
            const auto yg = static_cast<std::size_t>(m_stationary_group[pe]);
            float product;
            if (m_job.x->is_nan(xg) || m_job.y_transposed->is_nan(yg))
                product = std::numeric_limits<float>::quiet_NaN();
            else
                product = bfp::group_product_to_float(sum,
                                                      m_job.x->exponent(xg) + m_job.y_transposed->exponent(yg) - lsb_offset);
            m_psum_out[pe] = m_psum[pe] + product;
        }
        if (last >= first) {
            const auto active = static_cast<std::uint64_t>(last - first + 1);
            m_stats.counts.group_products += active;
            m_stats.counts.pe_passes += active * static_cast<std::uint64_t>(m_passes);
        }
    }
}

void SystolicArray::finish_step() {
    const auto cols = static_cast<std::size_t>(m_params.geometry.cols);
    const std::size_t k_base = m_k_fold * static_cast<std::size_t>(m_params.geometry.rows);
    // (5) Outputs leave the bottom row of the fold into the output buffer.
    for (std::size_t c = 0; c < m_fold_cols; ++c) {
        const std::size_t pe = (m_fold_rows - 1) * cols + c;
        if (m_x_row[pe] >= 0)
            (*m_job.out)[static_cast<std::size_t>(m_x_row[pe]) * m_cols_out + m_n_fold * cols + c] =
                bfp::canonical_nan(m_psum_out[pe]);
    }
    // (6) Shift: X rows move right, psums move down; new rows and psums enter at the edges.
    const auto next_step = static_cast<std::int64_t>(m_step + 1);
    for (std::size_t r = 0; r < m_fold_rows; ++r) {
        for (std::size_t c = 0; c < m_fold_cols; ++c) {
            const std::size_t pe = r * cols + c;
            std::int64_t row;
            const std::int16_t* chunks = nullptr;
            if (c > 0) {
                row = m_x_row[pe - 1];
                chunks = m_x_chunks[pe - 1];
            } else {
                row = next_step - static_cast<std::int64_t>(r);
                if (row >= 0 && row < static_cast<std::int64_t>(m_rows_x))
                    chunks = m_job.x->group_chunks(static_cast<std::size_t>(row) * m_groups + k_base + r);
                else
                    row = -1;
            }
            m_x_row_next[pe] = row;
            m_x_chunks_next[pe] = chunks;
            if (r > 0)
                m_psum_next[pe] = m_psum_out[pe - cols];
            else if (row >= 0)
                m_psum_next[pe] = entering_psum(static_cast<std::size_t>(row), m_n_fold * cols + c);
        }
    }
    m_x_row.swap(m_x_row_next);
    m_x_chunks.swap(m_x_chunks_next);
    m_psum.swap(m_psum_next);
}

void SystolicArray::step() {
    if (m_phase == Phase::draining) {
        // The last step's P cycles have passed: the job is over at this instant. Immediate
        // notification: busy() and done() change together, and no notification is left
        // pending for a job started right after this one.
        m_phase = Phase::idle;
        m_job = {};
        m_done.notify();
        return;
    }
    if (m_phase == Phase::load) {
        ++m_stats.busy_cycles;
        load_row();
        m_tick.notify(m_params.clock_period);
        return;
    }
    const sc_core::sc_time step_time = m_params.clock_period * static_cast<double>(m_passes);
    m_stats.busy_cycles += static_cast<std::uint64_t>(m_passes);
    compute_step();
    finish_step();
    if (m_step++ == m_last_step) {
        if (++m_fold == m_k_folds * m_n_folds)
            m_phase = Phase::draining;  // busy() until done fires, after this step's cycles
        else
            begin_fold();
    }
    m_tick.notify(step_time);
}

}  // namespace fastsim::array
