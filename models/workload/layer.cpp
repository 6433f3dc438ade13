// SPDX-License-Identifier: MIT
#include "workload/layer.h"

#include <algorithm>

#include "common/checked.h"

namespace fastsim::workload {

namespace {

static_assert(rows_in_enum_order(kLayerKinds, &LayerKindTraits::kind) &&
                  static_cast<std::size_t>(LayerKind::embedding) + 1 == kLayerKinds.size(),
              "every LayerKind needs its row in kLayerKinds, in enumerator order");

}  // namespace

const EnumNames<LayerKind, kLayerKinds.size()>& enum_names(LayerKind) {
    static constexpr EnumNames<LayerKind, kLayerKinds.size()> kNames =
        names_of_rows(kLayerKinds, &LayerKindTraits::kind);
    return kNames;
}

const EnumNames<PoolMode, 2>& enum_names(PoolMode) {
    static constexpr EnumNames<PoolMode, 2> kNames{{{"max", PoolMode::max}, {"average", PoolMode::average}}};
    return kNames;
}

const EnumNames<ShortcutConvention, 2>& enum_names(ShortcutConvention) {
    static constexpr EnumNames<ShortcutConvention, 2> kNames{
        {{"producer", ShortcutConvention::producer}, {"accpar", ShortcutConvention::accpar}}};
    return kNames;
}

const EnumNames<ShapeCheck, 3>& enum_names(ShapeCheck) {
    static constexpr EnumNames<ShapeCheck, 3> kNames{
        {{"error", ShapeCheck::error}, {"warn", ShapeCheck::warn}, {"off", ShapeCheck::off}}};
    return kNames;
}

namespace {

std::uint64_t u64(int v) { return static_cast<std::uint64_t>(v); }

LayerGemm lower_dims(const Layer& l, std::uint64_t batch) {
    switch (l.kind) {
    case LayerKind::conv:
        return {
            {checked_mul(checked_mul(batch, u64(l.out_height()), "GEMM rows (batch x output positions)"),
                         u64(l.out_width()), "GEMM rows (batch x output positions)"),
             checked_mul(checked_mul(u64(l.kernel_height), u64(l.kernel_width), "GEMM reduction (kernel x channels)"),
                         u64(l.in_channels / l.groups), "GEMM reduction (kernel x channels)"),
             u64(l.filters / l.groups)},
            u64(l.groups)};
    case LayerKind::fc:
        return {
            {checked_mul(batch, u64(l.tokens), "GEMM rows (batch x tokens)"), u64(l.in_features), u64(l.out_features)},
            1};
    case LayerKind::matmul:
        return {{u64(l.m), u64(l.k), u64(l.n)}, checked_mul(batch, u64(l.repeat), "GEMMs (batch x repeat)")};
    case LayerKind::gemm: return {{u64(l.m), u64(l.k), u64(l.n)}, 1};
    case LayerKind::pool:
    case LayerKind::batchnorm:
    case LayerKind::relu:
    case LayerKind::gelu:
    case LayerKind::add:
    case LayerKind::softmax:
    case LayerKind::layernorm:
    case LayerKind::concat:
    case LayerKind::embedding: return {{0, 0, 0}, 0};
    }
    return {};
}

}  // namespace

LayerGemm lower(const Layer& l, std::size_t batch) {
    const LayerGemm gemm = lower_dims(l, batch);
    (void)gemm.forward_macs();  // throws if the MACs of a phase do not fit 64 bits
    return gemm;
}

std::uint64_t LayerGemm::forward_macs() const {
    constexpr const char* kMacs = "MACs of a phase";
    return checked_mul(checked_mul(checked_mul(count, dims.batch, kMacs), dims.in, kMacs), dims.out, kMacs);
}

const EnumNames<BackwardDataLowering, 2>& enum_names(BackwardDataLowering) {
    static constexpr EnumNames<BackwardDataLowering, 2> kNames{{
        {"transposed", BackwardDataLowering::transposed},
        {"col2im", BackwardDataLowering::col2im},
    }};
    return kNames;
}

namespace {

/// One axis of a transposed convolution: per class c of input positions i (by (i + padding)
/// mod stride), how many positions it holds and how many kernel taps r reach it
/// (r * dilation = c mod stride). Classes no tap reaches are left out.
struct AxisClass {
    std::uint64_t positions = 0, taps = 0;
};
std::vector<AxisClass> axis_classes(int in, int padding, int stride, int dilation, int kernel) {
    std::vector<std::pair<int, AxisClass>> by_residue;  // (r * dilation mod stride, class), in tap order
    for (int r = 0; r < kernel; ++r) {
        const auto c = static_cast<int>(static_cast<std::int64_t>(r) * dilation % stride);
        auto it = std::find_if(by_residue.begin(), by_residue.end(), [c](const auto& e) { return e.first == c; });
        if (it == by_residue.end()) it = by_residue.insert(by_residue.end(), {c, AxisClass{}});
        ++it->second.taps;
    }
    std::vector<AxisClass> classes;
    for (auto& [c, a] : by_residue) {
        // Positions i in [0, in) with (i + padding) mod stride == c.
        const int first = ((c - padding) % stride + stride) % stride;
        if (first >= in) continue;
        a.positions = static_cast<std::uint64_t>((in - 1 - first) / stride + 1);
        classes.push_back(a);
    }
    return classes;
}

std::vector<ShapedGemms> transposed_backward_data(const Layer& l, std::uint64_t batch) {
    const int stride_w = l.stride_width > 0 ? l.stride_width : l.stride;
    const std::vector<AxisClass> rows = axis_classes(l.in_height, l.padding, l.stride, l.dilation, l.kernel_height);
    const std::vector<AxisClass> cols = axis_classes(l.in_width, l.padding, stride_w, l.dilation, l.kernel_width);
    const auto filters = u64(l.filters / l.groups), channels = u64(l.in_channels / l.groups);
    std::vector<ShapedGemms> out;
    constexpr const char* kRows = "GEMM rows (batch x input positions)";
    constexpr const char* kReduction = "GEMM reduction (kernel taps x filters)";
    for (const AxisClass& r : rows)
        for (const AxisClass& c : cols) {
            const fmac::GemmShape shape{checked_mul(checked_mul(batch, r.positions, kRows), c.positions, kRows),
                                        checked_mul(checked_mul(r.taps, c.taps, kReduction), filters, kReduction),
                                        channels};
            const auto same = std::find_if(out.begin(), out.end(), [&](const ShapedGemms& g) {
                return g.shape.m == shape.m && g.shape.k == shape.k && g.shape.n == shape.n;
            });
            if (same != out.end())
                same->count = checked_add(same->count, u64(l.groups), "GEMMs of a phase");
            else
                out.push_back({shape, u64(l.groups), 1, shape});
        }
    for (const ShapedGemms& g : out)  // each fits 64 bits, as lower() checks the forward's
        (void)checked_mul(checked_mul(checked_mul(g.count, g.shape.m, "MACs of a phase"), g.shape.k, "MACs of a phase"),
                          g.shape.n, "MACs of a phase");
    return out;
}

}  // namespace

std::vector<ShapedGemms> phase_gemms(const Layer& layer, std::size_t batch, fmac::TrainingPhase phase,
                                     BackwardDataLowering lowering) {
    const LayerGemm gemm = lower(layer, batch);
    if (gemm.count == 0) return {};
    const auto m = static_cast<std::uint64_t>(gemm.dims.batch), in = static_cast<std::uint64_t>(gemm.dims.in),
               out = static_cast<std::uint64_t>(gemm.dims.out);
    switch (phase) {
    case fmac::TrainingPhase::forward: return {{{m, in, out}, gemm.count, 1, {m, in, out}}};
    case fmac::TrainingPhase::weight_gradient: return {{{in, m, out}, gemm.count, 1, {in, m, out}}};
    case fmac::TrainingPhase::backward_data:
        if (layer.kind == LayerKind::conv && lowering == BackwardDataLowering::transposed)
            return transposed_backward_data(layer, batch);
        return {{{m, out, in}, gemm.count, 1, {m, out, in}}};
    }
    return {};
}

const EnumNames<DepthwiseLowering, 3>& enum_names(DepthwiseLowering) {
    static constexpr EnumNames<DepthwiseLowering, 3> kNames{{
        {"array_packed", DepthwiseLowering::array_packed},
        {"vector", DepthwiseLowering::vector},
        {"per_channel", DepthwiseLowering::per_channel},
    }};
    return kNames;
}

std::vector<ShapedGemms> pack_blocks(const std::vector<ShapedGemms>& gemms, const fmac::ArrayGeometry& array) {
    const auto g = static_cast<std::uint64_t>(array.group_size);
    const auto rows = static_cast<std::uint64_t>(array.rows), cols = static_cast<std::uint64_t>(array.cols);
    std::vector<ShapedGemms> out;
    for (const ShapedGemms& e : gemms) {
        const std::uint64_t groups_of_k = ceil_div(e.shape.k, g);
        const std::uint64_t fit = std::min({rows / groups_of_k, cols / std::max<std::uint64_t>(1, e.shape.n), e.count});
        if (e.blocks > 1 || fit < 2) {
            out.push_back(e);
            continue;
        }
        const auto packed = [&](std::uint64_t blocks, std::uint64_t count) {
            ShapedGemms p;
            p.shape = {e.shape.m, checked_mul(blocks, groups_of_k * g, "packed GEMM reduction"),
                       checked_mul(blocks, e.shape.n, "packed GEMM columns")};
            p.count = count;
            p.blocks = blocks;
            p.block = e.shape;
            return p;
        };
        out.push_back(packed(fit, e.count / fit));
        const std::uint64_t rest = e.count % fit;
        if (rest >= 2)
            out.push_back(packed(rest, 1));
        else if (rest == 1)
            out.push_back({e.shape, 1, 1, e.shape});
    }
    return out;
}

std::vector<ShapedGemms> node_phase_gemms(const Layer& layer, std::size_t batch, fmac::TrainingPhase phase,
                                          const Lowering& lowering, const fmac::ArrayGeometry& array) {
    if (!is_grouped_conv(layer)) return phase_gemms(layer, batch, phase, lowering.backward_data);
    switch (lowering.depthwise) {
    case DepthwiseLowering::array_packed:
        return pack_blocks(phase_gemms(layer, batch, phase, lowering.backward_data), array);
    case DepthwiseLowering::vector: return {};
    case DepthwiseLowering::per_channel: return phase_gemms(layer, batch, phase, lowering.backward_data);
    }
    return {};
}

}  // namespace fastsim::workload
