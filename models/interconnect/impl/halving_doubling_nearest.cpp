// SPDX-License-Identifier: MIT
// halving_doubling_nearest: halving-doubling with the nearest partner first (step k: rank
// i xor 2^k), as ASTRA-sim orders it; on a ring the early, largest steps then travel one hop.
#include "interconnect/all_reduce.h"
#include "interconnect/collectives.h"
#include "interconnect/impl/messages.h"

namespace fastsim::interconnect {

using impl::ceil_log2;
using impl::check_ranks;
using impl::HalvingPart;
using impl::PartnerOrder;

std::uint64_t halving_doubling_nearest_all_reduce(std::vector<NodeProgram>& programs, const std::vector<NodeId>& ranks,
                                                  std::uint64_t bytes, std::uint64_t tag_base, std::uint32_t label) {
    check_ranks(programs, ranks, "halving_doubling_nearest_all_reduce");
    return impl::halving_doubling(programs, ranks, bytes, tag_base, label, PartnerOrder::nearest_first,
                                  HalvingPart::all_reduce);
}

namespace {

class HalvingDoublingNearest final : public AllReduce {
public:
    std::uint64_t lower(std::vector<NodeProgram>& programs, const std::vector<NodeId>& ranks, std::uint64_t bytes,
                        std::uint64_t tag_base, std::uint32_t label) const override {
        return halving_doubling_nearest_all_reduce(programs, ranks, bytes, tag_base, label);
    }
    void fluid_steps(const std::vector<NodeId>& ranks, FluidSteps& out) const override {
        impl::halving_doubling_fluid_steps(ranks, out, PartnerOrder::nearest_first);
    }
    std::uint64_t ops_per_rank(std::size_t p) const override { return 4 * ceil_log2(p) + 2; }
    bool scatters(std::size_t p) const override { return p >= 1 && (p & (p - 1)) == 0; }
    std::uint64_t reduce_scatter(std::vector<NodeProgram>& programs, const std::vector<NodeId>& ranks,
                                 std::uint64_t bytes, std::uint64_t tag_base, std::uint32_t label) const override {
        check_ranks(programs, ranks, "halving_doubling_nearest reduce-scatter");
        return impl::halving_doubling(programs, ranks, bytes, tag_base, label, PartnerOrder::nearest_first,
                                      HalvingPart::reduce_scatter);
    }
    std::uint64_t all_gather(std::vector<NodeProgram>& programs, const std::vector<NodeId>& ranks, std::uint64_t bytes,
                             std::uint64_t tag_base, std::uint32_t label) const override {
        check_ranks(programs, ranks, "halving_doubling_nearest all-gather");
        return impl::halving_doubling(programs, ranks, bytes, tag_base, label, PartnerOrder::nearest_first,
                                      HalvingPart::all_gather);
    }
    std::size_t owned_chunk(std::size_t i, std::size_t p) const override {
        return impl::halving_owned_chunk(i, p, PartnerOrder::nearest_first);
    }
    std::uint64_t owned_bytes(std::uint64_t bytes, std::size_t i, std::size_t p) const override {
        return impl::halving_owned_bytes(bytes, i, p, PartnerOrder::nearest_first);
    }
};

}  // namespace

const AllReduce& halving_doubling_nearest_algorithm() {
    static const HalvingDoublingNearest kAlgorithm;
    return kAlgorithm;
}

}  // namespace fastsim::interconnect
