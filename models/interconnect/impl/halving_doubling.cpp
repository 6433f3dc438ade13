// SPDX-License-Identifier: MIT
// halving_doubling: Rabenseifner's recursive halving, then recursive doubling.
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

std::uint64_t halving_doubling_all_reduce(std::vector<NodeProgram>& programs, const std::vector<NodeId>& ranks,
                                          std::uint64_t bytes, std::uint64_t tag_base, std::uint32_t label) {
    check_ranks(programs, ranks, "halving_doubling_all_reduce");
    const std::size_t p = ranks.size();
    if (p < 2) return tag_base;
    std::size_t core = 1, steps = 0;  // p' and log2 p'
    while (core * 2 <= p) {
        core *= 2;
        ++steps;
    }
    const std::size_t extra = p - core;
    // 1. Fold the extra ranks into the first ones.
    for (std::size_t i = 0; i < extra; ++i) {
        send(programs, ranks[core + i], ranks[i], bytes, tag_base, label);
        recv(programs, ranks[i], ranks[core + i], tag_base, label);
    }
    // 2. Recursive halving: every rank's segment [lo, hi) of the buffer halves each step.
    struct Segment {
        std::uint64_t lo, hi;
    };
    std::vector<Segment> segment(core, Segment{0, bytes});
    std::vector<std::vector<Segment>> history(core);  // the segment before each step
    for (std::size_t k = 0; k < steps; ++k) {
        const std::size_t distance = core >> (k + 1);
        for (std::size_t i = 0; i < core; ++i) {
            const std::size_t partner = i ^ distance;
            const Segment seg = segment[i];
            const std::uint64_t mid = seg.lo + (seg.hi - seg.lo) / 2;
            const bool lower = i < partner;
            const std::uint64_t sent = lower ? seg.hi - mid : mid - seg.lo;  // the half the partner keeps
            send(programs, ranks[i], ranks[partner], sent, tag_base + 1 + k, label);
            recv(programs, ranks[i], ranks[partner], tag_base + 1 + k, label);
        }
        for (std::size_t i = 0; i < core; ++i) {
            history[i].push_back(segment[i]);
            const std::uint64_t mid = segment[i].lo + (segment[i].hi - segment[i].lo) / 2;
            segment[i] = i < (i ^ distance) ? Segment{segment[i].lo, mid} : Segment{mid, segment[i].hi};
        }
    }
    // 3. Recursive doubling: the steps mirrored, each rank sending the segment it holds.
    const std::uint64_t gather = tag_base + 1 + steps;
    for (std::size_t k = steps; k-- > 0;) {
        const std::size_t distance = core >> (k + 1);
        for (std::size_t i = 0; i < core; ++i) {
            const std::size_t partner = i ^ distance;
            send(programs, ranks[i], ranks[partner], segment[i].hi - segment[i].lo, gather + k, label);
            recv(programs, ranks[i], ranks[partner], gather + k, label);
        }
        for (std::size_t i = 0; i < core; ++i) segment[i] = history[i][k];
    }
    // 4. Unfold: the extra ranks get the result.
    const std::uint64_t unfold = gather + steps;
    for (std::size_t i = 0; i < extra; ++i) {
        send(programs, ranks[i], ranks[core + i], bytes, unfold, label);
        recv(programs, ranks[core + i], ranks[i], unfold, label);
    }
    return unfold + 1;
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
        const std::size_t p = ranks.size();
        std::size_t core = 1;
        while (core * 2 <= p) core *= 2;
        if (core < p) {
            const std::size_t s = out.step(2);
            for (std::size_t i = 0; core + i < p; ++i) out.message(ranks[core + i], ranks[i], s, 1.0);
        }
        double fraction = 1.0;
        for (std::size_t distance = core / 2; distance >= 1; distance /= 2) {
            fraction /= 2;
            const std::size_t s = out.step(2);
            for (std::size_t i = 0; i < core; ++i) out.message(ranks[i], ranks[i ^ distance], s, fraction);
        }
    }
    /// Once each way per step, and the fold and unfold.
    std::uint64_t ops_per_rank(std::size_t p) const override { return 4 * ceil_log2(p) + 2; }
};

}  // namespace

const AllReduce& halving_doubling_algorithm() {
    static const HalvingDoubling kAlgorithm;
    return kAlgorithm;
}

}  // namespace fastsim::interconnect
