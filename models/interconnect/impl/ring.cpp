// SPDX-License-Identifier: MIT
// ring: the ring all-reduce (reduce-scatter, then all-gather round the ring): one ring in the
// ranks' order (merged into rounds for large rings, flat_ring_simulated, which flat_ring
// shares); over a whole grid a ring in each dimension in turn (collective.h).
#include <algorithm>
#include <stdexcept>

#include "common/checked.h"
#include "interconnect/all_reduce.h"
#include "interconnect/collectives.h"
#include "interconnect/collective_cost.h"
#include "interconnect/impl/messages.h"
#include "interconnect/impl/one_ring.h"
#include "interconnect/topology.h"

namespace fastsim::interconnect {

using impl::check_ranks;
using impl::recv;
using impl::send;

namespace {

/// p-1 ring steps: in step s rank i sends chunk (i + first_offset - s) mod p to rank i+1, then
/// receives from rank i-1. Shared by reduce-scatter (offset 0) and all-gather (offset 1).
std::uint64_t ring_steps(std::vector<NodeProgram>& programs, const std::vector<NodeId>& ranks, std::uint64_t bytes,
                         std::uint64_t tag_base, std::uint32_t label, std::size_t first_offset) {
    const std::size_t p = ranks.size();
    if (p < 2) return tag_base;
    for (std::size_t s = 0; s + 1 < p; ++s)
        for (std::size_t i = 0; i < p; ++i) {
            const std::size_t chunk = (i + first_offset + p - s) % p;
            send(programs, ranks[i], ranks[(i + 1) % p], chunk_bytes(bytes, p, chunk), tag_base + s, label);
            recv(programs, ranks[i], ranks[(i + p - 1) % p], tag_base + s, label);
        }
    return tag_base + (p - 1);
}

}  // namespace

std::uint64_t ring_reduce_scatter(std::vector<NodeProgram>& programs, const std::vector<NodeId>& ranks,
                                  std::uint64_t bytes, std::uint64_t tag_base, std::uint32_t label) {
    check_ranks(programs, ranks, "ring_reduce_scatter");
    return ring_steps(programs, ranks, bytes, tag_base, label, 0);
}

std::uint64_t ring_all_gather(std::vector<NodeProgram>& programs, const std::vector<NodeId>& ranks, std::uint64_t bytes,
                              std::uint64_t tag_base, std::uint32_t label) {
    check_ranks(programs, ranks, "ring_all_gather");
    return ring_steps(programs, ranks, bytes, tag_base, label, 1);
}

std::uint64_t ring_all_reduce(std::vector<NodeProgram>& programs, const std::vector<NodeId>& ranks, std::uint64_t bytes,
                              std::uint64_t tag_base, std::uint32_t label) {
    check_ranks(programs, ranks, "ring_all_reduce");
    const std::uint64_t next = ring_steps(programs, ranks, bytes, tag_base, label, 0);
    return ring_steps(programs, ranks, bytes, next, label, 1);
}

std::uint64_t coalesced_ring_all_reduce(std::vector<NodeProgram>& programs, const std::vector<NodeId>& ranks,
                                        std::uint64_t bytes, std::uint64_t tag_base, std::uint32_t label,
                                        std::size_t max_rounds, const std::vector<Picoseconds>& step_latency_ps) {
    check_ranks(programs, ranks, "coalesced_ring_all_reduce");
    const std::size_t p = ranks.size();
    if (step_latency_ps.size() != p)
        throw std::invalid_argument("coalesced_ring_all_reduce: one step latency per rank");
    if (max_rounds == 0) throw std::invalid_argument("coalesced_ring_all_reduce: zero rounds");
    if (p < 2) return tag_base;
    const std::size_t steps = 2 * (p - 1), rounds = std::min(max_rounds, steps);
    // Step s (< p - 1: reduce-scatter, offset 0; else all-gather, offset 1) sends chunk
    // (i + offset + p - s') mod p, s' the step within its phase, as ring_steps does: over a run
    // of steps within one phase, a run of chunk indices going down round the ring.
    const auto chunk_of = [p](std::size_t i, std::size_t s) {
        const std::size_t offset = s < p - 1 ? 0 : 1, within = s < p - 1 ? s : s - (p - 1);
        return (i + offset + p - within) % p;
    };
    // chunk_bytes(bytes, p, c) is bytes / p, plus 1 for c < bytes % p.
    const std::uint64_t share = bytes / p, larger = bytes % p;
    // How many of the n (<= p) chunks c, c - 1, ..., c - n + 1 (mod p) are below `larger`.
    const auto larger_chunks = [p, larger](std::size_t c, std::size_t n) -> std::uint64_t {
        const std::size_t low = (c + p - (n - 1) % p) % p;  // the run is [low, low + n) mod p
        const auto below = [larger](std::size_t end) { return std::min<std::uint64_t>(end, larger); };
        if (low + n <= p) return below(low + n) - below(low);
        return below(p) - below(low) + below(low + n - p);
    };
    // Latency prefix sums round the ring twice: window sums in O(1).
    std::vector<Picoseconds> prefix(2 * p + 1, Picoseconds(0));
    for (std::size_t k = 0; k < 2 * p; ++k) {
        prefix[k + 1] = prefix[k];
        checked_accumulate(prefix[k + 1], step_latency_ps[k % p], "picoseconds of merged ring steps");
    }
    const Picoseconds ring_ps = prefix[p];
    for (std::size_t r = 0; r < rounds; ++r) {
        const std::size_t first = r * steps / rounds, last = (r + 1) * steps / rounds;  // steps [first, last)
        const std::size_t split = std::clamp(p - 1, first, last);                       // the phases' boundary
        for (std::size_t i = 0; i < p; ++i) {
            std::uint64_t round_bytes = share * (last - first);
            if (split > first) round_bytes += larger_chunks(chunk_of(i, first), split - first);
            if (last > split) round_bytes += larger_chunks(chunk_of(i, split), last - split);
            // In the plain ring rank i's step s waits for rank i - 1's step s - 1, so the latency
            // its merged steps first + 1 .. last - 1 would have added is that of the routes
            // behind it: rank i - t's, for t = first + 1 .. last - 1, the ranks
            // (i - last + 1 .. i - first - 1) mod p, whole turns of the ring first.
            Picoseconds delay{0};
            if (last > first + 1) {
                const std::size_t merged = last - first - 1, turns = merged / p, rest = merged % p;
                for (std::size_t k = 0; k < turns; ++k)
                    checked_accumulate(delay, ring_ps, "picoseconds of merged ring steps");
                const std::size_t from = (i + p - (last - 1) % p) % p;  // rank i - last + 1
                checked_accumulate(delay, prefix[from + rest] - prefix[from], "picoseconds of merged ring steps");
            }
            if (delay > Picoseconds(0)) programs[ranks[i].value()].ops.emplace_back(Compute{delay, label});
            send(programs, ranks[i], ranks[(i + 1) % p], round_bytes, tag_base + r, label);
            recv(programs, ranks[i], ranks[(i + p - 1) % p], tag_base + r, label);
        }
    }
    return tag_base + rounds;
}

std::uint64_t flat_ring_simulated(const Topology& topology, std::vector<NodeProgram>& programs,
                                  const std::vector<NodeId>& ranks, std::uint64_t bytes, std::uint64_t tag_base,
                                  std::uint32_t label) {
    const std::size_t p = ranks.size();
    if (p <= kMaxReplayRanks) return ring_all_reduce(programs, ranks, bytes, tag_base, label);
    std::vector<Picoseconds> step_latency_ps(p, Picoseconds(0));
    std::vector<ChannelId> route;
    for (std::size_t i = 0; i < p; ++i) {
        topology.route_into(ranks[i].value(), ranks[(i + 1) % p].value(), route);
        for (const ChannelId c : route) step_latency_ps[i] += topology.channel(c).timing.latency_ps;
    }
    return coalesced_ring_all_reduce(programs, ranks, bytes, tag_base, label, 2 * (kMaxReplayRanks - 1),
                                     step_latency_ps);
}

void flat_ring_fluid_steps(const std::vector<NodeId>& ranks, FluidSteps& out) {
    const std::size_t p = ranks.size(), steps = 2 * (p - 1);
    const std::size_t s = out.step(static_cast<double>(steps));
    std::vector<Picoseconds> latency(p);
    for (std::size_t i = 0; i < p; ++i) {
        out.message(ranks[i], ranks[(i + 1) % p], s, 1.0 / static_cast<double>(p));
        latency[i] = out.route_latency(ranks[i], ranks[(i + 1) % p]);
    }
    // Window sums over the ring, each window `steps` routes ending at rank i.
    Picoseconds round{0};
    for (const Picoseconds l : latency) round += l;
    Picoseconds window = Picoseconds(round.count() * (steps / p));
    for (std::size_t t = 0; t < steps % p; ++t) window += latency[(p - t) % p];  // ending at rank 0
    Picoseconds longest = window;
    for (std::size_t i = 1; i < p; ++i) {
        window += latency[i];
        window -= latency[(i + p - steps % p) % p];
        longest = std::max(longest, window);
    }
    out.total_latency(s, longest);
}

namespace {

/// One ring in the ranks' order (impl::OneRing); over a whole grid, collective.h runs it
/// dimension by dimension.
class Ring final : public impl::OneRing {
public:
    /// (Compute,) Send, Recv per round.
    /// Per dimension 4(k_j - 1), at most 2p over two or more dimensions.
    std::uint64_t ops_per_rank(std::size_t p) const override {
        return p <= kMaxReplayRanks ? 4 * (p - 1) : std::max<std::uint64_t>(3 * 2 * (kMaxReplayRanks - 1), 2 * p);
    }
};

}  // namespace

const AllReduce& ring_algorithm() {
    static const Ring kAlgorithm;
    return kAlgorithm;
}

}  // namespace fastsim::interconnect
