// SPDX-License-Identifier: MIT
#include "planner/transfers.h"

#include <array>

namespace fastsim::planner {
namespace {

/// What a side must fetch of one boundary tensor.
enum class Need : unsigned char {
    none,
    whole,  ///< all of it: receives the other side's share (0.5 A at 1/2)
    cross   ///< its slice along the other dimension: receives share x other share (0.25 A at 1/2)
};

struct Entry {
    Need forward;   ///< F
    Need backward;  ///< E
};

using Table = std::array<std::array<Entry, kPartitionTypes>, kPartitionTypes>;  ///< [from][to]

constexpr Entry k0{Need::none, Need::none};

// AccPar, src/accpar.cpp (commit 8f28c36), Com_Cost_Inter_Layer(prev, this); shared/reference/papers.md §1.2.
constexpr Table kChain{{
    /* I   -> */ {{k0, {Need::cross, Need::cross}, {Need::whole, Need::none}}},
    /* II  -> */ {{{Need::none, Need::whole}, {Need::none, Need::whole}, k0}},
    /* III -> */ {{{Need::cross, Need::cross}, k0, {Need::whole, Need::none}}},
}};

// AccPar, Com_Cost_Inter_Layer_Block(from, to): the shortcut edges of a ResNet block.
constexpr Table kShortcut{{
    /* I   -> */ {{k0, {Need::whole, Need::none}, {Need::cross, Need::cross}}},
    /* II  -> */ {{{Need::cross, Need::cross}, {Need::whole, Need::none}, k0}},
    /* III -> */ {{{Need::none, Need::whole}, k0, {Need::none, Need::whole}}},
}};

/// Volumes of one tensor held at share `held` by side A and needed at share `needed`.
SideVolumes fetch(Need need, double held, double needed, double elements) {
    switch (need) {
    case Need::none: return {};
    case Need::whole: return {(1 - held) * elements, held * elements};
    case Need::cross: return {needed * (1 - held) * elements, (1 - needed) * held * elements};
    }
    return {};
}

}  // namespace

EdgeTransfer edge_transfer(PartitionType from, PartitionType to, bool shortcut, double alpha_from, double alpha_to,
                           double boundary_elements) {
    const Entry e = (shortcut ? kShortcut : kChain)[static_cast<std::size_t>(from)][static_cast<std::size_t>(to)];
    // F is produced by `from` (held at its share) and read by `to`; E the other way round.
    return {fetch(e.forward, alpha_from, alpha_to, boundary_elements),
            fetch(e.backward, alpha_to, alpha_from, boundary_elements)};
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
