// SPDX-License-Identifier: MIT
#pragma once

// Collectives as schedule generators: each function appends the point-to-point Sends and Recvs
// of one collective to the programs of the ranks taking part (docs/interconnect.md). Nothing is
// timed here; the cluster executor times the ops. Reduction arithmetic is not timed at all.
//
// Common arguments:
//   programs  one NodeProgram per node, indexed by node id
//   ranks     the node ids taking part, in collective order (ring order; rank 0 is the root of
//             the tree); distinct and < programs.size(), else std::invalid_argument
//   bytes     n, the full buffer each rank holds (the all-reduce vector; the gathered result of
//             an all-gather; the send buffer of an all-to-all)
//   tag_base  the generated messages use tags tag_base, tag_base + 1, ...; each (src, dst, tag)
//             is unique within the call. Returns the first tag not used, for the next call.
//   label     copied into every generated op
// A buffer is split into p chunks of n / p bytes, the first n mod p chunks one byte larger
// (chunk_bytes()). With one rank nothing is appended.

#include <array>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <string_view>
#include <vector>

#include "common/enum_names.h"
#include "common/units.h"
#include "interconnect/program.h"

namespace fastsim::interconnect {

/// Size of chunk `index` of `bytes` split into `parts`: bytes / parts, plus one for the first
/// bytes % parts chunks.
std::uint64_t chunk_bytes(std::uint64_t bytes, std::size_t parts, std::size_t index);

/// Ring all-reduce = ring reduce-scatter then ring all-gather: 2(p-1) steps; in each, rank i
/// sends one chunk to rank i+1 and receives one from rank i-1 (Send then Recv). Uncontended:
/// 2(p-1) alpha + 2(p-1)/p n beta. Uses 2(p-1) tags.
std::uint64_t ring_all_reduce(std::vector<NodeProgram>& programs, const std::vector<NodeId>& ranks, std::uint64_t bytes,
                              std::uint64_t tag_base, std::uint32_t label);

/// Ring reduce-scatter: p-1 steps, in step s rank i sends chunk (i - s) mod p to rank i+1; rank
/// i ends owning chunk (i + 1) mod p. (p-1) alpha + (p-1)/p n beta. Uses p-1 tags.
std::uint64_t ring_reduce_scatter(std::vector<NodeProgram>& programs, const std::vector<NodeId>& ranks,
                                  std::uint64_t bytes, std::uint64_t tag_base, std::uint32_t label);

/// Ring all-gather of n bytes, rank i contributing chunk (i + 1) mod p (what reduce-scatter
/// leaves): p-1 steps, in step s rank i forwards chunk (i + 1 - s) mod p to rank i+1.
/// (p-1) alpha + (p-1)/p n beta. Uses p-1 tags.
std::uint64_t ring_all_gather(std::vector<NodeProgram>& programs, const std::vector<NodeId>& ranks, std::uint64_t bytes,
                              std::uint64_t tag_base, std::uint32_t label);

/// The ring all-reduce with its 2(p-1) steps merged into at most `max_rounds` rounds (for
/// large p, where the plain ring's 2p(p-1) messages cost more to simulate than they tell):
/// round r carries, in one message from rank i to rank i+1, the chunks of the k steps it
/// merges (steps F .. F + k - 1), preceded on rank i's stream by a Compute of the latency those
/// steps' own messages would have added on the ring's critical path: Σ step_latency_ps[i - t]
/// over t = F + 1 .. F + k - 1 (step_latency_ps[j]: the route latency from rank j to rank j+1;
/// in the plain ring rank i's step s waits for rank i-1's step s-1). Where no two of the ring's
/// routes share a channel it takes exactly the plain ring's time, up to the chunks' one-byte
/// differences, whatever the route latencies; same bytes on the same channels. With max_rounds
/// >= 2(p-1) it is ring_all_reduce plus zero-length Computes skipped. Uses max_rounds tags at most.
std::uint64_t coalesced_ring_all_reduce(std::vector<NodeProgram>& programs, const std::vector<NodeId>& ranks,
                                        std::uint64_t bytes, std::uint64_t tag_base, std::uint32_t label,
                                        std::size_t max_rounds, const std::vector<Picoseconds>& step_latency_ps);

/// Binomial-tree reduce of the full n bytes to ranks[0], then binomial broadcast back, any p.
/// Reduce round k: a rank whose lowest set bit (relative index) is k sends to index - 2^k, after
/// receiving from index + 2^j for all j < k that exist. Broadcast mirrors it. On a network where
/// a node's sends use distinct links (fully connected) it takes 2 floor(log2 p) (alpha + n beta),
/// the depth of the binomial tree; = 2 log2 p (alpha + n beta) for p a power of two. Uses
/// 2 ceil(log2 p) tags.
std::uint64_t tree_all_reduce(std::vector<NodeProgram>& programs, const std::vector<NodeId>& ranks, std::uint64_t bytes,
                              std::uint64_t tag_base, std::uint32_t label);

/// Halving-doubling (Rabenseifner) all-reduce, any p. With p' the largest power of two <= p
/// and r = p - p': rank p' + i (i < r) first sends its n bytes to rank i (fold); ranks 0..p'-1
/// then reduce-scatter by recursive halving (step k: partner i xor p'/2^(k+1), each sends the
/// half of its segment the partner keeps, the lower rank keeping the lower half) and all-gather
/// by recursive doubling (the steps mirrored); rank i finally sends the result to p' + i
/// (unfold). For p a power of two: 2 log2 p alpha + 2(p-1)/p n beta. Uses 2 log2 p' + 2 tags.
std::uint64_t halving_doubling_all_reduce(std::vector<NodeProgram>& programs, const std::vector<NodeId>& ranks,
                                          std::uint64_t bytes, std::uint64_t tag_base, std::uint32_t label);

/// Direct all-reduce: a direct reduce-scatter (rank i sends chunk j to rank j, for every j,
/// starting at i + 1) then a direct all-gather (rank i sends its reduced chunk i to every other
/// rank): 2(p-1) messages per rank, all posted at once per phase. 2 (alpha + n/p beta) where a
/// rank's sends use distinct links (fully connected); 2 (alpha + (p-1)/p n beta) where they share
/// the rank's one link. Uses 2 tags.
std::uint64_t direct_all_reduce(std::vector<NodeProgram>& programs, const std::vector<NodeId>& ranks,
                                std::uint64_t bytes, std::uint64_t tag_base, std::uint32_t label);

/// Direct all-to-all: every rank sends block j of its n bytes (chunk_bytes(n, p, j)) to rank j,
/// all at once, then receives its blocks: alpha + (p-1)/p n beta where a rank's sends share its
/// one link. Uses 1 tag.
std::uint64_t direct_all_to_all(std::vector<NodeProgram>& programs, const std::vector<NodeId>& ranks,
                                std::uint64_t bytes, std::uint64_t tag_base, std::uint32_t label);

/// The halving-doubling all-reduce with the partners in the other order, nearest first (step k:
/// partner i xor 2^k, as ASTRA-sim's), the lower rank keeping the lower half; the same fold and
/// unfold for p not a power of two. Uses 2 log2 p' + 2 tags.
std::uint64_t halving_doubling_nearest_all_reduce(std::vector<NodeProgram>& programs, const std::vector<NodeId>& ranks,
                                                  std::uint64_t bytes, std::uint64_t tag_base, std::uint32_t label);

/// The all-reduce algorithms a schedule can choose from (docs/interconnect.md, "Collectives").
enum class AllReduceAlgorithm : std::uint8_t {
    ring,
    tree,
    halving_doubling,
    direct,
    flat_ring,
    halving_doubling_nearest
};
inline constexpr AllReduceAlgorithm kAllReduceAlgorithms[] = {
    AllReduceAlgorithm::ring,   AllReduceAlgorithm::tree,      AllReduceAlgorithm::halving_doubling,
    AllReduceAlgorithm::direct, AllReduceAlgorithm::flat_ring, AllReduceAlgorithm::halving_doubling_nearest};

class AllReduce;
/// One all-reduce algorithm's row: the one place its name is written (cluster.gradient_sync.
/// algorithm, reports) and its implementation (all_reduce.h; impl/<name>.cpp).
struct AllReduceDescriptor {
    AllReduceAlgorithm algorithm;
    std::string_view name;
    const AllReduce& (*algorithm_impl)();
};
/// Every algorithm's row, in enumerator order (a static_assert in collectives.cpp checks it).
const std::array<AllReduceDescriptor, std::size(kAllReduceAlgorithms)>& all_reduce_descriptors();
/// The names, from the rows.
const EnumNames<AllReduceAlgorithm, std::size(kAllReduceAlgorithms)>& enum_names(AllReduceAlgorithm);
inline const char* to_string(AllReduceAlgorithm algorithm) { return name_of(algorithm).data(); }

/// The implementation of `algorithm`, from its row.
const AllReduce& algorithm_of(AllReduceAlgorithm algorithm);

/// The all-reduce of `algorithm` (its row's lowering: ring_all_reduce, tree_all_reduce, ...).
std::uint64_t all_reduce(AllReduceAlgorithm algorithm, std::vector<NodeProgram>& programs,
                         const std::vector<NodeId>& ranks, std::uint64_t bytes, std::uint64_t tag_base,
                         std::uint32_t label);

/// Pairwise-exchange all-to-all: each rank holds n bytes, block j (chunk_bytes(n, p, j)) for
/// rank j. In step s = 1 .. p-1 rank i sends its block for i+s to rank i+s and receives its
/// block from rank i-s, then moves on (Send then Recv). (p-1) alpha + (p-1)/p n beta, alpha the
/// end-to-end latency of one path. Uses p-1 tags.
std::uint64_t all_to_all(std::vector<NodeProgram>& programs, const std::vector<NodeId>& ranks, std::uint64_t bytes,
                         std::uint64_t tag_base, std::uint32_t label);

/// One message of `bytes` from node src to node dst with `tag`: a Send at src, a Recv at dst.
/// Returns tag + 1.
std::uint64_t point_to_point(std::vector<NodeProgram>& programs, NodeId src, NodeId dst, std::uint64_t bytes,
                             std::uint64_t tag, std::uint32_t label);

}  // namespace fastsim::interconnect
