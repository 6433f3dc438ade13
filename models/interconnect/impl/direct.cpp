// SPDX-License-Identifier: MIT
// direct: every rank sends each other rank its chunk at once, twice (reduce-scatter,
// all-gather).
#include <algorithm>
#include <stdexcept>

#include "common/checked.h"
#include "interconnect/all_reduce.h"
#include "interconnect/collectives.h"
#include "interconnect/collective_cost.h"
#include "interconnect/impl/messages.h"
#include "interconnect/topology.h"

namespace fastsim::interconnect {

using impl::check_ranks;
using impl::recv;
using impl::send;

namespace {

/// One direct phase: every rank sends every other rank chunk `to` of n (reduce-scatter) or its
/// own chunk (all-gather) at once, then receives theirs. Uses one tag.
void direct_phase(std::vector<NodeProgram>& programs, const std::vector<NodeId>& ranks, std::uint64_t bytes,
                  std::uint64_t tag, std::uint32_t label, bool gather) {
    const std::size_t p = ranks.size();
    for (std::size_t i = 0; i < p; ++i) {
        for (std::size_t s = 1; s < p; ++s) {
            const std::size_t to = (i + s) % p;
            send(programs, ranks[i], ranks[to], chunk_bytes(bytes, p, gather ? i : to), tag, label);
        }
        for (std::size_t s = 1; s < p; ++s) recv(programs, ranks[i], ranks[(i + p - s) % p], tag, label);
    }
}

}  // namespace

std::uint64_t direct_all_reduce(std::vector<NodeProgram>& programs, const std::vector<NodeId>& ranks,
                                std::uint64_t bytes, std::uint64_t tag_base, std::uint32_t label) {
    check_ranks(programs, ranks, "direct_all_reduce");
    if (ranks.size() < 2) return tag_base;
    direct_phase(programs, ranks, bytes, tag_base, label, false);
    direct_phase(programs, ranks, bytes, tag_base + 1, label, true);
    return tag_base + 2;
}

std::uint64_t direct_all_to_all(std::vector<NodeProgram>& programs, const std::vector<NodeId>& ranks,
                                std::uint64_t bytes, std::uint64_t tag_base, std::uint32_t label) {
    check_ranks(programs, ranks, "direct_all_to_all");
    if (ranks.size() < 2) return tag_base;
    direct_phase(programs, ranks, bytes, tag_base, label, false);  // block j of n for rank j
    return tag_base + 1;
}

namespace {

class Direct final : public AllReduce {
public:
    std::uint64_t lower(std::vector<NodeProgram>& programs, const std::vector<NodeId>& ranks, std::uint64_t bytes,
                        std::uint64_t tag_base, std::uint32_t label) const override {
        return direct_all_reduce(programs, ranks, bytes, tag_base, label);
    }
    void fluid_steps(const std::vector<NodeId>& ranks, FluidSteps& out) const override {
        const std::size_t p = ranks.size();
        const std::size_t s = out.step(2);
        for (std::size_t i = 0; i < p; ++i)
            for (std::size_t j = 0; j < p; ++j)
                if (i != j) out.message(ranks[i], ranks[j], s, 1.0 / static_cast<double>(p));
    }
    std::uint64_t ops_per_rank(std::size_t p) const override { return 4 * (p - 1); }
    bool scatters(std::size_t /*p*/) const override { return true; }
    std::uint64_t reduce_scatter(std::vector<NodeProgram>& programs, const std::vector<NodeId>& ranks,
                                 std::uint64_t bytes, std::uint64_t tag_base, std::uint32_t label) const override {
        check_ranks(programs, ranks, "direct reduce-scatter");
        if (ranks.size() < 2) return tag_base;
        direct_phase(programs, ranks, bytes, tag_base, label, false);
        return tag_base + 1;
    }
    std::uint64_t all_gather(std::vector<NodeProgram>& programs, const std::vector<NodeId>& ranks, std::uint64_t bytes,
                             std::uint64_t tag_base, std::uint32_t label) const override {
        check_ranks(programs, ranks, "direct all-gather");
        if (ranks.size() < 2) return tag_base;
        direct_phase(programs, ranks, bytes, tag_base, label, true);
        return tag_base + 1;
    }
    /// It posts p(p - 1) messages per phase: weighed only up to kMaxDirectRanks ranks.
    bool considered(std::size_t p) const override { return p <= kMaxDirectRanks; }
};

}  // namespace

const AllReduce& direct_algorithm() {
    static const Direct kAlgorithm;
    return kAlgorithm;
}

}  // namespace fastsim::interconnect
