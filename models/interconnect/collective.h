// SPDX-License-Identifier: MIT
#pragma once

// A collective as the workload asks for it (which op, over which ranks) and as the network runs
// it (which algorithm in each dimension), after ASTRA-sim's split (docs/interconnect.md,
// "Collectives per dimension"). Over every node of a multi-dimensional grid (a torus, or a
// group of `dimensions`), a collective runs dimension by dimension, lowest first, with its own
// algorithm in each: an all-reduce reduce-scatters along each dimension's lines in turn, each
// on the chunk the one before left, then all-gathers back in the reverse order; a dimension
// whose algorithm does not split (tree, or halving-doubling over a line that is not a power
// of two) all-reduces its lines whole instead. Elsewhere the collective runs over the ranks in
// their order.

#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/enum_names.h"
#include "interconnect/collectives.h"
#include "interconnect/program.h"
#include "interconnect/topology.h"

namespace fastsim::interconnect {

class FluidSteps;

/// What a collective computes (collectives.h's common arguments say what n is for each).
enum class CollectiveOp : std::uint8_t { all_reduce, reduce_scatter, all_gather, all_to_all };
inline constexpr CollectiveOp kCollectiveOps[] = {CollectiveOp::all_reduce, CollectiveOp::reduce_scatter,
                                                  CollectiveOp::all_gather, CollectiveOp::all_to_all};
const EnumNames<CollectiveOp, std::size(kCollectiveOps)>& enum_names(CollectiveOp);
inline const char* to_string(CollectiveOp op) { return name_of(op).data(); }

/// One dimension of size >= 2 of the grid a collective spans.
struct SpanDimension {
    std::size_t index = 0;   ///< in Topology::Grid::sizes
    std::size_t size = 0;    ///< nodes per line
    std::size_t stride = 0;  ///< node-id distance between neighbours of a line
};

/// The grid `ranks` are every node of and its dimensions of size >= 2, lowest first; grid is
/// null (and dims empty) unless the ranks are exactly one grid's nodes, in any order.
struct GridSpan {
    const Topology::Grid* grid = nullptr;
    std::vector<SpanDimension> dims;
    /// Whether a collective over it goes dimension by dimension: two or more dimensions.
    [[nodiscard]] bool multi_dimensional() const { return dims.size() >= 2; }
};
GridSpan grid_span(const Topology& topology, const std::vector<NodeId>& ranks);

/// The algorithms of one collective: one for every dimension, or one per dimension of its
/// GridSpan, lowest first.
using AlgorithmPerDimension = std::vector<AllReduceAlgorithm>;

/// Whether a collective over `span` with `algorithms` runs dimension by dimension: a
/// multi-dimensional span, unless the one algorithm given does not go per dimension (flat_ring).
bool goes_per_dimension(const GridSpan& span, const AlgorithmPerDimension& algorithms);

/// What such a collective goes through, for reports: its span's dimension sizes ("8x4") when it
/// goes per dimension, else the rank count ("21").
std::string describe_span(const GridSpan& span, const AlgorithmPerDimension& algorithms, std::size_t ranks);

/// Why `op` cannot run over `ranks` on `topology` with `algorithms`, or nothing: all-to-all runs
/// with direct or ring only; a reduce-scatter or an all-gather needs algorithms that split
/// (not tree; halving-doubling over a power of two); more than one algorithm needs a
/// multi-dimensional span with that many dimensions.
std::optional<std::string> unsupported(const Topology& topology, CollectiveOp op,
                                       const AlgorithmPerDimension& algorithms, const std::vector<NodeId>& ranks);

/// Appends `op` over `ranks` as the cluster simulates it (collectives.h's common arguments):
/// dimension by dimension over a multi-dimensional span unless the one algorithm given does not
/// go per dimension (flat_ring), otherwise over the ranks in order (an all-reduce as
/// AllReduce::simulated; an all-to-all pairwise, `ring`, or all at once, `direct`).
/// std::invalid_argument where unsupported().
std::uint64_t simulated_collective(const Topology& topology, CollectiveOp op, const AlgorithmPerDimension& algorithms,
                                   std::vector<NodeProgram>& programs, const std::vector<NodeId>& ranks,
                                   std::uint64_t bytes, std::uint64_t tag_base, std::uint32_t label);

/// The synchronous steps of the all-reduce simulated_collective runs (the fluid model's input):
/// over a multi-dimensional span each dimension's algorithm's steps on its lines, at the share
/// of n that dimension handles.
void all_reduce_fluid_steps(const AlgorithmPerDimension& algorithms, const std::vector<NodeId>& ranks, FluidSteps& out);

/// Ops on each rank's stream, at most, of simulated_collective (for work estimates).
std::uint64_t collective_ops_per_rank(const Topology& topology, CollectiveOp op,
                                      const AlgorithmPerDimension& algorithms, const std::vector<NodeId>& ranks);

/// "ring" or "ring/direct": the algorithms' names, lowest dimension first.
std::string describe(const AlgorithmPerDimension& algorithms);

}  // namespace fastsim::interconnect
