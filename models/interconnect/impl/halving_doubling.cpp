// SPDX-License-Identifier: MIT
// halving_doubling: Rabenseifner's recursive halving, then recursive doubling, farthest partner
// first (impl::halving_doubling, which halving_doubling_nearest shares).
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

namespace impl {

std::uint64_t halving_doubling(std::vector<NodeProgram>& programs, const std::vector<NodeId>& ranks,
                               std::uint64_t bytes, std::uint64_t tag, std::uint32_t label, PartnerOrder order,
                               HalvingPart part) {
    const std::size_t p = ranks.size();
    if (p < 2) return tag;
    std::size_t core = 1, steps = 0;  // p' and log2 p'
    while (core * 2 <= p) {
        core *= 2;
        ++steps;
    }
    const std::size_t extra = p - core;
    if (extra != 0 && part != HalvingPart::all_reduce)
        throw std::logic_error("halving-doubling splits a power-of-two number of ranks only");
    const auto distance_of = [&](std::size_t k) {
        return order == PartnerOrder::farthest_first ? core >> (k + 1) : std::size_t{1} << k;
    };
    // 1. Fold the extra ranks into the first ones.
    if (part == HalvingPart::all_reduce) {
        for (std::size_t i = 0; i < extra; ++i) {
            send(programs, ranks[core + i], ranks[i], bytes, tag, label);
            recv(programs, ranks[i], ranks[core + i], tag, label);
        }
        ++tag;
    }
    // 2. Recursive halving: every rank's segment [lo, hi) of the buffer halves each step, the
    //    lower rank of a pair keeping the lower half (run without messages for an all-gather,
    //    which starts from the segments it leaves).
    struct Segment {
        std::uint64_t lo, hi;
    };
    std::vector<Segment> segment(core, Segment{0, bytes});
    std::vector<std::vector<Segment>> history(core);  // the segment before each step
    for (std::size_t k = 0; k < steps; ++k) {
        const std::size_t distance = distance_of(k);
        if (part != HalvingPart::all_gather) {
            for (std::size_t i = 0; i < core; ++i) {
                const std::size_t partner = i ^ distance;
                const Segment seg = segment[i];
                const std::uint64_t mid = seg.lo + (seg.hi - seg.lo) / 2;
                const std::uint64_t sent = i < partner ? seg.hi - mid : mid - seg.lo;  // the half the partner keeps
                send(programs, ranks[i], ranks[partner], sent, tag + k, label);
                recv(programs, ranks[i], ranks[partner], tag + k, label);
            }
        }
        for (std::size_t i = 0; i < core; ++i) {
            history[i].push_back(segment[i]);
            const std::uint64_t mid = segment[i].lo + (segment[i].hi - segment[i].lo) / 2;
            segment[i] = i < (i ^ distance) ? Segment{segment[i].lo, mid} : Segment{mid, segment[i].hi};
        }
    }
    if (part != HalvingPart::all_gather) tag += steps;
    if (part == HalvingPart::reduce_scatter) return tag;
    // 3. Recursive doubling: the steps mirrored, each rank sending the segment it holds.
    for (std::size_t k = steps; k-- > 0;) {
        const std::size_t partner_distance = distance_of(k);
        for (std::size_t i = 0; i < core; ++i) {
            const std::size_t partner = i ^ partner_distance;
            send(programs, ranks[i], ranks[partner], segment[i].hi - segment[i].lo, tag + k, label);
            recv(programs, ranks[i], ranks[partner], tag + k, label);
        }
        for (std::size_t i = 0; i < core; ++i) segment[i] = history[i][k];
    }
    tag += steps;
    if (part == HalvingPart::all_gather) return tag;
    // 4. Unfold: the extra ranks get the result.
    for (std::size_t i = 0; i < extra; ++i) {
        send(programs, ranks[i], ranks[core + i], bytes, tag, label);
        recv(programs, ranks[core + i], ranks[i], tag, label);
    }
    return tag + 1;
}

void halving_doubling_fluid_steps(const std::vector<NodeId>& ranks, FluidSteps& out, PartnerOrder order) {
    const std::size_t p = ranks.size();
    std::size_t core = 1, steps = 0;
    while (core * 2 <= p) {
        core *= 2;
        ++steps;
    }
    if (core < p) {
        const std::size_t s = out.step(2);
        for (std::size_t i = 0; core + i < p; ++i) out.message(ranks[core + i], ranks[i], s, 1.0);
    }
    double fraction = 1.0;
    for (std::size_t k = 0; k < steps; ++k) {
        const std::size_t distance = order == PartnerOrder::farthest_first ? core >> (k + 1) : std::size_t{1} << k;
        fraction /= 2;
        const std::size_t s = out.step(2);
        for (std::size_t i = 0; i < core; ++i) out.message(ranks[i], ranks[i ^ distance], s, fraction);
    }
}

std::size_t halving_owned_chunk(std::size_t i, std::size_t p, PartnerOrder order) {
    if (order == PartnerOrder::farthest_first) return i;
    std::size_t reversed = 0;  // nearest first: bit 0 chooses the half first
    for (std::size_t bit = 1, high = p >> 1; bit < p; bit <<= 1, high >>= 1)
        if (i & bit) reversed |= high;
    return reversed;
}

std::uint64_t halving_owned_bytes(std::uint64_t bytes, std::size_t i, std::size_t p, PartnerOrder order) {
    std::uint64_t lo = 0, hi = bytes;
    for (std::size_t k = 0; (std::size_t{1} << k) < p; ++k) {
        const std::size_t distance = order == PartnerOrder::farthest_first ? p >> (k + 1) : std::size_t{1} << k;
        const std::uint64_t mid = lo + (hi - lo) / 2;
        if (i < (i ^ distance))
            hi = mid;
        else
            lo = mid;
    }
    return hi - lo;
}

}  // namespace impl

