// SPDX-License-Identifier: MIT
#include "interconnect/closed_form.h"

#include <cmath>

#include "interconnect/all_reduce.h"

namespace fastsim::interconnect {
namespace {

bool power_of_two(std::size_t k) { return k >= 1 && (k & (k - 1)) == 0; }

/// One dimension's line: k nodes, hop latency L (s), bandwidth B (bytes/s), hops per message.
struct LineTiming {
    double k = 0, latency_s = 0, bytes_per_s = 0, hops = 1;
    DimensionKind kind = DimensionKind::ring;
};

/// The all-reduce of m bytes over one line (both halves where it splits), or nothing.
std::optional<double> all_reduce_s(AllReduceAlgorithm a, const LineTiming& l, double m) {
    const double k = l.k, hl = l.hops * l.latency_s, b = l.bytes_per_s;
    const bool pow2 = power_of_two(static_cast<std::size_t>(k));
    const bool ring_line = l.kind == DimensionKind::ring;
    switch (a) {
    case AllReduceAlgorithm::ring:
    case AllReduceAlgorithm::flat_ring: return 2 * (k - 1) * (hl + m / (k * b));
    case AllReduceAlgorithm::direct:
        if (ring_line && k > 3) return std::nullopt;
        return l.kind == DimensionKind::switch_star ? 2 * (hl + (k - 1) / k * m / b) : 2 * (hl + m / (k * b));
    case AllReduceAlgorithm::halving_doubling:
    case AllReduceAlgorithm::halving_doubling_nearest:
        if (!pow2 || (ring_line && k > 2)) return std::nullopt;
        return 2 * std::log2(k) * hl + 2 * (k - 1) / k * m / b;
    case AllReduceAlgorithm::tree:
        if (!pow2 || (ring_line && k > 2)) return std::nullopt;
        return 2 * std::log2(k) * (hl + m / b);
    }
    return std::nullopt;
}

std::optional<double> all_to_all_s(AllReduceAlgorithm a, const LineTiming& l, double m) {
    const double k = l.k, hl = l.hops * l.latency_s, b = l.bytes_per_s;
    if (a == AllReduceAlgorithm::ring) {
        if (l.kind == DimensionKind::ring && k > 3) return std::nullopt;
        return (k - 1) * (hl + m / (k * b));
    }
    if (l.kind == DimensionKind::ring && k > 3) return std::nullopt;
    return l.kind == DimensionKind::switch_star ? hl + (k - 1) / k * m / b : hl + m / (k * b);
}

}  // namespace

std::optional<double> closed_form_seconds(const Topology& topology, CollectiveOp op,
                                          const AlgorithmPerDimension& algorithms, const std::vector<NodeId>& ranks,
                                          std::uint64_t bytes) {
    if (ranks.size() < 2) return 0.0;
    if (unsupported(topology, op, algorithms, ranks)) return std::nullopt;
    GridSpan span = grid_span(topology, ranks);
    if (!span.grid) {
        // Some nodes of one switch or fully connected group: a line of their own.
        const Topology::Grid* grid = topology.grid_of(ranks.front().value());
        if (!grid || grid->sizes.size() != 1 || grid->kinds.front() == DimensionKind::ring) return std::nullopt;
        for (const NodeId r : ranks)
            if (topology.grid_of(r.value()) != grid) return std::nullopt;
        span.grid = grid;
        span.dims = {{0, ranks.size(), 1}};
    }
    if (!goes_per_dimension(span, algorithms) && span.dims.size() != 1)
        return std::nullopt;  // flat_ring over a multi-dimensional grid
    double total = 0, m = static_cast<double>(bytes);
    for (std::size_t j = 0; j < span.dims.size(); ++j) {
        const Topology::Grid& grid = *span.grid;
        const std::size_t d = span.dims[j].index;
        const Channel& channel = topology.channel(grid.channel_of(d));
        LineTiming line;
        line.k = static_cast<double>(span.dims[j].size);
        line.kind = grid.kinds[d];
        line.latency_s = static_cast<double>(channel.timing.latency_ps.count()) * 1e-12;
        line.bytes_per_s = static_cast<double>(channel.timing.bits_per_s) / 8;
        line.hops = line.kind == DimensionKind::switch_star ? 2 : 1;
        if (line.hops > 1 && channel.params.switching == Switching::store_and_forward) return std::nullopt;
        const AllReduceAlgorithm a = algorithms.size() == 1 ? algorithms.front() : algorithms[j];
        const bool splits = algorithm_of(a).scatters(span.dims[j].size);
        std::optional<double> t;
        switch (op) {
        case CollectiveOp::all_reduce: t = all_reduce_s(a, line, m); break;
        case CollectiveOp::reduce_scatter:
        case CollectiveOp::all_gather:
            if (const auto full = all_reduce_s(a, line, m)) t = *full / 2;
            break;
        case CollectiveOp::all_to_all: t = all_to_all_s(a, line, static_cast<double>(bytes)); break;
        }
        if (!t) return std::nullopt;
        total += *t;
        if (splits) m /= line.k;
    }
    return total;
}

}  // namespace fastsim::interconnect
