// SPDX-License-Identifier: MIT
#include "planner/ownership.h"

#include <algorithm>
#include <cmath>

namespace fastsim::planner {
namespace {

/// A set of columns of a tensor: one block [lo, hi) of column indices, or (stripes) the
/// positions [lo, hi) of every channel's block of `period` columns.
struct Columns {
    bool stripes = false;
    std::uint64_t lo = 0, hi = 0;
};

/// The part of a tensor a side holds: samples [r0, r1) x `columns`.
struct Region {
    std::uint64_t r0 = 0, r1 = 0;
    Columns columns;
};

/// Columns of a tensor of `shape` in `c`.
std::uint64_t count(const Columns& c, const TensorShape& shape) {
    return c.stripes ? shape.channels * (c.hi - c.lo) : c.hi - c.lo;
}

/// Columns in [0, x) whose position in their channel's block lies in the stripe [q0, q1).
std::uint64_t stripe_columns_below(std::uint64_t x, std::uint64_t period, std::uint64_t q0, std::uint64_t q1) {
    const std::uint64_t in_part = x % period;
    return x / period * (q1 - q0) + (in_part > q0 ? std::min(in_part, q1) - q0 : 0);
}

/// Columns in both `a` and `b`.
std::uint64_t common(const Columns& a, const Columns& b, const TensorShape& shape) {
    if (a.hi <= a.lo || b.hi <= b.lo) return 0;
    if (a.stripes == b.stripes) {
        const std::uint64_t lo = std::max(a.lo, b.lo), hi = std::min(a.hi, b.hi);
        return hi > lo ? (a.stripes ? shape.channels : 1) * (hi - lo) : 0;
    }
    const Columns& block = a.stripes ? b : a;
    const Columns& stripe = a.stripes ? a : b;
    const std::uint64_t period = shape.height * shape.width;
    return stripe_columns_below(block.hi, period, stripe.lo, stripe.hi) -
           stripe_columns_below(block.lo, period, stripe.lo, stripe.hi);
}

std::uint64_t overlap(const Region& a, const Region& b, const TensorShape& shape) {
    const std::uint64_t r0 = std::max(a.r0, b.r0), r1 = std::min(a.r1, b.r1);
    return r1 > r0 ? (r1 - r0) * common(a.columns, b.columns, shape) : 0;
}

/// Where `share` of `extent` ends, in whole units.
std::uint64_t cut(double share, std::uint64_t extent) {
    const double at = std::round(std::clamp(share, 0.0, 1.0) * static_cast<double>(extent));
    return static_cast<std::uint64_t>(at);
}

/// The part of the tensor side A (`side_a`) or side B holds under `layout`.
Region side_region(const TensorLayout& layout, bool side_a, const TensorShape& shape) {
    Region all{0, shape.samples, {false, 0, shape.columns()}};
    switch (layout.split) {
    case TensorLayout::Split::rows: {
        const std::uint64_t at = cut(layout.share, shape.samples);
        (side_a ? all.r1 : all.r0) = at;
        return all;
    }
    case TensorLayout::Split::columns: {
        const std::uint64_t at = cut(layout.share, shape.columns());
        (side_a ? all.columns.hi : all.columns.lo) = at;
        return all;
    }
    case TensorLayout::Split::image_rows: {
        const std::uint64_t end = side_a ? cut(layout.share, shape.height) : shape.height;
        const std::uint64_t begin = side_a ? 0 : std::min(end, cut(layout.b_from, shape.height));
        all.columns = {true, begin * shape.width, end * shape.width};
        return all;
    }
    case TensorLayout::Split::none: return all;
    }
    return all;
}

}  // namespace

SplitChoice spatial_choice(const PlanLayer& layer, const LayerDims& dims, std::uint64_t split_a) {
    const SpatialInputRows rows = layer.spatial_input_rows(dims, split_a);
    const auto fraction = [&](std::uint64_t row) {
        return static_cast<double>(row) / static_cast<double>(rows.height);
    };
    return {PartitionType::spatial, static_cast<double>(split_a) / static_cast<double>(dims.out_rows),
            fraction(rows.a_end), fraction(rows.b_begin)};
}

TensorLayout input_layout(const SplitChoice& c) {
    switch (c.type) {
    case PartitionType::batch: return {TensorLayout::Split::rows, c.alpha};
    case PartitionType::in_channels: return {TensorLayout::Split::columns, c.alpha};
    case PartitionType::out_channels: return {TensorLayout::Split::none, 1};
    case PartitionType::spatial:
        return {TensorLayout::Split::image_rows, c.input_a_end < 0 ? c.alpha : c.input_a_end,
                c.input_b_begin < 0 ? c.alpha : c.input_b_begin};
    }
    return {};
}

TensorLayout output_layout(const SplitChoice& c) {
    switch (c.type) {
    case PartitionType::batch: return {TensorLayout::Split::rows, c.alpha};
    case PartitionType::in_channels: return {TensorLayout::Split::none, 1};
    case PartitionType::out_channels: return {TensorLayout::Split::columns, c.alpha};
    case PartitionType::spatial: return {TensorLayout::Split::image_rows, c.alpha, c.alpha};
    }
    return {};
}

SideVolumes missing_elements(const TensorLayout& held, const TensorLayout& needed, const TensorShape& shape) {
    SideVolumes v;
    for (const bool side_a : {true, false}) {
        const Region need = side_region(needed, side_a, shape);
        const Region have = side_region(held, side_a, shape);
        const std::uint64_t need_elements = (need.r1 - need.r0) * count(need.columns, shape);
        (side_a ? v.to_a : v.to_b) = static_cast<double>(need_elements - overlap(need, have, shape));
    }
    return v;
}

SideVolumes missing_elements(const TensorLayout& held, const TensorLayout& needed, std::uint64_t rows,
                             std::uint64_t columns) {
    return missing_elements(held, needed, TensorShape{rows, columns, 1, 1});
}

EdgeTransfer edge_transfer(EdgeKind kind, const SplitChoice& from, const SplitChoice& to, const TensorShape& shape) {
    // F is held as `from` leaves it and needed as `to` takes it; E flows the other way, held as
    // `to` produces it (the same layout as it takes F or needs E) and needed as `from` does.
    const bool chain = kind == EdgeKind::producer_output;
    const TensorLayout from_side = chain ? output_layout(from) : input_layout(from);
    const TensorLayout to_side = chain ? input_layout(to) : output_layout(to);
    return {missing_elements(from_side, to_side, shape), missing_elements(to_side, from_side, shape)};
}

EdgeTransfer edge_transfer(EdgeKind kind, const SplitChoice& from, const SplitChoice& to, std::uint64_t rows,
                           std::uint64_t columns) {
    return edge_transfer(kind, from, to, TensorShape{rows, columns, 1, 1});
}

double intra_elements(const PlanLayer& layer, PartitionType type, const LayerDims& dims) {
    switch (type) {
    case PartitionType::batch:
    case PartitionType::spatial: return static_cast<double>(layer.weight_elements(dims));
    case PartitionType::in_channels: return static_cast<double>(layer.output_elements(dims));
    case PartitionType::out_channels: return static_cast<double>(layer.input_elements(dims));
    }
    return 0;
}

double statistics_elements(const PlanLayer& layer, PartitionType type, const LayerDims& dims, bool backward) {
    using workload::LayerKind;
    // The carried layer's tensor: the host's output, or its input for one on_input.
    const auto part = [](double whole, std::uint64_t numerator, std::uint64_t denominator) {
        return std::ceil(whole * static_cast<double>(numerator) / static_cast<double>(denominator));
    };
    double total = 0;
    for (const workload::HostedLayer& h : layer.carried()) {
        if (backward && !h.backward) continue;
        const workload::Layer& v = h.layer;
        const bool splits_channels = type == (h.on_input ? PartitionType::in_channels : PartitionType::out_channels);
        const bool splits_samples_or_rows = type == PartitionType::batch || type == PartitionType::spatial;
        const bool rows_reduced = v.kind == LayerKind::layernorm || v.kind == LayerKind::softmax;
        if (rows_reduced && splits_channels) {
            // Per row: mean and variance (layernorm), maximum and sum (softmax); backward the sums
            // of dy and dy x_hat (layernorm), of dy y (softmax).
            const double per_row = backward && v.kind == LayerKind::softmax ? 1 : 2;
            const double positions =
                h.on_input ? part(double(v.in_height) * v.in_width, layer.input_rows(dims.out_rows), layer.in_height)
                           : part(double(v.in_height) * v.in_width, dims.out_rows, layer.dims.out_rows);
            total += per_row * static_cast<double>(dims.batch) * positions;
        }
        if (v.kind == LayerKind::batchnorm && h.synchronised_statistics && splits_samples_or_rows) {
            // Per channel: mean and variance; backward the sums of dy and dy x_hat.
            const double channels = h.on_input ? part(v.in_channels, dims.in_channels, layer.dims.in_channels)
                                               : part(v.in_channels, dims.out_channels, layer.dims.out_channels);
            total += 2 * channels;
        }
    }
    return total;
}

double spatial_halo_elements(const PlanLayer& layer, const LayerDims& dims, std::uint64_t split_a) {
    const std::uint64_t halo = layer.spatial_input_rows(dims, split_a).halo();
    return static_cast<double>(dims.batch * dims.in_channels * halo * layer.in_width);
}

}  // namespace fastsim::planner
