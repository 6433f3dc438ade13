// SPDX-License-Identifier: MIT
#include "workload/layer.h"

namespace fastsim::workload {

const char* to_string(LayerKind kind) {
    switch (kind) {
    case LayerKind::conv: return "conv";
    case LayerKind::fc: return "fc";
    case LayerKind::matmul: return "matmul";
    }
    return "?";
}

LayerGemm lower(const Layer& l, std::size_t batch) {
    switch (l.kind) {
    case LayerKind::conv:
        return {{batch * static_cast<std::size_t>(l.out_height()) * static_cast<std::size_t>(l.out_width()),
                 static_cast<std::size_t>(l.kernel_height) * static_cast<std::size_t>(l.kernel_width) *
                     static_cast<std::size_t>(l.in_channels),
                 static_cast<std::size_t>(l.filters)},
                1};
    case LayerKind::fc:
        return {{batch * static_cast<std::size_t>(l.tokens), static_cast<std::size_t>(l.in_features),
                 static_cast<std::size_t>(l.out_features)},
                1};
    case LayerKind::matmul:
        return {{static_cast<std::size_t>(l.m), static_cast<std::size_t>(l.k), static_cast<std::size_t>(l.n)},
                batch * static_cast<std::uint64_t>(l.repeat)};
    }
    return {};
}

}  // namespace fastsim::workload
