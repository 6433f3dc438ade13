// SPDX-License-Identifier: MIT
#pragma once

// One all-reduce algorithm (docs/interconnect.md, "Collectives"), everything it defines in one
// place: its messages (collectives.h's generators), its synchronous steps for the fluid model
// the planner costs it with beyond kMaxReplayRanks ranks, its form as the cluster simulates it,
// and how many ops it puts on a rank's stream. Each algorithm is one file under
// models/interconnect/impl/ and one row of the descriptor table in collectives.cpp.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/units.h"
#include "interconnect/program.h"

namespace fastsim::interconnect {

class Topology;

/// Where an algorithm puts its synchronous steps (the fluid model, collective_cost.cpp).
class FluidSteps {
public:
    virtual ~FluidSteps() = default;
    /// A new step, taken `repeat` times; returns its index.
    virtual std::size_t step(double repeat) = 0;
    /// In step `step`, `from` sends `fraction` of the buffer n to `to`.
    virtual void message(NodeId from, NodeId to, std::size_t step, double fraction) = 0;
    /// The topology the steps are costed on.
    [[nodiscard]] virtual const Topology& topology() const = 0;
    /// The route latency from `from` to `to`.
    [[nodiscard]] virtual Picoseconds route_latency(NodeId from, NodeId to) const = 0;
    /// The latency of all of `step`'s repeats together, where the algorithm knows it better than
    /// repeats x its slowest route (by default).
    virtual void total_latency(std::size_t step, Picoseconds latency) = 0;
};

class AllReduce {
public:
    virtual ~AllReduce() = default;
    /// Appends its messages (collectives.h's common arguments); returns the first tag not used.
    virtual std::uint64_t lower(std::vector<NodeProgram>& programs, const std::vector<NodeId>& ranks,
                                std::uint64_t bytes, std::uint64_t tag_base, std::uint32_t label) const = 0;
    /// As the cluster simulates it on `topology` (by default, lower).
    virtual std::uint64_t simulated(const Topology& /*topology*/, std::vector<NodeProgram>& programs,
                                    const std::vector<NodeId>& ranks, std::uint64_t bytes, std::uint64_t tag_base,
                                    std::uint32_t label) const {
        return lower(programs, ranks, bytes, tag_base, label);
    }
    /// Its synchronous steps over `ranks` (at least 2).
    virtual void fluid_steps(const std::vector<NodeId>& ranks, FluidSteps& out) const = 0;
    /// Ops on each rank's stream, at most, of simulated() over p >= 2 ranks (for work estimates).
    [[nodiscard]] virtual std::uint64_t ops_per_rank(std::size_t p) const = 0;
    /// Whether `best` weighs it over p ranks (it stays available when asked for by name).
    [[nodiscard]] virtual bool considered(std::size_t /*p*/) const { return true; }

    /// Whether, asked for alone over every node of a multi-dimensional grid, it runs in each
    /// dimension in turn (collective.h); otherwise it runs over the ranks in their order.
    [[nodiscard]] virtual bool per_dimension() const { return true; }
    /// Whether its all-reduce over p ranks is a reduce-scatter then an all-gather, each of which
    /// it can run alone (reduce_scatter, all_gather). A collective over a grid's dimensions
    /// all-reduces a dimension whose algorithm does not split its lines whole.
    [[nodiscard]] virtual bool scatters(std::size_t /*p*/) const { return false; }
    /// Its reduce-scatter of n bytes (collectives.h's common arguments): rank i ends holding
    /// chunk owned_chunk(i, p) of n (chunk_bytes) reduced. Only where scatters(p)
    /// (std::logic_error otherwise).
    virtual std::uint64_t reduce_scatter(std::vector<NodeProgram>& programs, const std::vector<NodeId>& ranks,
                                         std::uint64_t bytes, std::uint64_t tag_base, std::uint32_t label) const;
    /// Its all-gather of n bytes (the gathered result), rank i contributing chunk owned_chunk(i, p):
    /// the mirror of reduce_scatter. Only where scatters(p).
    virtual std::uint64_t all_gather(std::vector<NodeProgram>& programs, const std::vector<NodeId>& ranks,
                                     std::uint64_t bytes, std::uint64_t tag_base, std::uint32_t label) const;
    /// The chunk rank i holds after reduce_scatter over p ranks.
    [[nodiscard]] virtual std::size_t owned_chunk(std::size_t i, std::size_t /*p*/) const { return i; }
    /// Its bytes, of n: chunk_bytes(n, p, owned_chunk(i, p)) by default.
    [[nodiscard]] virtual std::uint64_t owned_bytes(std::uint64_t bytes, std::size_t i, std::size_t p) const;
};

/// One ring in the ranks' order as the cluster simulates it: ring_all_reduce, or over more than
/// kMaxReplayRanks ranks coalesced_ring_all_reduce with the route latencies on `topology`
/// (collectives.h's common arguments).
std::uint64_t flat_ring_simulated(const Topology& topology, std::vector<NodeProgram>& programs,
                                  const std::vector<NodeId>& ranks, std::uint64_t bytes, std::uint64_t tag_base,
                                  std::uint32_t label);
/// Its synchronous steps: 2(p - 1) steps of one chunk per rank, whose latency is the ring's
/// critical path, rank i's last arrival after the 2(p - 1) routes behind it: max_i Σ λ_{i - t},
/// t = 0 .. 2p - 3 (λ_j the route latency from rank j to rank j + 1), not 2(p - 1) x the
/// slowest route.
void flat_ring_fluid_steps(const std::vector<NodeId>& ranks, FluidSteps& out);

}  // namespace fastsim::interconnect
