// SPDX-License-Identifier: MIT
// tree: a binomial-tree reduce to the first rank, then a binomial broadcast.
#include <algorithm>
#include <stdexcept>

#include "common/checked.h"
#include "interconnect/all_reduce.h"
#include "interconnect/collectives.h"
#include "interconnect/impl/messages.h"

namespace fastsim::interconnect {

using impl::ceil_log2;
using impl::check_ranks;
using impl::recv;
using impl::send;

std::uint64_t tree_all_reduce(std::vector<NodeProgram>& programs, const std::vector<NodeId>& ranks, std::uint64_t bytes,
                              std::uint64_t tag_base, std::uint32_t label) {
    check_ranks(programs, ranks, "tree_all_reduce");
    const std::size_t p = ranks.size();
    if (p < 2) return tag_base;
    std::size_t rounds = 0;  // ceil(log2 p)
    while ((std::size_t{1} << rounds) < p) ++rounds;
    // 1. Reduce: in round k, index i with lowest set bit k sends to i - 2^k; an index whose
    //    bits 0..k are clear receives from i + 2^k first (if that index exists).
    for (std::size_t i = 0; i < p; ++i)
        for (std::size_t k = 0; k < rounds; ++k) {
            const std::size_t bit = std::size_t{1} << k;
            if (i & bit) {
                send(programs, ranks[i], ranks[i - bit], bytes, tag_base + k, label);
                break;
            }
            if (i + bit < p) recv(programs, ranks[i], ranks[i + bit], tag_base + k, label);
        }
    // 2. Broadcast, the mirror image: receive from the parent, then send to the children from
    //    the farthest (highest round) down.
    const std::uint64_t bcast = tag_base + rounds;
    for (std::size_t i = 0; i < p; ++i) {
        std::size_t low = rounds;  // lowest set bit of i; rounds for the root
        for (std::size_t k = 0; k < rounds; ++k)
            if (i & (std::size_t{1} << k)) {
                low = k;
                break;
            }
        if (i != 0) recv(programs, ranks[i], ranks[i - (std::size_t{1} << low)], bcast + low, label);
        for (std::size_t k = low; k-- > 0;) {
            const std::size_t bit = std::size_t{1} << k;
            if (i + bit < p) send(programs, ranks[i], ranks[i + bit], bytes, bcast + k, label);
        }
    }
    return bcast + rounds;
}

namespace {

class Tree final : public AllReduce {
public:
    std::uint64_t lower(std::vector<NodeProgram>& programs, const std::vector<NodeId>& ranks, std::uint64_t bytes,
                        std::uint64_t tag_base, std::uint32_t label) const override {
        return tree_all_reduce(programs, ranks, bytes, tag_base, label);
    }
    /// The binomial reduce's rounds, then the broadcast's.
    void fluid_steps(const std::vector<NodeId>& ranks, FluidSteps& out) const override {
        const std::size_t p = ranks.size();
        for (std::size_t bit = 1; bit < p; bit <<= 1) {
            const std::size_t s = out.step(2);
            for (std::size_t i = bit; i < p; i += 2 * bit) out.message(ranks[i], ranks[i - bit], s, 1.0);
        }
    }
    /// A rank sends and receives at most once per round, each way.
    std::uint64_t ops_per_rank(std::size_t p) const override { return 4 * ceil_log2(p) + 2; }
};

}  // namespace

const AllReduce& tree_algorithm() {
    static const Tree kAlgorithm;
    return kAlgorithm;
}

}  // namespace fastsim::interconnect