std::uint64_t halving_doubling_all_reduce(std::vector<NodeProgram>& programs, const std::vector<NodeId>& ranks,
                                          std::uint64_t bytes, std::uint64_t tag_base, std::uint32_t label) {
    check_ranks(programs, ranks, "halving_doubling_all_reduce");
    return impl::halving_doubling(programs, ranks, bytes, tag_base, label, impl::PartnerOrder::farthest_first,
                                  impl::HalvingPart::all_reduce);
}

namespace {

class HalvingDoubling final : public AllReduce {
public:
    std::uint64_t lower(std::vector<NodeProgram>& programs, const std::vector<NodeId>& ranks, std::uint64_t bytes,
                        std::uint64_t tag_base, std::uint32_t label) const override {
        return halving_doubling_all_reduce(programs, ranks, bytes, tag_base, label);
    }
    /// The fold and unfold, then each halving step with its doubling mirror.
    void fluid_steps(const std::vector<NodeId>& ranks, FluidSteps& out) const override {
        impl::halving_doubling_fluid_steps(ranks, out, impl::PartnerOrder::farthest_first);
    }
    /// Once each way per step, and the fold and unfold.
    std::uint64_t ops_per_rank(std::size_t p) const override { return 4 * ceil_log2(p) + 2; }
    bool scatters(std::size_t p) const override { return p >= 1 && (p & (p - 1)) == 0; }
    std::uint64_t owned_bytes(std::uint64_t bytes, std::size_t i, std::size_t p) const override {
        return impl::halving_owned_bytes(bytes, i, p, impl::PartnerOrder::farthest_first);
    }
    std::uint64_t reduce_scatter(std::vector<NodeProgram>& programs, const std::vector<NodeId>& ranks,
                                 std::uint64_t bytes, std::uint64_t tag_base, std::uint32_t label) const override {
        check_ranks(programs, ranks, "halving_doubling reduce-scatter");
        return impl::halving_doubling(programs, ranks, bytes, tag_base, label, impl::PartnerOrder::farthest_first,
                                      impl::HalvingPart::reduce_scatter);
    }
    std::uint64_t all_gather(std::vector<NodeProgram>& programs, const std::vector<NodeId>& ranks, std::uint64_t bytes,
                             std::uint64_t tag_base, std::uint32_t label) const override {
        check_ranks(programs, ranks, "halving_doubling all-gather");
        return impl::halving_doubling(programs, ranks, bytes, tag_base, label, impl::PartnerOrder::farthest_first,
                                      impl::HalvingPart::all_gather);
    }
};

}  // namespace

const AllReduce& halving_doubling_algorithm() {
    static const HalvingDoubling kAlgorithm;
    return kAlgorithm;
}

}  // namespace fastsim::interconnect
