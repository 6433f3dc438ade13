// SPDX-License-Identifier: MIT
#include "interconnect/collectives.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <unordered_set>

#include "common/units.h"

namespace fastsim::interconnect {
namespace {

void check_ranks(const std::vector<NodeProgram>& programs, const std::vector<NodeId>& ranks, const char* what) {
    std::unordered_set<NodeId> seen;
    for (const NodeId r : ranks) {
        if (r.value() >= programs.size())
            throw std::invalid_argument(std::string(what) + ": rank " + std::to_string(r.value()) + " out of range (" +
                                        std::to_string(programs.size()) + " programs)");
        if (!seen.insert(r).second)
            throw std::invalid_argument(std::string(what) + ": rank " + std::to_string(r.value()) + " appears twice");
    }
}

void send(std::vector<NodeProgram>& programs, NodeId from, NodeId to, std::uint64_t bytes, std::uint64_t tag,
          std::uint32_t label) {
    programs[from.value()].ops.emplace_back(Send{to, bytes, tag, label});
}

void recv(std::vector<NodeProgram>& programs, NodeId at, NodeId from, std::uint64_t tag, std::uint32_t label) {
    programs[at.value()].ops.emplace_back(Recv{from, tag, label});
}

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

std::uint64_t chunk_bytes(std::uint64_t bytes, std::size_t parts, std::size_t index) {
    if (parts == 0) throw std::invalid_argument("chunk_bytes: zero parts");
    return bytes / parts + (index < bytes % parts ? 1 : 0);
}

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
    // (i + offset + p - s') mod p, s' the step within its phase, as ring_steps does.
    const auto chunk_of = [p](std::size_t i, std::size_t s) {
        const std::size_t offset = s < p - 1 ? 0 : 1, within = s < p - 1 ? s : s - (p - 1);
        return (i + offset + p - within) % p;
    };
    for (std::size_t r = 0; r < rounds; ++r) {
        const std::size_t first = r * steps / rounds, last = (r + 1) * steps / rounds;  // steps [first, last)
        const std::uint64_t merged = last - first;
        for (std::size_t i = 0; i < p; ++i) {
            std::uint64_t round_bytes = 0;
            for (std::size_t s = first; s < last; ++s) round_bytes += chunk_bytes(bytes, p, chunk_of(i, s));
            if (merged > 1 && step_latency_ps[i] > Picoseconds(0))
                programs[ranks[i].value()].ops.emplace_back(
                    Compute{checked_mul(merged - 1, step_latency_ps[i], "picoseconds of merged ring steps"), label});
            send(programs, ranks[i], ranks[(i + 1) % p], round_bytes, tag_base + r, label);
            recv(programs, ranks[i], ranks[(i + p - 1) % p], tag_base + r, label);
        }
    }
    return tag_base + rounds;
}

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

std::uint64_t direct_all_reduce(std::vector<NodeProgram>& programs, const std::vector<NodeId>& ranks,
                                std::uint64_t bytes, std::uint64_t tag_base, std::uint32_t label) {
    check_ranks(programs, ranks, "direct_all_reduce");
    const std::size_t p = ranks.size();
    if (p < 2) return tag_base;
    for (std::size_t phase = 0; phase < 2; ++phase) {  // reduce-scatter, then all-gather
        const std::uint64_t tag = tag_base + phase;
        for (std::size_t i = 0; i < p; ++i) {
            for (std::size_t s = 1; s < p; ++s) {
                const std::size_t to = (i + s) % p;
                send(programs, ranks[i], ranks[to], chunk_bytes(bytes, p, phase == 0 ? to : i), tag, label);
            }
            for (std::size_t s = 1; s < p; ++s) recv(programs, ranks[i], ranks[(i + p - s) % p], tag, label);
        }
    }
    return tag_base + 2;
}

namespace {

constexpr std::array<AllReduceDescriptor, std::size(kAllReduceAlgorithms)> kAllReduces{{
    {AllReduceAlgorithm::ring, "ring", ring_all_reduce},
    {AllReduceAlgorithm::tree, "tree", tree_all_reduce},
    {AllReduceAlgorithm::halving_doubling, "halving_doubling", halving_doubling_all_reduce},
    {AllReduceAlgorithm::direct, "direct", direct_all_reduce},
}};

static_assert(rows_in_enum_order(kAllReduces, &AllReduceDescriptor::algorithm),
              "every AllReduceAlgorithm needs its row in kAllReduces, in enumerator order");

}  // namespace

const std::array<AllReduceDescriptor, std::size(kAllReduceAlgorithms)>& all_reduce_descriptors() { return kAllReduces; }

const EnumNames<AllReduceAlgorithm, std::size(kAllReduceAlgorithms)>& enum_names(AllReduceAlgorithm) {
    static constexpr EnumNames<AllReduceAlgorithm, std::size(kAllReduceAlgorithms)> kNames =
        names_of_rows(kAllReduces, &AllReduceDescriptor::algorithm);
    return kNames;
}

std::uint64_t all_reduce(AllReduceAlgorithm algorithm, std::vector<NodeProgram>& programs,
                         const std::vector<NodeId>& ranks, std::uint64_t bytes, std::uint64_t tag_base,
                         std::uint32_t label) {
    return kAllReduces[static_cast<std::size_t>(algorithm)].lower(programs, ranks, bytes, tag_base, label);
}

std::uint64_t all_to_all(std::vector<NodeProgram>& programs, const std::vector<NodeId>& ranks, std::uint64_t bytes,
                         std::uint64_t tag_base, std::uint32_t label) {
    check_ranks(programs, ranks, "all_to_all");
    const std::size_t p = ranks.size();
    if (p < 2) return tag_base;
    for (std::size_t s = 1; s < p; ++s)
        for (std::size_t i = 0; i < p; ++i) {
            const std::size_t to = (i + s) % p;
            send(programs, ranks[i], ranks[to], chunk_bytes(bytes, p, to), tag_base + s - 1, label);
            recv(programs, ranks[i], ranks[(i + p - s) % p], tag_base + s - 1, label);
        }
    return tag_base + (p - 1);
}

std::uint64_t point_to_point(std::vector<NodeProgram>& programs, NodeId src, NodeId dst, std::uint64_t bytes,
                             std::uint64_t tag, std::uint32_t label) {
    check_ranks(programs, {src}, "point_to_point");
    check_ranks(programs, {dst}, "point_to_point");
    send(programs, src, dst, bytes, tag, label);
    recv(programs, dst, src, tag, label);
    return tag + 1;
}

}  // namespace fastsim::interconnect
