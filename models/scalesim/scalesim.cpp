// SPDX-License-Identifier: MIT
#include "scalesim/scalesim.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/checked.h"
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
/// input), filter[window element][filter], ofmap[pixel][filter]. The ifmap's is split into a
/// per-pixel and a per-element part, computed once.
struct Operands {
    explicit Operands(const Layer& l)
        : pixels(ofmap_height(l) * ofmap_width(l)),
          window(l.filter_height * l.filter_width * l.channels),
          filters(l.filters),
          ifmap_words(l.ifmap_height * l.ifmap_width * l.channels),
          ifmap_words_read(covered(l.ifmap_height, l.filter_height, l.stride_height, ofmap_height(l)) *
                           covered(l.ifmap_width, l.filter_width, l.stride_width, ofmap_width(l)) * l.channels) {
        const std::int64_t out_width = ofmap_width(l);
        for (std::int64_t p = 0; p < pixels; ++p) {
            const std::int64_t row = p / out_width * l.stride_height, col = p % out_width * l.stride_width;
            // Room left below and right of the window's corner, and the corner's address.
            pixel_room.push_back({l.ifmap_height - row, l.ifmap_width - col});
            pixel_base.push_back((row * l.ifmap_width + col) * l.channels);
        }
        for (std::int64_t e = 0; e < window; ++e) {
            const std::int64_t row = e / (l.filter_width * l.channels), rest = e % (l.filter_width * l.channels);
            element_reach.push_back({row, rest / l.channels});
            element_offset.push_back((row * l.ifmap_width + rest / l.channels) * l.channels + rest % l.channels);
        }
    }

    std::int64_t ifmap(std::int64_t pixel, std::int64_t element) const {
        const auto& room = pixel_room[static_cast<std::size_t>(pixel)];
        const auto& reach = element_reach[static_cast<std::size_t>(element)];
        if (reach.first >= room.first || reach.second >= room.second) return -1;
        return pixel_base[static_cast<std::size_t>(pixel)] + element_offset[static_cast<std::size_t>(element)];
    }
    std::int64_t filter(std::int64_t element, std::int64_t f) const { return f * window + element; }
    std::int64_t ofmap(std::int64_t pixel, std::int64_t f) const { return filters * pixel + f; }
    std::int64_t filter_words() const { return window * filters; }

    /// Distinct ifmap words any window reads: the rows and columns some window covers, times
    /// the channels (a stride larger than the filter skips some).
    static std::int64_t covered(std::int64_t in, std::int64_t filter, std::int64_t stride, std::int64_t out) {
        std::int64_t n = 0, reached = 0;  // positions [0, reached) already counted
        for (std::int64_t o = 0; o < out; ++o) {
            const std::int64_t from = std::max(o * stride, reached), to = std::min(o * stride + filter, in);
            n += std::max<std::int64_t>(0, to - from);
            reached = std::max(reached, to);
        }
        return n;
    }

    std::int64_t pixels, window, filters, ifmap_words, ifmap_words_read;
    std::vector<std::pair<std::int64_t, std::int64_t>> pixel_room, element_reach;
    std::vector<std::int64_t> pixel_base, element_offset;
};

/// One operand's demand matrix for one fold, as systolic_compute_{ws,os,is}.py builds it:
/// `prefix` empty lines, `rows` lines of `data(row, column)` (-1 = no request), `suffix` empty
/// lines, each `width` wide, then optionally skewed (column c delayed by c lines).
template <class Data>
struct FoldStream {
    std::int64_t width, prefix, rows, suffix;
    bool skewed;
    Data data;

