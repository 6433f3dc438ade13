// SPDX-License-Identifier: MIT
#include "scalesim/scalesim.h"

#include <algorithm>
#include <functional>

#include "common/errors.h"
#include "scalesim/scalesim_buffers.h"

namespace fastsim::scalesim {

std::int64_t ofmap_height(const Layer& l) {
    return (l.ifmap_height - l.filter_height + l.stride_height + l.stride_height - 1) / l.stride_height;
}
std::int64_t ofmap_width(const Layer& l) {
    return (l.ifmap_width - l.filter_width + l.stride_width + l.stride_width - 1) / l.stride_width;
}

namespace {

/// The word addresses of SCALE-Sim's operand matrices (scalesim/compute/operand_matrix.py),
/// without its offsets: ifmap[pixel][window element] (-1 where a partial window leaves the
/// input), filter[window element][filter], ofmap[pixel][filter].
struct Operands {
    explicit Operands(const Layer& l)
        : layer(l), out_width(ofmap_width(l)), pixels(ofmap_height(l) * ofmap_width(l)),
          window(l.filter_height * l.filter_width * l.channels), filters(l.filters) {}

    std::int64_t ifmap(std::int64_t pixel, std::int64_t element) const {
        const std::int64_t in_row = pixel / out_width * layer.stride_height;
        const std::int64_t in_col = pixel % out_width * layer.stride_width;
        const std::int64_t filter_row = element / (layer.filter_width * layer.channels);
        const std::int64_t rest = element % (layer.filter_width * layer.channels);
        const std::int64_t filter_col = rest / layer.channels;
        if (filter_row + in_row >= layer.ifmap_height || filter_col + in_col >= layer.ifmap_width) return -1;
        return ((in_row + filter_row) * layer.ifmap_width + in_col + filter_col) * layer.channels + rest % layer.channels;
    }
    std::int64_t filter(std::int64_t element, std::int64_t f) const { return f * window + element; }
    std::int64_t ofmap(std::int64_t pixel, std::int64_t f) const { return filters * pixel + f; }
    std::int64_t ifmap_words() const { return layer.ifmap_height * layer.ifmap_width * layer.channels; }
    std::int64_t filter_words() const { return window * filters; }

    const Layer& layer;
    std::int64_t out_width, pixels, window, filters;
};

/// One operand's demand matrix for one fold, as systolic_compute_{ws,os,is}.py builds it:
/// `prefix` empty lines, `rows` lines of `data(row, column)` (-1 = no request), `suffix` empty
/// lines, each `width` wide, then optionally skewed (column c delayed by c lines).
struct FoldStream {
    std::int64_t width, prefix, rows, suffix;
    bool skewed;
    std::function<std::int64_t(std::int64_t, std::int64_t)> data;

