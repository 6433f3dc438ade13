// SPDX-License-Identifier: MIT
#include "interconnect/collective.h"

#include <algorithm>
#include <stdexcept>

#include "interconnect/all_reduce.h"
#include "interconnect/impl/messages.h"

namespace fastsim::interconnect {

const EnumNames<CollectiveOp, std::size(kCollectiveOps)>& enum_names(CollectiveOp) {
    static constexpr EnumNames<CollectiveOp, std::size(kCollectiveOps)> kNames{{
        {"all_reduce", CollectiveOp::all_reduce},
        {"reduce_scatter", CollectiveOp::reduce_scatter},
        {"all_gather", CollectiveOp::all_gather},
        {"all_to_all", CollectiveOp::all_to_all},
    }};
    return kNames;
}

std::uint64_t AllReduce::reduce_scatter(std::vector<NodeProgram>& /*programs*/, const std::vector<NodeId>& /*ranks*/,
                                        std::uint64_t /*bytes*/, std::uint64_t /*tag_base*/,
                                        std::uint32_t /*label*/) const {
    throw std::logic_error("this algorithm has no reduce-scatter (AllReduce::scatters)");
}

std::uint64_t AllReduce::all_gather(std::vector<NodeProgram>& /*programs*/, const std::vector<NodeId>& /*ranks*/,
                                    std::uint64_t /*bytes*/, std::uint64_t /*tag_base*/,
                                    std::uint32_t /*label*/) const {
    throw std::logic_error("this algorithm has no all-gather (AllReduce::scatters)");
}

std::uint64_t AllReduce::owned_bytes(std::uint64_t bytes, std::size_t i, std::size_t p) const {
    return chunk_bytes(bytes, p, owned_chunk(i, p));
}

GridSpan grid_span(const Topology& topology, const std::vector<NodeId>& ranks) {
    GridSpan span;
    const Topology::Grid* grid = ranks.empty() ? nullptr : topology.grid_of(ranks[0].value());
    if (!grid || ranks.size() != grid->node_count()) return span;
    for (const NodeId r : ranks)
        if (topology.grid_of(r.value()) != grid) return span;  // distinct ranks (checked by the lowering)
    span.grid = grid;
    std::size_t stride = 1;
    for (std::size_t d = 0; d < grid->sizes.size(); ++d) {
        if (grid->sizes[d] >= 2) span.dims.push_back({d, grid->sizes[d], stride});
        stride *= grid->sizes[d];
    }
    return span;
}

std::string describe(const AlgorithmPerDimension& algorithms) {
    std::string out;
    for (const AllReduceAlgorithm a : algorithms) out += (out.empty() ? "" : "/") + std::string(to_string(a));
    return out;
}

bool goes_per_dimension(const GridSpan& span, const AlgorithmPerDimension& algorithms) {
    return span.multi_dimensional() && (algorithms.size() > 1 || algorithm_of(algorithms.front()).per_dimension());
}

std::string describe_span(const GridSpan& span, const AlgorithmPerDimension& algorithms, std::size_t ranks) {
    if (!goes_per_dimension(span, algorithms)) return std::to_string(ranks);
    std::string out;
    for (const SpanDimension& d : span.dims) out += (out.empty() ? "" : "x") + std::to_string(d.size);
    return out;
}

namespace {

/// The algorithm of dimension j.
AllReduceAlgorithm algorithm_at(const AlgorithmPerDimension& algorithms, std::size_t j) {
    return algorithms.size() == 1 ? algorithms.front() : algorithms[j];
}

/// One line of dimension j: its nodes in coordinate order, and the bytes each holds at that
/// level (what the dimensions before it left: a chunk where they split, everything where not).
struct Line {
    std::vector<NodeId> nodes;
    std::uint64_t bytes = 0;
};

/// Whether dimension j splits (its algorithm reduce-scatters its lines).
bool splits(const GridSpan& span, const AlgorithmPerDimension& algorithms, std::size_t j) {
    return algorithm_of(algorithm_at(algorithms, j)).scatters(span.dims[j].size);
}

std::vector<Line> lines_of(const GridSpan& span, const AlgorithmPerDimension& algorithms, std::size_t j,
                           std::uint64_t bytes) {
    const Topology::Grid& grid = *span.grid;
    const std::size_t n = grid.node_count(), k = span.dims[j].size, stride = span.dims[j].stride;
    std::vector<Line> lines;
    lines.reserve(n / k);
    for (std::size_t local = 0; local < n; ++local) {
        if (local / stride % k != 0) continue;  // one line per node at coordinate 0 of dimension j
        Line line;
        line.nodes.reserve(k);
        for (std::size_t c = 0; c < k; ++c) line.nodes.emplace_back(grid.first_node + local + c * stride);
        line.bytes = bytes;
        for (std::size_t i = 0; i < j; ++i) {
            if (!splits(span, algorithms, i)) continue;
            const std::size_t ki = span.dims[i].size, x = local / span.dims[i].stride % ki;
            line.bytes = algorithm_of(algorithm_at(algorithms, i)).owned_bytes(line.bytes, x, ki);
        }
        lines.push_back(std::move(line));
    }
    return lines;
}

/// All lines of dimension j doing the same phase at once; returns the next free tag.
template <typename Phase>
std::uint64_t each_line(const GridSpan& span, const AlgorithmPerDimension& algorithms, std::size_t j,
                        std::uint64_t bytes, std::uint64_t tag, Phase phase) {
    std::uint64_t next = tag;
    for (const Line& line : lines_of(span, algorithms, j, bytes)) next = std::max(next, phase(line, tag));
    return next;
}

std::uint64_t per_dimension(CollectiveOp op, const GridSpan& span, const AlgorithmPerDimension& algorithms,
                            std::vector<NodeProgram>& programs, std::uint64_t bytes, std::uint64_t tag,
                            std::uint32_t label) {
    const std::size_t dims = span.dims.size();
    const auto of = [&](std::size_t j) -> const AllReduce& { return algorithm_of(algorithm_at(algorithms, j)); };
    if (op == CollectiveOp::all_to_all) {
        // A dimension at a time, each node exchanging its whole n along its line.
        for (std::size_t j = 0; j < dims; ++j) {
            const bool direct = algorithm_at(algorithms, j) == AllReduceAlgorithm::direct;
            tag = each_line(span, algorithms, j, bytes, tag, [&](const Line& line, std::uint64_t t) {
                return direct ? direct_all_to_all(programs, line.nodes, bytes, t, label)
                              : all_to_all(programs, line.nodes, bytes, t, label);
            });
        }
        return tag;
    }
    if (op != CollectiveOp::all_gather)
        for (std::size_t j = 0; j < dims; ++j)
            tag = each_line(span, algorithms, j, bytes, tag, [&](const Line& line, std::uint64_t t) {
                return splits(span, algorithms, j) ? of(j).reduce_scatter(programs, line.nodes, line.bytes, t, label)
                                                   : of(j).lower(programs, line.nodes, line.bytes, t, label);
            });
    if (op != CollectiveOp::reduce_scatter)
        for (std::size_t j = dims; j-- > 0;)
            if (splits(span, algorithms, j))
                tag = each_line(span, algorithms, j, bytes, tag, [&](const Line& line, std::uint64_t t) {
                    return of(j).all_gather(programs, line.nodes, line.bytes, t, label);
                });
    return tag;
}

}  // namespace

std::optional<std::string> unsupported(const Topology& topology, CollectiveOp op,
                                       const AlgorithmPerDimension& algorithms, const std::vector<NodeId>& ranks) {
    if (algorithms.empty()) return "no algorithm given";
    const GridSpan span = grid_span(topology, ranks);
    if (algorithms.size() > 1 && algorithms.size() != span.dims.size())
        return std::to_string(algorithms.size()) + " algorithms (one per dimension) but the " +
               std::to_string(ranks.size()) + " ranks span " +
               (span.multi_dimensional() ? std::to_string(span.dims.size()) + " dimensions"
                                         : std::string("no multi-dimensional grid"));
    const bool per_dim = goes_per_dimension(span, algorithms);
    const std::size_t parts = per_dim ? span.dims.size() : 1;
    for (std::size_t j = 0; j < parts; ++j) {
        const AllReduceAlgorithm a = algorithm_at(algorithms, j);
        const std::size_t p = per_dim ? span.dims[j].size : ranks.size();
        const std::string where = per_dim
                                      ? " in dimension " + std::to_string(j) + " (lines of " + std::to_string(p) + ")"
                                      : " over " + std::to_string(p) + " ranks";
        if (op == CollectiveOp::all_to_all) {
            if (a != AllReduceAlgorithm::direct && a != AllReduceAlgorithm::ring)
                return "all_to_all runs with direct or ring, not " + std::string(to_string(a));
        } else if (op != CollectiveOp::all_reduce && p >= 2 && !algorithm_of(a).scatters(p)) {
            return std::string(to_string(op)) + " needs an algorithm that splits the buffer" + where + ": " +
                   to_string(a) + " does not (" +
                   (a == AllReduceAlgorithm::tree ? "a tree reduces whole" : "it splits a power of two only") + ")";
        }
    }
    return std::nullopt;
}

std::uint64_t simulated_collective(const Topology& topology, CollectiveOp op, const AlgorithmPerDimension& algorithms,
                                   std::vector<NodeProgram>& programs, const std::vector<NodeId>& ranks,
                                   std::uint64_t bytes, std::uint64_t tag_base, std::uint32_t label) {
    if (const auto why = unsupported(topology, op, algorithms, ranks)) throw std::invalid_argument(*why);
    impl::check_ranks(programs, ranks, "collective");
    if (ranks.size() < 2) return tag_base;
    const GridSpan span = grid_span(topology, ranks);
    if (goes_per_dimension(span, algorithms))
        return per_dimension(op, span, algorithms, programs, bytes, tag_base, label);
    const AllReduceAlgorithm a = algorithms.front();
    const AllReduce& algorithm = algorithm_of(a);
    switch (op) {
    case CollectiveOp::all_reduce: return algorithm.simulated(topology, programs, ranks, bytes, tag_base, label);
    case CollectiveOp::reduce_scatter: return algorithm.reduce_scatter(programs, ranks, bytes, tag_base, label);
    case CollectiveOp::all_gather: return algorithm.all_gather(programs, ranks, bytes, tag_base, label);
    case CollectiveOp::all_to_all:
        return a == AllReduceAlgorithm::direct ? direct_all_to_all(programs, ranks, bytes, tag_base, label)
                                               : all_to_all(programs, ranks, bytes, tag_base, label);
    }
    return tag_base;
}

std::uint64_t collective_ops_per_rank(const Topology& topology, CollectiveOp op,
                                      const AlgorithmPerDimension& algorithms, const std::vector<NodeId>& ranks) {
    if (ranks.size() < 2 || algorithms.empty()) return 0;
    const GridSpan span = grid_span(topology, ranks);
    const bool per_dim = goes_per_dimension(span, algorithms);
    std::uint64_t ops = 0;
    for (std::size_t j = 0; j < (per_dim ? span.dims.size() : 1); ++j) {
        const std::size_t p = per_dim ? span.dims[j].size : ranks.size();
        const AllReduce& a = algorithm_of(algorithm_at(algorithms, j));
        switch (op) {
        case CollectiveOp::all_reduce:  // a line of a dimension runs the plain algorithm, never merged
            ops += per_dim ? std::max<std::uint64_t>(a.ops_per_rank(p), 4 * (p - 1)) : a.ops_per_rank(p);
            break;
        case CollectiveOp::reduce_scatter:  // never merged: p - 1 steps at most, a Send and a Recv each
        case CollectiveOp::all_gather:
        case CollectiveOp::all_to_all: ops += 2 * (p - 1); break;
        }
    }
    return ops;
}

void all_reduce_fluid_steps(const AlgorithmPerDimension& algorithms, const std::vector<NodeId>& ranks,
                            FluidSteps& out) {
    const GridSpan span = grid_span(out.topology(), ranks);
    if (!goes_per_dimension(span, algorithms)) {
        algorithm_of(algorithms.front()).fluid_steps(ranks, out);
        return;
    }
    // Dimension j's lines all-reduce (reduce-scatter now, all-gather later: the same steps) the
    // share of n the dimensions before left them, all lines in the same steps.
    struct Lines final : FluidSteps {
        FluidSteps& out;
        double fraction = 1;
        bool first_line = true;
        std::vector<std::size_t> steps;  ///< the first line's steps, which the others share
        std::vector<Picoseconds> latency;
        std::size_t next = 0;
        explicit Lines(FluidSteps& o) : out(o) {}
        std::size_t step(double repeat) override {
            if (first_line) {
                steps.push_back(out.step(repeat));
                latency.emplace_back(0);
            }
            return next++;
        }
        void message(NodeId from, NodeId to, std::size_t step, double share) override {
            out.message(from, to, steps[step], share * fraction);
        }
        const Topology& topology() const override { return out.topology(); }
        Picoseconds route_latency(NodeId from, NodeId to) const override { return out.route_latency(from, to); }
        void total_latency(std::size_t step, Picoseconds l) override {
            latency[step] = std::max(latency[step], l);
            out.total_latency(steps[step], latency[step]);
        }
    };
    double fraction = 1;
    for (std::size_t j = 0; j < span.dims.size(); ++j) {
        Lines lines(out);
        lines.fraction = fraction;
        for (const Line& line : lines_of(span, algorithms, j, 0)) {
            lines.next = 0;
            algorithm_of(algorithm_at(algorithms, j)).fluid_steps(line.nodes, lines);
            lines.first_line = false;
        }
        if (splits(span, algorithms, j)) fraction /= static_cast<double>(span.dims[j].size);
    }
}

}  // namespace fastsim::interconnect
