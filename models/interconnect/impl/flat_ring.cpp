// SPDX-License-Identifier: MIT
// flat_ring: one ring in the ranks' order whatever the topology (over a grid too, where `ring`
// goes dimension by dimension): the reduce-scatter, then the all-gather, round that ring.
#include "interconnect/collective_cost.h"
#include "interconnect/impl/one_ring.h"

namespace fastsim::interconnect {
namespace {

class FlatRing final : public impl::OneRing {
public:
    /// (Compute,) Send, Recv per round.
    std::uint64_t ops_per_rank(std::size_t p) const override {
        return p <= kMaxReplayRanks ? 4 * (p - 1) : 3 * 2 * (kMaxReplayRanks - 1);
    }
    /// `ring` is never slower (the same ring off a grid, fewer latencies on one): by name only.
    bool considered(std::size_t /*p*/) const override { return false; }
    /// One ring over a grid's nodes too.
    bool per_dimension() const override { return false; }
};

}  // namespace

const AllReduce& flat_ring_algorithm() {
    static const FlatRing kAlgorithm;
    return kAlgorithm;
}

}  // namespace fastsim::interconnect
