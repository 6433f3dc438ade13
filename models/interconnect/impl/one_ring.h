// SPDX-License-Identifier: MIT
#pragma once

// What `ring` and `flat_ring` share: one ring in the ranks' order, its all-reduce (merged into
// rounds beyond kMaxReplayRanks ranks, flat_ring_simulated), its fluid steps and its halves. They
// differ in whether they go per dimension over a grid and whether `best` weighs them.

#include "interconnect/all_reduce.h"
#include "interconnect/collectives.h"

namespace fastsim::interconnect::impl {

class OneRing : public AllReduce {
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
    bool scatters(std::size_t /*p*/) const override { return true; }
    std::uint64_t reduce_scatter(std::vector<NodeProgram>& programs, const std::vector<NodeId>& ranks,
                                 std::uint64_t bytes, std::uint64_t tag_base, std::uint32_t label) const override {
        return ring_reduce_scatter(programs, ranks, bytes, tag_base, label);
    }
    std::uint64_t all_gather(std::vector<NodeProgram>& programs, const std::vector<NodeId>& ranks, std::uint64_t bytes,
                             std::uint64_t tag_base, std::uint32_t label) const override {
        return ring_all_gather(programs, ranks, bytes, tag_base, label);
    }
    /// Reduce-scatter leaves rank i chunk (i + 1) mod p.
    std::size_t owned_chunk(std::size_t i, std::size_t p) const override { return (i + 1) % p; }
};

}  // namespace fastsim::interconnect::impl
