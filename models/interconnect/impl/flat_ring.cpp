// SPDX-License-Identifier: MIT
// flat_ring: one ring in the ranks' order whatever the topology (over a grid too, where `ring`
// goes dimension by dimension): the reduce-scatter, then the all-gather, round that ring.
#include "interconnect/all_reduce.h"
#include "interconnect/collective_cost.h"
#include "interconnect/collectives.h"

namespace fastsim::interconnect {
namespace {

class FlatRing final : public AllReduce {
public:
    std::uint64_t lower(std::vector<NodeProgram>& programs, const std::vector<NodeId>& ranks, std::uint64_t bytes,
                        std::uint64_t tag_base, std::uint32_t label) const override {
        return ring_all_reduce(programs, ranks, bytes, tag_base, label);
    }
    std::uint64_t simulated(const Topology& topology, std::vector<NodeProgram>& programs,
                            const std::vector<NodeId>& ranks, std::uint64_t bytes, std::uint64_t tag_base,
                            std::uint32_t label) const override {
        return flat_ring_simulated(topology, programs, ranks, bytes, tag_base, label);
    }
    void fluid_steps(const std::vector<NodeId>& ranks, FluidSteps& out) const override {
        flat_ring_fluid_steps(ranks, out);
    }
    /// (Compute,) Send, Recv per round.
    std::uint64_t ops_per_rank(std::size_t p) const override {
        return p <= kMaxReplayRanks ? 4 * (p - 1) : 3 * 2 * (kMaxReplayRanks - 1);
    }
    /// `ring` is never slower (the same ring off a grid, fewer latencies on one): by name only.
    bool considered(std::size_t /*p*/) const override { return false; }
    /// One ring over a grid's nodes too.
    bool per_dimension() const override { return false; }
    bool scatters(std::size_t /*p*/) const override { return true; }
    std::uint64_t reduce_scatter(std::vector<NodeProgram>& programs, const std::vector<NodeId>& ranks,
                                 std::uint64_t bytes, std::uint64_t tag_base, std::uint32_t label) const override {
        return ring_reduce_scatter(programs, ranks, bytes, tag_base, label);
    }
    std::uint64_t all_gather(std::vector<NodeProgram>& programs, const std::vector<NodeId>& ranks, std::uint64_t bytes,
                             std::uint64_t tag_base, std::uint32_t label) const override {
        return ring_all_gather(programs, ranks, bytes, tag_base, label);
    }
    std::size_t owned_chunk(std::size_t i, std::size_t p) const override { return (i + 1) % p; }
};

}  // namespace

const AllReduce& flat_ring_algorithm() {
    static const FlatRing kAlgorithm;
    return kAlgorithm;
}

}  // namespace fastsim::interconnect
