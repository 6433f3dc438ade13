// SPDX-License-Identifier: MIT
#include "planner/ownership.h"

#include <algorithm>
#include <cmath>

namespace fastsim::planner {
namespace {

/// A rectangle of a rows x columns tensor: [r0, r1) x [c0, c1).
struct Region {
    std::uint64_t r0 = 0, r1 = 0, c0 = 0, c1 = 0;
    [[nodiscard]] std::uint64_t area() const { return (r1 - r0) * (c1 - c0); }
};

std::uint64_t overlap(const Region& a, const Region& b) {
    const std::uint64_t r0 = std::max(a.r0, b.r0), r1 = std::min(a.r1, b.r1);
    const std::uint64_t c0 = std::max(a.c0, b.c0), c1 = std::min(a.c1, b.c1);
    return r1 > r0 && c1 > c0 ? (r1 - r0) * (c1 - c0) : 0;
}

/// Where `share` of `extent` ends, in whole units.
std::uint64_t cut(double share, std::uint64_t extent) {
    const double at = std::round(std::clamp(share, 0.0, 1.0) * static_cast<double>(extent));
    return static_cast<std::uint64_t>(at);
}

/// The part of the tensor side A (`side_a`) or side B holds under `layout`.
Region side_region(const TensorLayout& layout, bool side_a, std::uint64_t rows, std::uint64_t columns) {
    Region all{0, rows, 0, columns};
    switch (layout.split) {
    case TensorLayout::Split::rows: {
        const std::uint64_t at = cut(layout.share, rows);
        (side_a ? all.r1 : all.r0) = at;
        return all;
    }
    case TensorLayout::Split::columns: {
        const std::uint64_t at = cut(layout.share, columns);
        (side_a ? all.c1 : all.c0) = at;
        return all;
    }
    case TensorLayout::Split::none: return all;
    }
    return all;
}

}  // namespace

TensorLayout input_layout(PartitionType type, double alpha) {
    switch (type) {
    case PartitionType::batch: return {TensorLayout::Split::rows, alpha};
    case PartitionType::in_channels: return {TensorLayout::Split::columns, alpha};
    case PartitionType::out_channels: return {TensorLayout::Split::none, 1};
    }
    return {};
}

TensorLayout output_layout(PartitionType type, double alpha) {
    switch (type) {
    case PartitionType::batch: return {TensorLayout::Split::rows, alpha};
    case PartitionType::in_channels: return {TensorLayout::Split::none, 1};
    case PartitionType::out_channels: return {TensorLayout::Split::columns, alpha};
    }
    return {};
}

SideVolumes missing_elements(const TensorLayout& held, const TensorLayout& needed, std::uint64_t rows,
                             std::uint64_t columns) {
    SideVolumes v;
    for (const bool side_a : {true, false}) {
        const Region need = side_region(needed, side_a, rows, columns);
        const Region have = side_region(held, side_a, rows, columns);
        (side_a ? v.to_a : v.to_b) = static_cast<double>(need.area() - overlap(need, have));
    }
    return v;
}

EdgeTransfer edge_transfer(EdgeKind kind, const SplitChoice& from, const SplitChoice& to, std::uint64_t rows,
                           std::uint64_t columns) {
    // F is held as `from` leaves it and needed as `to` takes it; E flows the other way, held as
    // `to` produces it (the same layout as it takes F or needs E) and needed as `from` does.
    const bool chain = kind == EdgeKind::producer_output;
    const TensorLayout from_side = chain ? output_layout(from.type, from.alpha) : input_layout(from.type, from.alpha);
    const TensorLayout to_side = chain ? input_layout(to.type, to.alpha) : output_layout(to.type, to.alpha);
    return {missing_elements(from_side, to_side, rows, columns), missing_elements(to_side, from_side, rows, columns)};
}

double intra_elements(const PlanLayer& layer, PartitionType type, const LayerDims& dims) {
    switch (type) {
    case PartitionType::batch: return static_cast<double>(layer.weight_elements(dims));
    case PartitionType::in_channels: return static_cast<double>(layer.output_elements(dims));
    case PartitionType::out_channels: return static_cast<double>(layer.input_elements(dims));
    }
    return 0;
}

}  // namespace fastsim::planner