    std::int64_t lines() const { return prefix + rows + suffix + (skewed ? width - 1 : 0); }
    /// Calls `visit(address)` for each request of line `t`, in column order, while it returns
    /// true; returns the number of requests visited (the one that stopped it included).
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
            ++n;
            if (!visit(a)) return n;
        }
        return n;
    }
    /// The requests of line `t` when the data is -1 exactly outside rows [row_lo, row_hi) and
    /// columns [0, cols) (true of the ofmap, which has no partial windows), without visiting them.
    std::int64_t count_requests(std::int64_t t, std::int64_t row_lo, std::int64_t row_hi, std::int64_t cols) const {
        if (!skewed) {
            const std::int64_t row = t - prefix;
            return row >= std::max<std::int64_t>(0, row_lo) && row < std::min(rows, row_hi) ? std::min(width, cols) : 0;
        }
        // Column c reads row t - prefix - c.
        const std::int64_t lo = std::max<std::int64_t>({0, t - prefix - rows + 1, t - prefix - row_hi + 1});
        const std::int64_t hi = std::min<std::int64_t>({width, cols, t - prefix + 1, t - prefix - row_lo + 1});
        return std::max<std::int64_t>(0, hi - lo);
    }
    bool any_request(std::int64_t t) const {
        return for_each_request(t, [](std::int64_t) { return false; }) > 0;
    }
};
template <class Data>
FoldStream<Data> stream(std::int64_t width, std::int64_t prefix, std::int64_t rows, std::int64_t suffix, bool skewed,
                        Data data) {
    return {width, prefix, rows, suffix, skewed, std::move(data)};
}

/// SRAM counts as SCALE-Sim adds them per fold, and what its mapping efficiency and compute
/// utilisation average over folds.
struct FoldCounts {
    std::int64_t ifmap_reads, filter_reads, ofmap_writes, used_macs, cycles;
};

/// The rows [row_lo, row_hi) and columns [0, cols) of a fold's ofmap stream that hold requests.
struct OfmapRect {
    std::int64_t row_lo, row_hi, cols;
};

/// Which folds share a read stream: folds with the same key >= 0 read the same addresses in the
/// same lines (the ws ifmap does not depend on the column fold, for one); -1: none.
struct ReuseKeys {
    std::int64_t ifmap, filter;
};

template <class Ifmap, class Filter, class Ofmap>
struct Fold {
    FoldStream<Ifmap> ifmap;
    FoldStream<Filter> filter;
    FoldStream<Ofmap> ofmap;
    OfmapRect ofmap_rect;
    ReuseKeys reuse;
    FoldCounts counts;
    std::int64_t ofmap_writes(std::int64_t t) const {
        return ofmap.count_requests(t, ofmap_rect.row_lo, ofmap_rect.row_hi, ofmap_rect.cols);
    }
};
template <class I, class F, class O>
Fold<I, F, O> fold(FoldStream<I> ifmap, FoldStream<F> filter, FoldStream<O> ofmap, OfmapRect rect, ReuseKeys reuse,
                   FoldCounts counts) {
    return {std::move(ifmap), std::move(filter), std::move(ofmap), rect, reuse, counts};
}

/// The array's rows R and columns C, and the fold's first row r0 and column c0 of the spatial
/// dimensions Sr and Sc, with ru rows and cu columns used; T is the temporal dimension.
struct FoldPlace {
    std::int64_t R, C, T, r0, c0, ru, cu, row_folds, col_folds;
    std::int64_t flipped(std::int64_t k) const { return R - 1 - k; }  // np.flip(..., 0)
    /// Reuse keys of a stream that depends on the row fold only (it recurs in every column
    /// fold) and of one that depends on the column fold only: -1 when there is no other fold.
    std::int64_t row_fold_key() const { return col_folds > 1 ? r0 : -1; }
    std::int64_t col_fold_key() const { return row_folds > 1 ? c0 : -1; }
};

