// SPDX-License-Identifier: MIT
#include "workload/layer.h"

#include "common/checked.h"

namespace fastsim::workload {

namespace {

static_assert(rows_in_enum_order(kLayerKinds, &LayerKindTraits::kind) &&
                  static_cast<std::size_t>(LayerKind::concat) + 1 == kLayerKinds.size(),
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
    case LayerKind::concat: return {{0, 0, 0}, 0};
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

}  // namespace fastsim::workload
