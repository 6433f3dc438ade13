// SPDX-License-Identifier: MIT
#include "array/systolic_array.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "bfp/dot.h"

namespace fastsim::array {
namespace {

/// Every group's value at g = 1: its signed mantissa (chunk i weighing 4^i) times
/// 2^(exponent - (m - 1)), exact in a double; NaN for a NaN group.
std::vector<double> scalar_values(const fmac::ChunkPlanes& planes) {
    const std::size_t groups = planes.rows() * planes.groups_per_row();
    std::vector<double> values(groups);
    for (std::size_t q = 0; q < groups; ++q) {
        if (planes.is_nan(q)) {
            values[q] = std::numeric_limits<double>::quiet_NaN();
            continue;
        }
        std::int64_t mantissa = 0;
        const std::int16_t* chunk = planes.group_chunks(q);
        for (int i = planes.chunks_per_element() - 1; i >= 0; --i)
            mantissa = mantissa * 4 + chunk[static_cast<std::size_t>(i) * planes.lane_stride()];
        values[q] = std::ldexp(static_cast<double>(mantissa), planes.exponent(q) - (planes.mantissa_bits() - 1));
    }
    return values;
}

/// The g = 1 group product of two group values: exact in a double, then rounded once to fp32,
/// which is group_product_to_float's result. A zero product is +0.0 there (an integer sum of
/// 0), so -0.0 becomes +0.0.
inline float scalar_product(double a, double b) { return static_cast<float>(a * b + 0.0); }

}  // namespace

SystolicArray::SystolicArray(const sc_core::sc_module_name& name, const ArrayParams& params)
    : sc_core::sc_module(name), m_params(params) {
    const auto pes = static_cast<std::size_t>(params.geometry.rows) * static_cast<std::size_t>(params.geometry.cols);
    m_held_group.assign(pes, -1);
    m_held_values.assign(pes, 0.0);
    m_sums.assign(pes, 0.0f);
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
        throw std::invalid_argument(std::string(name()) +
                                    ": operands must be grouped by the array's g = " + std::to_string(g));
    if (job.x->groups_per_row() != job.y_transposed->groups_per_row())
        throw std::invalid_argument(std::string(name()) + ": X and Y^T reduction lengths differ");
    // fmac::group_product_passes is exact up to 8-bit mantissas (docs/array.md).
    if (job.x->mantissa_bits() > 8 || job.y_transposed->mantissa_bits() > 8)
        throw std::invalid_argument(std::string(name()) + ": the fMAC array takes mantissas of at most 8 bits");
    const std::size_t m = job.x->rows(), n = job.y_transposed->rows();
    if (job.accumulate && job.out->size() != m * n)
        throw std::invalid_argument(std::string(name()) + ": an accumulating job needs m x n partial sums in out");
    m_job = job;
    if (!job.accumulate) m_job.out->assign(m * n, 0.0f);
    const bool input_stationary = job.dataflow == fmac::Dataflow::input_stationary;
    m_a = input_stationary ? job.y_transposed : job.x;
    m_b = input_stationary ? job.x : job.y_transposed;
    m_a_rows = m_a->rows();
    m_b_rows = m_b->rows();
    m_out_stride_a = input_stationary ? 1 : n;
    m_out_stride_b = input_stationary ? n : 1;
    m_groups = job.x->groups_per_row();
    m_passes = fmac::passes_per_group(job.x->mantissa_bits(), job.y_transposed->mantissa_bits());
    m_lsb_offset = (job.x->mantissa_bits() - 1) + (job.y_transposed->mantissa_bits() - 1);
    m_kernel = fmac::select_group_product_kernel(m_a->lane_stride() / fmac::kLaneBlock, m_a->chunks_per_element(),
                                                 m_b->chunks_per_element());
    const fmac::FoldMapping folds =
        fmac::fold_mapping({job.x->rows(), m_groups * g, n}, m_params.geometry, job.dataflow);
    m_row_folds = folds.row_folds;
    m_col_folds = folds.col_folds;
    m_fold = 0;
    if (m * m_groups * n == 0) {
        m_phase = Phase::finishing;  // nothing to compute: done in the next delta cycle
        m_tick.notify(sc_core::SC_ZERO_TIME);
        return;
    }
    if (g == 1) {
        m_a_values = scalar_values(*m_a);
        m_b_values = scalar_values(*m_b);
    }
    begin_fold();
    m_tick.notify(sc_core::SC_ZERO_TIME);
}

void SystolicArray::begin_fold() {
    const auto rows = static_cast<std::size_t>(m_params.geometry.rows);
    const auto cols = static_cast<std::size_t>(m_params.geometry.cols);
    m_col_fold = m_fold / m_row_folds;
    m_row_fold = m_fold % m_row_folds;
    const std::size_t row_dim = m_job.dataflow == fmac::Dataflow::output_stationary ? m_a_rows : m_groups;
    m_fold_rows = std::min(rows, row_dim - m_row_fold * rows);
    m_fold_cols = std::min(cols, m_b_rows - m_col_fold * cols);
    m_step = 0;
    ++m_stats.counts.folds;
    if (m_job.dataflow == fmac::Dataflow::output_stationary) {
        // The fold's outputs start from +0.0f or the partial sums in `out`; k-groups stream at once.
        m_phase = Phase::stream;
        m_last_step = m_groups + m_fold_rows + m_fold_cols - 3;
        for (std::size_t r = 0; r < m_fold_rows; ++r)
            for (std::size_t c = 0; c < m_fold_cols; ++c)
                m_sums[r * cols + c] = start_value(out_index(m_row_fold * rows + r, m_col_fold * cols + c));
        return;
    }
    m_phase = Phase::load;
    m_transfer_row = 0;
    m_last_step = m_a_rows + m_fold_rows + m_fold_cols - 3;
}

void SystolicArray::band(std::size_t r, std::size_t length, std::ptrdiff_t& first, std::ptrdiff_t& last) const {
    const auto lead = static_cast<std::ptrdiff_t>(m_step) - static_cast<std::ptrdiff_t>(r);
    last = std::min(lead, static_cast<std::ptrdiff_t>(m_fold_cols) - 1);
    first = std::max<std::ptrdiff_t>(0, lead - static_cast<std::ptrdiff_t>(length) + 1);
}

void SystolicArray::load_row() {
    // ws, is: one array row of held groups per cycle, from the top.
    const auto cols = static_cast<std::size_t>(m_params.geometry.cols);
    const std::size_t r = m_transfer_row;
    const std::size_t k_group = m_row_fold * static_cast<std::size_t>(m_params.geometry.rows) + r;
    for (std::size_t c = 0; c < m_fold_cols; ++c) {
        const std::size_t group = (m_col_fold * cols + c) * m_groups + k_group;
        m_held_group[r * cols + c] = static_cast<std::int64_t>(group);
        if (!m_b_values.empty()) m_held_values[r * cols + c] = m_b_values[group];
    }
    ++m_stats.counts.stationary_cycles;
    if (++m_transfer_row < m_fold_rows) return;
    m_phase = Phase::stream;
    if (m_a_values.empty()) return;
    // The A values the fold streams, array row by array row.
    m_fold_a_values.resize(m_fold_rows * m_a_rows);
    const std::size_t k_base = m_row_fold * static_cast<std::size_t>(m_params.geometry.rows);
    for (std::size_t i = 0; i < m_a_rows; ++i)
        for (std::size_t q = 0; q < m_fold_rows; ++q)
            m_fold_a_values[q * m_a_rows + i] = m_a_values[i * m_groups + k_base + q];
}

void SystolicArray::unload_row() {
    // os: the outputs drain down and out, one array row per cycle, the bottom row first.
    const auto cols = static_cast<std::size_t>(m_params.geometry.cols);
    const std::size_t r = m_fold_rows - 1 - m_transfer_row;
    for (std::size_t c = 0; c < m_fold_cols; ++c)
        (*m_job.out)[out_index(m_row_fold * static_cast<std::size_t>(m_params.geometry.rows) + r,
                               m_col_fold * cols + c)] = bfp::canonical_nan(m_sums[r * cols + c]);
    ++m_stats.counts.stationary_cycles;
    ++m_transfer_row;
}

template <bool Scalar>
float SystolicArray::group_product(std::size_t a, std::size_t b) const {
    if constexpr (Scalar) {
        return scalar_product(m_a_values[a], m_b_values[b]);
    } else {
        if (m_a->is_nan(a) || m_b->is_nan(b)) return std::numeric_limits<float>::quiet_NaN();
        const std::int64_t sum =
            m_kernel(m_a->group_chunks(a), m_a->lane_stride(), m_a->chunks_per_element(), m_b->group_chunks(b),
                     m_b->lane_stride(), m_b->chunks_per_element(), m_a->lane_stride() / fmac::kLaneBlock);
        return bfp::group_product_to_float(sum, m_a->exponent(a) + m_b->exponent(b) - m_lsb_offset);
    }
}

template <bool Scalar>
void SystolicArray::stream_step() {
    // ws, is: every PE holding an A row does the P chunk passes of its group product, one per
    // cycle, and adds the product to the partial sum of that row moving down its column; the
    // sum enters row 0 at its start value and leaves row r_f - 1 into the output.
    const auto cols = static_cast<std::size_t>(m_params.geometry.cols);
    const std::size_t k_base = m_row_fold * static_cast<std::size_t>(m_params.geometry.rows);
    const std::size_t col_base = m_col_fold * cols;
    std::uint64_t active = 0;
    for (std::size_t r = 0; r < m_fold_rows; ++r) {
        std::ptrdiff_t first_col, last_col;
        band(r, m_a_rows, first_col, last_col);
        if (last_col < first_col) continue;
        const auto first = static_cast<std::size_t>(first_col), last = static_cast<std::size_t>(last_col);
        active += last - first + 1;
        // PE (r, c) holds A row lead - c, whose sum is in slot (lead mod r_f) for every c.
        const std::size_t lead = m_step - r;
        float* sums = &m_sums[(lead % m_fold_rows) * cols];
        if (r == 0)
            for (std::size_t c = first; c <= last; ++c) sums[c] = start_value(out_index(lead - c, col_base + c));
        if constexpr (Scalar) {
            const double* a = &m_fold_a_values[r * m_a_rows];
            const double* held = &m_held_values[r * cols];
            for (std::size_t c = first; c <= last; ++c) sums[c] += scalar_product(a[lead - c], held[c]);
        } else {
            for (std::size_t c = first; c <= last; ++c)
                sums[c] += group_product<false>((lead - c) * m_groups + k_base + r,
                                                static_cast<std::size_t>(m_held_group[r * cols + c]));
        }
        if (r + 1 == m_fold_rows)
            for (std::size_t c = first; c <= last; ++c)
                (*m_job.out)[out_index(lead - c, col_base + c)] = bfp::canonical_nan(sums[c]);
    }
    m_stats.counts.group_products += active;
    m_stats.counts.pe_passes += active * static_cast<std::uint64_t>(m_passes);
}

template <bool Scalar>
void SystolicArray::output_stationary_step() {
    // os: PE (r, c) multiplies k-group s - r - c of A row r and B row c, which arrive from the
    // left and from the top, and adds the product to the output it holds.
    const auto cols = static_cast<std::size_t>(m_params.geometry.cols);
    const std::size_t a_base = m_row_fold * static_cast<std::size_t>(m_params.geometry.rows);
    const std::size_t b_base = m_col_fold * cols;
    std::uint64_t active = 0;
    for (std::size_t r = 0; r < m_fold_rows; ++r) {
        std::ptrdiff_t first, last;
        band(r, m_groups, first, last);
        if (last < first) continue;
        active += static_cast<std::uint64_t>(last - first + 1);
        auto k_group = static_cast<std::size_t>(static_cast<std::ptrdiff_t>(m_step - r) - first);
        const std::size_t a_group0 = (a_base + r) * m_groups;
        for (auto c = static_cast<std::size_t>(first); c <= static_cast<std::size_t>(last); ++c, --k_group)
            m_sums[r * cols + c] += group_product<Scalar>(a_group0 + k_group, (b_base + c) * m_groups + k_group);
    }
    m_stats.counts.group_products += active;
    m_stats.counts.pe_passes += active * static_cast<std::uint64_t>(m_passes);
}

void SystolicArray::step() {
    if (m_phase == Phase::finishing) {
        // The last cycles have passed: the job is over at this instant. Immediate
        // notification: busy() and done() change together, and no notification is left
        // pending for a job started right after this one.
        m_phase = Phase::idle;
        m_job = {};
        m_a_values.clear();
        m_b_values.clear();
        m_done.notify();
        return;
    }
    const auto next_fold = [this] {
        if (++m_fold == m_row_folds * m_col_folds)
            m_phase = Phase::finishing;  // busy() until done fires, after this cycle or step
        else
            begin_fold();
    };
    if (m_phase == Phase::load || m_phase == Phase::unload) {
        ++m_stats.busy_cycles;
        if (m_phase == Phase::load) {
            load_row();
        } else {
            unload_row();
            if (m_transfer_row == m_fold_rows) next_fold();
        }
        m_tick.notify(m_params.clock_period);
        return;
    }
    const sc_core::sc_time step_time = m_params.clock_period * static_cast<double>(m_passes);
    m_stats.busy_cycles += static_cast<std::uint64_t>(m_passes);
    const bool scalar = !m_a_values.empty();
    if (m_job.dataflow == fmac::Dataflow::output_stationary)
        scalar ? output_stationary_step<true>() : output_stationary_step<false>();
    else
        scalar ? stream_step<true>() : stream_step<false>();
    if (m_step++ == m_last_step) {
        if (m_job.dataflow == fmac::Dataflow::output_stationary) {
            m_phase = Phase::unload;
            m_transfer_row = 0;
        } else {
            next_fold();
        }
    }
    m_tick.notify(step_time);
}

}  // namespace fastsim::array