// systolic_compute_ws.py: Sr = window, Sc = filters, T = pixels; the filters stay.
auto ws_fold(const Operands& op, const FoldPlace& f) {
    return fold(stream(f.R, f.R, f.T, f.C - 1, true,
                       [&op, f](auto t, auto c) { return c < f.ru ? op.ifmap(t, f.r0 + c) : -1; }),
                stream(f.C, 0, f.R, f.R + f.C + f.T - 2, false,
                       [&op, f](auto k, auto c) {
                           const auto r = f.flipped(k);
                           return r < f.ru && c < f.cu ? op.filter(f.r0 + r, f.c0 + c) : -1;
                       }),
                stream(f.C, 2 * f.R - 1, f.T, 0, true,
                       [&op, f](auto t, auto c) { return c < f.cu ? op.ofmap(t, f.c0 + c) : -1; }),
                OfmapRect{0, f.T, f.cu}, ReuseKeys{f.row_fold_key(), -1},
                FoldCounts{f.T * f.ru, f.ru * f.cu, f.T * f.cu, f.ru * f.cu, 2 * f.R + 2 * f.C + f.T - 3});
}

// systolic_compute_os.py: Sr = pixels, Sc = filters, T = window; the outputs stay.
auto os_fold(const Operands& op, const FoldPlace& f) {
    return fold(
        stream(f.R, 0, f.T, f.C - 1, true, [&op, f](auto t, auto c) { return c < f.ru ? op.ifmap(f.r0 + c, t) : -1; }),
        stream(f.C, 0, f.T, f.R - 1, true, [&op, f](auto t, auto c) { return c < f.cu ? op.filter(t, f.c0 + c) : -1; }),
        stream(f.C, f.T - 1, f.R, 0, true,
               [&op, f](auto k, auto c) {
                   const auto r = f.flipped(k);
                   return r < f.ru && c < f.cu ? op.ofmap(f.r0 + r, f.c0 + c) : -1;
               }),
        OfmapRect{f.R - f.ru, f.R, f.cu}, ReuseKeys{f.row_fold_key(), f.col_fold_key()},
        // SCALE-Sim also adds the padded fold's R + C to the ofmap writes.
        FoldCounts{f.T * f.ru, f.T * f.cu, f.ru * f.cu + f.R + f.C, f.ru * f.cu, f.T + f.R + f.C - 2});
}