    std::int64_t lines() const { return prefix + rows + suffix + (skewed ? width - 1 : 0); }
    /// Calls `visit(address)` for each request of line `t`, in column order; returns their count.
    template <class Visit>
    std::int64_t for_each_request(std::int64_t t, Visit&& visit) const {
        std::int64_t first = 0, last = width;  // columns whose unskewed row holds data
        if (skewed) {
            first = std::max<std::int64_t>(0, t - prefix - rows + 1);
            last = std::min<std::int64_t>(width, t - prefix + 1);
        } else if (t < prefix || t >= prefix + rows) {
            return 0;
        }
        std::int64_t n = 0;
        for (std::int64_t c = first; c < last; ++c) {
            const std::int64_t a = data(skewed ? t - c - prefix : t - prefix, c);
            if (a < 0) continue;
            visit(a);
            ++n;
        }
        return n;
    }
};

struct Fold {
    FoldStream ifmap, filter, ofmap;
    std::int64_t ifmap_reads, filter_reads, ofmap_writes;  ///< SRAM counts as SCALE-Sim adds them
    std::int64_t used_macs, cycles;                        ///< for mapping efficiency and compute utilisation
};

/// Fold (fr, fc) of `df`: rows fr of the stationary/spatial row dimension Sr, columns fc of Sc.
Fold make_fold(Dataflow df, const Operands& op, std::int64_t R, std::int64_t C, std::int64_t fr, std::int64_t fc,
               std::int64_t Sr, std::int64_t Sc, std::int64_t T) {
    const std::int64_t r0 = fr * R, c0 = fc * C;
    const std::int64_t ru = std::min(R, Sr - r0), cu = std::min(C, Sc - c0);
    const auto flipped_row = [=](std::int64_t k) { return R - 1 - k; };  // np.flip(..., 0)
    Fold f;
    f.used_macs = ru * cu;
    switch (df) {
        case Dataflow::ws:  // Sr = window, Sc = filters, T = pixels; filters stay
            f.ifmap = {R, R, T, C - 1, true, [&op, r0, ru](auto t, auto c) { return c < ru ? op.ifmap(t, r0 + c) : -1; }};
            f.filter = {C, 0, R, R + C + T - 2, false, [&op, r0, c0, ru, cu, flipped_row](auto k, auto c) {
                            const auto r = flipped_row(k);
                            return r < ru && c < cu ? op.filter(r0 + r, c0 + c) : -1;
                        }};
            f.ofmap = {C, 2 * R - 1, T, 0, true, [&op, c0, cu](auto t, auto c) { return c < cu ? op.ofmap(t, c0 + c) : -1; }};
            f.ifmap_reads = T * ru;
            f.filter_reads = ru * cu;
            f.ofmap_writes = T * cu;
            f.cycles = 2 * R + 2 * C + T - 3;
            break;
        case Dataflow::os:  // Sr = pixels, Sc = filters, T = window; outputs stay
            f.ifmap = {R, 0, T, C - 1, true, [&op, r0, ru](auto t, auto c) { return c < ru ? op.ifmap(r0 + c, t) : -1; }};
            f.filter = {C, 0, T, R - 1, true, [&op, c0, cu](auto t, auto c) { return c < cu ? op.filter(t, c0 + c) : -1; }};
            f.ofmap = {C, T - 1, R, 0, true, [&op, r0, c0, ru, cu, flipped_row](auto k, auto c) {
                           const auto r = flipped_row(k);
                           return r < ru && c < cu ? op.ofmap(r0 + r, c0 + c) : -1;
                       }};
            f.ifmap_reads = T * ru;
            f.filter_reads = T * cu;
            f.ofmap_writes = ru * cu + R + C;  // systolic_compute_os.py adds the padded fold's R + C
            f.cycles = T + R + C - 2;
            break;
        case Dataflow::is:  // Sr = window, Sc = pixels, T = filters; inputs stay
            f.ifmap = {C, 0, R, R + C + T - 2, false, [&op, r0, c0, ru, cu, flipped_row](auto k, auto c) {
                           const auto r = flipped_row(k);
                           return r < ru && c < cu ? op.ifmap(c0 + c, r0 + r) : -1;
                       }};
            f.filter = {R, R, T, C - 1, true, [&op, r0, ru](auto t, auto c) { return c < ru ? op.filter(r0 + c, t) : -1; }};
            f.ofmap = {C, 2 * R - 1, T, 0, true, [&op, c0, cu](auto t, auto c) { return c < cu ? op.ofmap(c0 + c, t) : -1; }};
            f.ifmap_reads = ru * cu;
            f.filter_reads = T * ru;
            f.ofmap_writes = T * cu;
            f.cycles = 2 * R + 2 * C + T - 3;
            break;
    }
    return f;
}

/// The first and last cycle at which a stream made a request (memory system trace scans).
struct Span {
    bool seen = false;
    std::int64_t first = 0, last = 0;
    void add(std::int64_t cycle) {
        if (!seen) first = cycle;
        seen = true;
        last = cycle;
    }
};

}  // namespace

LayerReport simulate_layer(const Architecture& arch, const Layer& layer) {
    if (arch.user_bandwidth)
        throw UserError("InterfaceBandwidth USER is not modelled yet: fastsim scalesim reproduces CALC mode (docs/scalesim.md)");
    const Operands op(layer);
    const std::int64_t R = arch.array_rows, C = arch.array_cols;
    std::int64_t Sr = op.window, Sc = op.filters, T = op.pixels;
    if (arch.dataflow == Dataflow::os) Sr = op.pixels, Sc = op.filters, T = op.window;
    if (arch.dataflow == Dataflow::is) Sr = op.window, Sc = op.pixels, T = op.filters;
    const std::int64_t row_folds = (Sr + R - 1) / R, col_folds = (Sc + C - 1) / C;

    // single_layer_sim.py, CALC mode: one-byte words, read buffers filled at 10 words per cycle,
    // the ofmap buffer drained one array row (ArrayWidth words) per cycle.
    WriteBuffer ofmap_buffer(arch.ofmap_sram_kb * 1024, C);
    ReadBuffer ifmap_buffer(arch.ifmap_sram_kb * 1024, op.ifmap_words());
    ReadBuffer filter_buffer(arch.filter_sram_kb * 1024, op.filter_words());

    LayerReport report;
    Span ifmap_span, filter_span, ofmap_span;
    double mapping_sum = 0, utilisation_sum = 0;
    std::int64_t line = 0, stalls = 0, last_ofmap_cycle = 0;
    for (std::int64_t fc = 0; fc < col_folds; ++fc) {
        for (std::int64_t fr = 0; fr < row_folds; ++fr) {
            const Fold fold = make_fold(arch.dataflow, op, R, C, fr, fc, Sr, Sc, T);
            report.ifmap_sram.count += fold.ifmap_reads;
            report.filter_sram.count += fold.filter_reads;
            report.ofmap_sram.count += fold.ofmap_writes;
            mapping_sum += double(fold.used_macs) / double(R * C);
            utilisation_sum += double(fold.used_macs * T) / double(R * C * fold.cycles);
            // double_buffered_scratchpad.service_memory_requests: one demand line per cycle,
            // delayed by the stalls so far; reads are serviced a cycle later (hit latency 1).
            const std::int64_t lines = fold.ofmap.lines();
            for (std::int64_t t = 0; t < lines; ++t, ++line) {
                const std::int64_t cycle = line + stalls;
                const bool ifmap_any = fold.ifmap.for_each_request(t, [](std::int64_t) {}) > 0;
                ifmap_buffer.begin_line(cycle, ifmap_any);
                if (ifmap_any) {
                    fold.ifmap.for_each_request(t, [&](std::int64_t a) { ifmap_buffer.read(a); });
                    ifmap_span.add(cycle + 1);
                }
                const bool filter_any = fold.filter.for_each_request(t, [](std::int64_t) {}) > 0;
                filter_buffer.begin_line(cycle, filter_any);
                if (filter_any) {
                    fold.filter.for_each_request(t, [&](std::int64_t a) { filter_buffer.read(a); });
                    filter_span.add(cycle + 1);
                }
                const std::int64_t writes = fold.ofmap.for_each_request(t, [](std::int64_t) {});
                last_ofmap_cycle = ofmap_buffer.write_line(cycle, writes);
                if (writes > 0) ofmap_span.add(last_ofmap_cycle);
                stalls += last_ofmap_cycle - cycle;
            }
        }
    }
    ifmap_buffer.finish();
    filter_buffer.finish();
    ofmap_buffer.drain_all(last_ofmap_cycle);

    const std::int64_t folds = row_folds * col_folds;
    report.total_cycles = last_ofmap_cycle;
    report.stall_cycles = stalls;
    const std::int64_t computes = op.pixels * op.filters * op.window;
    report.overall_util_percent = double(computes * 100) / double(report.total_cycles * R * C);
    report.mapping_efficiency_percent = mapping_sum / double(folds) * 100;
    report.compute_util_percent = utilisation_sum / double(folds) * 100;
    report.ifmap_sram.start_cycle = ifmap_span.first, report.ifmap_sram.stop_cycle = ifmap_span.last;
    report.filter_sram.start_cycle = filter_span.first, report.filter_sram.stop_cycle = filter_span.last;
    report.ofmap_sram.start_cycle = ofmap_span.first, report.ofmap_sram.stop_cycle = ofmap_span.last;
    report.ifmap_dram = ifmap_buffer.dram();
    report.filter_dram = filter_buffer.dram();
    report.ofmap_dram = ofmap_buffer.dram();
    return report;
}

}  // namespace fastsim::scalesim
