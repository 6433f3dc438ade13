// SPDX-License-Identifier: MIT
#include "interconnect/collectives.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <unordered_set>

#include "common/units.h"
#include "interconnect/all_reduce.h"
#include "interconnect/impl/messages.h"

namespace fastsim::interconnect {

// Each algorithm's implementation (models/interconnect/impl/<name>.cpp).
const AllReduce& ring_algorithm();
const AllReduce& tree_algorithm();
const AllReduce& halving_doubling_algorithm();
const AllReduce& direct_algorithm();
const AllReduce& flat_ring_algorithm();
const AllReduce& halving_doubling_nearest_algorithm();

namespace impl {

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

}  // namespace impl

using impl::check_ranks;
using impl::recv;
using impl::send;

std::uint64_t chunk_bytes(std::uint64_t bytes, std::size_t parts, std::size_t index) {
    if (parts == 0) throw std::invalid_argument("chunk_bytes: zero parts");
    return bytes / parts + (index < bytes % parts ? 1 : 0);
}

namespace {

constexpr std::array<AllReduceDescriptor, std::size(kAllReduceAlgorithms)> kAllReduces{{
    {AllReduceAlgorithm::ring, "ring", ring_algorithm},
    {AllReduceAlgorithm::tree, "tree", tree_algorithm},
    {AllReduceAlgorithm::halving_doubling, "halving_doubling", halving_doubling_algorithm},
    {AllReduceAlgorithm::direct, "direct", direct_algorithm},
    {AllReduceAlgorithm::flat_ring, "flat_ring", flat_ring_algorithm},
    {AllReduceAlgorithm::halving_doubling_nearest, "halving_doubling_nearest", halving_doubling_nearest_algorithm},
}};

static_assert(rows_in_enum_order(kAllReduces, &AllReduceDescriptor::algorithm),
              "every AllReduceAlgorithm needs its row in kAllReduces, in enumerator order");

}  // namespace

const std::array<AllReduceDescriptor, std::size(kAllReduceAlgorithms)>& all_reduce_descriptors() { return kAllReduces; }

const AllReduce& algorithm_of(AllReduceAlgorithm algorithm) {
    return kAllReduces[static_cast<std::size_t>(algorithm)].algorithm_impl();
}

const EnumNames<AllReduceAlgorithm, std::size(kAllReduceAlgorithms)>& enum_names(AllReduceAlgorithm) {
    static constexpr EnumNames<AllReduceAlgorithm, std::size(kAllReduceAlgorithms)> kNames =
        names_of_rows(kAllReduces, &AllReduceDescriptor::algorithm);
    return kNames;
}

std::uint64_t all_reduce(AllReduceAlgorithm algorithm, std::vector<NodeProgram>& programs,
                         const std::vector<NodeId>& ranks, std::uint64_t bytes, std::uint64_t tag_base,
                         std::uint32_t label) {
    return algorithm_of(algorithm).lower(programs, ranks, bytes, tag_base, label);
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