// systolic_compute_is.py: Sr = window, Sc = pixels, T = filters; the inputs stay.
auto is_fold(const Operands& op, const FoldPlace& f) {
    return fold(stream(f.C, 0, f.R, f.R + f.C + f.T - 2, false,
                       [&op, f](auto k, auto c) {
                           const auto r = f.flipped(k);
                           return r < f.ru && c < f.cu ? op.ifmap(f.c0 + c, f.r0 + r) : -1;
                       }),
                stream(f.R, f.R, f.T, f.C - 1, true,
                       [&op, f](auto t, auto c) { return c < f.ru ? op.filter(f.r0 + c, t) : -1; }),
                stream(f.C, 2 * f.R - 1, f.T, 0, true,
                       [&op, f](auto t, auto c) { return c < f.cu ? op.ofmap(f.c0 + c, t) : -1; }),
                OfmapRect{0, f.T, f.cu}, ReuseKeys{-1, f.row_fold_key()},
                FoldCounts{f.ru * f.cu, f.T * f.ru, f.T * f.cu, f.ru * f.cu, 2 * f.R + 2 * f.C + f.T - 3});
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

/// Line `t` of a read stream through its buffer; true if the line reads at all. A buffer that
/// holds every word the layer reads needs only the line's first request.
template <class Stream>
bool read_line(const Stream& stream, std::int64_t t, std::int64_t cycle, ReadBuffer& buffer) {
    buffer.begin_line(cycle);
    if (!buffer.replays()) {
        if (!stream.any_request(t)) return false;
        buffer.read(-1);
        return true;
    }
    return stream.for_each_request(t, [&](std::int64_t a) {
        buffer.read(a);
        return true;
    }) > 0;
}

/// A read stream's requests in order: line t's are address[line_start[t]], ...,
/// address[line_start[t + 1] - 1].
struct FlatStream {
    std::vector<std::int32_t> address;  // < 2^28 (check_size)
    std::vector<std::uint32_t> line_start;
};

/// Read streams that recur across folds, flattened the first time they are read, within a
/// budget of kMaxAddresses addresses: a recurring stream is then replayed from memory.
class StreamCache {
public:
    template <class Stream>
    const FlatStream* find(std::int64_t key, const Stream& stream) {
        if (key < 0) return nullptr;
        if (const auto it = m_streams.find(key); it != m_streams.end()) return &it->second;
        if (stream.rows * stream.width > m_budget) return nullptr;  // an upper bound of its requests
        FlatStream flat;
        const std::int64_t lines = stream.lines();
        flat.line_start.reserve(static_cast<std::size_t>(lines + 1));
        for (std::int64_t t = 0; t < lines; ++t) {
            flat.line_start.push_back(static_cast<std::uint32_t>(flat.address.size()));
            stream.for_each_request(t, [&](std::int64_t a) {
                flat.address.push_back(static_cast<std::int32_t>(a));
                return true;
            });
        }
        flat.line_start.push_back(static_cast<std::uint32_t>(flat.address.size()));
        m_budget -= static_cast<std::int64_t>(flat.address.size());
        return &m_streams.emplace(key, std::move(flat)).first->second;
    }

private:
    static constexpr std::int64_t kMaxAddresses = std::int64_t{1} << 24;  ///< 64 MiB of int32 addresses
    std::int64_t m_budget = kMaxAddresses;
    std::unordered_map<std::int64_t, FlatStream> m_streams;
};

/// Line `t` of a flattened read stream through its buffer; true if the line reads at all.
bool read_line(const FlatStream& stream, std::int64_t t, std::int64_t cycle, ReadBuffer& buffer) {
    if (t + 1 >= static_cast<std::int64_t>(stream.line_start.size())) return false;
    const std::uint32_t begin = stream.line_start[static_cast<std::size_t>(t)],
                        end = stream.line_start[static_cast<std::size_t>(t + 1)];
    if (begin == end) return false;
    buffer.begin_line(cycle);
    buffer.read_all(stream.address.data() + begin, stream.address.data() + end);
    return true;
}

/// A prefetch matrix (systolic_compute_*.py, create_{ifmap,filter}_prefetch_mat) in the order
/// read_buffer.py fetches it: `rows` x `cols` cells `cell(row, col)` (-1: none), row by row, or
/// along its anti-diagonals, each from its lowest row up, when `diagonal`. Keeps the valid
/// addresses and counts every cell (`slots`).
struct PrefetchOrder {
    std::vector<std::int32_t> addresses;
    std::int64_t slots = 0;
};
template <class Cell>
PrefetchOrder prefetch_order(std::int64_t rows, std::int64_t cols, bool diagonal, Cell cell) {
    if (rows * cols > (std::int64_t{1} << 28))
        throw UserError(
            "the layer is too large for fastsim scalesim in USER mode: a prefetch matrix of at most 2^28 words");
    PrefetchOrder order;
    order.slots = rows * cols;
    const auto keep = [&](std::int64_t r, std::int64_t c) {
        if (const std::int64_t a = cell(r, c); a >= 0) order.addresses.push_back(static_cast<std::int32_t>(a));
    };
    if (!diagonal) {
        for (std::int64_t r = 0; r < rows; ++r)
            for (std::int64_t c = 0; c < cols; ++c) keep(r, c);
        return order;
    }
    for (std::int64_t d = 0; d < rows + cols - 1; ++d)
        for (std::int64_t r = std::min(d, rows - 1); r >= std::max<std::int64_t>(0, d - cols + 1); --r) keep(r, d - r);
    return order;
}

/// The ifmap's and the filter's prefetch orders: each operand's slices for every fold, stacked
/// by row fold or by column fold, whichever of the two the operand depends on.
std::pair<PrefetchOrder, PrefetchOrder> prefetch_orders(Dataflow dataflow, const Operands& op, std::int64_t R,
                                                        std::int64_t C, std::int64_t Sr, std::int64_t Sc,
                                                        std::int64_t T, std::int64_t row_folds,
                                                        std::int64_t col_folds) {
    // Cell (r, c) of a stack of slices `height` rows high, one per row (column) fold: row r % height
    // of the slice of fold r / height, padded to R (C) columns.
    const auto by_row_fold = [R, Sr](std::int64_t height, auto value) {
        return [=](std::int64_t r, std::int64_t c) -> std::int64_t {
            const std::int64_t r0 = r / height * R;
            return c < std::min(R, Sr - r0) ? value(r % height, r0 + c) : -1;
        };
    };
    const auto by_col_fold = [C, Sc](std::int64_t height, auto value) {
        return [=](std::int64_t r, std::int64_t c) -> std::int64_t {
            const std::int64_t c0 = r / height * C;
            return c < std::min(C, Sc - c0) ? value(r % height, c0 + c) : -1;
        };
    };
    const auto ifmap = [&op](std::int64_t pixel, std::int64_t element) { return op.ifmap(pixel, element); };
    const auto ifmap_t = [&op](std::int64_t element, std::int64_t pixel) { return op.ifmap(pixel, element); };
    const auto filter = [&op](std::int64_t element, std::int64_t f) { return op.filter(element, f); };
    const auto filter_t = [&op](std::int64_t f, std::int64_t element) { return op.filter(element, f); };
    switch (dataflow) {
    case Dataflow::ws:  // I[:, rows of the fold], anti-diagonals; F[:, columns of the fold], row by row
        return {prefetch_order(row_folds * T, R, true, by_row_fold(T, ifmap)),
                prefetch_order(col_folds * Sr, C, false, by_col_fold(Sr, filter))};
    case Dataflow::os:  // I^T[:, rows of the fold] and F[:, columns of the fold], anti-diagonals
        return {prefetch_order(row_folds * T, R, true, by_row_fold(T, ifmap_t)),
                prefetch_order(col_folds * T, C, true, by_col_fold(T, filter))};
    case Dataflow::is: break;
    }
    // is: I^T[:, columns of the fold], row by row; F[rows of the fold, :]^T, anti-diagonals
    return {prefetch_order(col_folds * Sr, C, false, by_col_fold(Sr, ifmap_t)),
            prefetch_order(row_folds * T, R, true, by_row_fold(T, filter_t))};
}

/// Line `t` of a read stream through a USER-mode buffer; returns the cycle it is served in.
template <class Stream>
std::int64_t read_line(const Stream& stream, std::int64_t t, std::int64_t cycle, PrefetchReadBuffer& buffer,
                       Span& span) {
    buffer.begin_line(cycle);
    const std::int64_t requests = stream.for_each_request(t, [&](std::int64_t a) {
        buffer.read(a);
        return true;
    });
    if (requests > 0) span.add(buffer.end_line());
    return buffer.end_line();
}

/// The layer's folds (column folds outer, as SCALE-Sim orders them) through the memory system.
template <class MakeFold>
LayerReport run_folds(const Architecture& arch, const Operands& op, std::int64_t Sr, std::int64_t Sc, std::int64_t T,
                      MakeFold make_fold) {
    const std::int64_t R = arch.array_rows, C = arch.array_cols;
    const std::int64_t row_folds = (Sr + R - 1) / R, col_folds = (Sc + C - 1) / C;
    // single_layer_sim.py: one-byte words. CALC mode: read buffers filled at 10 words per cycle,
    // the ofmap buffer drained one array row (ArrayWidth words) per cycle. USER mode: every
    // buffer at Bandwidth words per cycle.
    const bool user = arch.interface == Interface::user;
    WriteBuffer ofmap_buffer(arch.ofmap_sram_kb * 1024, user ? arch.bandwidth_words_per_cycle : C);
    std::optional<ReadBuffer> ifmap_buffer, filter_buffer;
    std::optional<PrefetchReadBuffer> ifmap_user, filter_user;
    if (user) {
        const auto [ifmap_order, filter_order] =
            prefetch_orders(arch.dataflow, op, R, C, Sr, Sc, T, row_folds, col_folds);
        ifmap_user.emplace(arch.ifmap_sram_kb * 1024, arch.bandwidth_words_per_cycle, ifmap_order.addresses,
                           ifmap_order.slots, op.ifmap_words);
        filter_user.emplace(arch.filter_sram_kb * 1024, arch.bandwidth_words_per_cycle, filter_order.addresses,
                            filter_order.slots, op.filter_words());
    } else {
        ifmap_buffer.emplace(arch.ifmap_sram_kb * 1024, op.ifmap_words, op.ifmap_words_read);
        filter_buffer.emplace(arch.filter_sram_kb * 1024, op.filter_words(), op.filter_words());
    }
    StreamCache ifmap_streams, filter_streams;

    LayerReport report;
    Span ifmap_span, filter_span, ofmap_span;
    double mapping_sum = 0, utilisation_sum = 0;
    std::int64_t line = 0, stalls = 0, last_ofmap_cycle = 0;
    for (std::int64_t fc = 0; fc < col_folds; ++fc) {
        for (std::int64_t fr = 0; fr < row_folds; ++fr) {
            const FoldPlace place{
                R, C, T, fr * R, fc * C, std::min(R, Sr - fr * R), std::min(C, Sc - fc * C), row_folds, col_folds};
            const auto fold = make_fold(op, place);
            const FoldCounts& n = fold.counts;
            report.ifmap_sram.count += n.ifmap_reads;
            report.filter_sram.count += n.filter_reads;
            report.ofmap_sram.count += n.ofmap_writes;
            mapping_sum += double(n.used_macs) / double(R * C);
            utilisation_sum += double(n.used_macs * T) / (double(R * C) * double(n.cycles));
            // double_buffered_scratchpad.service_memory_requests: one demand line per cycle,
            // delayed by the stalls so far; reads are serviced a cycle later (hit latency 1).
            const FlatStream* ifmap =
                !user && ifmap_buffer->replays() ? ifmap_streams.find(fold.reuse.ifmap, fold.ifmap) : nullptr;
            const FlatStream* filter =
                !user && filter_buffer->replays() ? filter_streams.find(fold.reuse.filter, fold.filter) : nullptr;
            const std::int64_t lines = fold.ofmap.lines();
            for (std::int64_t t = 0; t < lines; ++t, ++line) {
                const std::int64_t cycle = line + stalls;
                std::int64_t read_wait = 0;  // beyond the read's cycle of latency
                if (user) {
                    read_wait = std::max(read_line(fold.ifmap, t, cycle, *ifmap_user, ifmap_span),
                                         read_line(fold.filter, t, cycle, *filter_user, filter_span)) -
                                cycle - 1;
                } else {
                    if (ifmap ? read_line(*ifmap, t, cycle, *ifmap_buffer)
                              : read_line(fold.ifmap, t, cycle, *ifmap_buffer))
                        ifmap_span.add(cycle + 1);
                    if (filter ? read_line(*filter, t, cycle, *filter_buffer)
                               : read_line(fold.filter, t, cycle, *filter_buffer))
                        filter_span.add(cycle + 1);
                }
                const std::int64_t writes = fold.ofmap_writes(t);
                last_ofmap_cycle = ofmap_buffer.write_line(cycle, writes);
                if (writes > 0) ofmap_span.add(last_ofmap_cycle);
                stalls += std::max(read_wait, last_ofmap_cycle - cycle);
            }
        }
    }
    if (!user) {
        ifmap_buffer->finish();
        filter_buffer->finish();
    }
    ofmap_buffer.drain_all(last_ofmap_cycle);

    const std::int64_t folds = row_folds * col_folds;
    if (last_ofmap_cycle == 0)  // SCALE-Sim divides by the total cycles (single_layer_sim.py:214)
        throw UserError("SCALE-Sim fails on this layer (a division by zero: one demand line, 0 cycles)");
    report.total_cycles = last_ofmap_cycle;
    report.stall_cycles = stalls;
    const std::int64_t computes = op.pixels * op.filters * op.window;
    report.overall_util_percent = double(computes * 100) / double(report.total_cycles * R * C);
    report.mapping_efficiency_percent = mapping_sum / double(folds) * 100;
    report.compute_util_percent = utilisation_sum / double(folds) * 100;
    report.ifmap_sram.start_cycle = ifmap_span.first, report.ifmap_sram.stop_cycle = ifmap_span.last;
    report.filter_sram.start_cycle = filter_span.first, report.filter_sram.stop_cycle = filter_span.last;
    report.ofmap_sram.start_cycle = ofmap_span.first, report.ofmap_sram.stop_cycle = ofmap_span.last;
    report.ifmap_dram = user ? ifmap_user->dram() : ifmap_buffer->dram();
    report.filter_dram = user ? filter_user->dram() : filter_buffer->dram();
    report.ofmap_dram = ofmap_buffer.dram();
    return report;
}

/// Refuses a layer whose operands need more than kMaxWords words of address bookkeeping, or
/// whose MAC count times 100 leaves the integers a double holds exactly (SCALE-Sim's
/// utilisation is that count over cycles).
void check_size(const Layer& l) {
    constexpr std::uint64_t kMaxWords = std::uint64_t{1} << 28;
    constexpr std::uint64_t kMaxExact = std::uint64_t{1} << 53;
    const auto u = [](std::int64_t v) { return static_cast<std::uint64_t>(v); };
    try {
        const std::uint64_t pixels = checked_mul(u(ofmap_height(l)), u(ofmap_width(l)), "output pixels");
        const std::uint64_t window =
            checked_mul(checked_mul(u(l.filter_height), u(l.filter_width), "window"), u(l.channels), "window");
        const std::uint64_t ifmap =
            checked_mul(checked_mul(u(l.ifmap_height), u(l.ifmap_width), "ifmap words"), u(l.channels), "ifmap words");
        const std::uint64_t filter = checked_mul(window, u(l.filters), "filter words");
        const std::uint64_t ofmap = checked_mul(pixels, u(l.filters), "ofmap words");
        const std::uint64_t macs = checked_mul(checked_mul(ofmap, window, "MACs"), 100, "MACs");
        if (ifmap > kMaxWords || filter > kMaxWords || ofmap > kMaxWords || macs >= kMaxExact)
            throw SizeOverflow("MACs");
    } catch (const SizeOverflow&) {
        throw UserError(
            "the layer is too large for fastsim scalesim: ifmap, filter and ofmap of at most 2^28 words each "
            "and fewer than 2^53 / 100 MACs");
    }
}

}  // namespace

LayerReport simulate_layer(const Architecture& arch, const Layer& layer) {
    check_size(layer);
    const Operands op(layer);
    switch (arch.dataflow) {
    case Dataflow::ws: return run_folds(arch, op, op.window, op.filters, op.pixels, ws_fold);
    case Dataflow::os: return run_folds(arch, op, op.pixels, op.filters, op.window, os_fold);
    case Dataflow::is: break;
    }
    return run_folds(arch, op, op.window, op.pixels, op.filters, is_fold);
}

double simulated_requests(const Architecture& arch, const Layer& layer) {
    const double pixels = static_cast<double>(ofmap_height(layer)) * static_cast<double>(ofmap_width(layer)),
                 window = static_cast<double>(layer.filter_height) * static_cast<double>(layer.filter_width) *
                          static_cast<double>(layer.channels),
                 filters = static_cast<double>(layer.filters);
    // (Sr, Sc, T) as simulate_layer passes them to run_folds.
    double sr = window, sc = pixels, t = filters;
    switch (arch.dataflow) {
    case Dataflow::ws: sc = filters, t = pixels; break;
    case Dataflow::os: sr = pixels, sc = filters, t = window; break;
    case Dataflow::is: break;
    }
    const auto r = static_cast<double>(arch.array_rows), c = static_cast<double>(arch.array_cols);
    const double folds = std::ceil(sr / r) * std::ceil(sc / c);
    return folds * (t + 2 * (r + c)) * (r + 2 * c) + pixels + window;
}

}  // namespace fastsim::scalesim
