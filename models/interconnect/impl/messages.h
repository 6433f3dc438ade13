// SPDX-License-Identifier: MIT
#pragma once

// What the collectives' generators share: argument checks and appending one Send or Recv.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "interconnect/program.h"

namespace fastsim::interconnect {
class FluidSteps;
}

namespace fastsim::interconnect::impl {

/// std::invalid_argument unless every rank is distinct and < programs.size() (`what` names the caller).
void check_ranks(const std::vector<NodeProgram>& programs, const std::vector<NodeId>& ranks, const char* what);

/// ceil(log2 p), 0 for p <= 1.
inline std::uint64_t ceil_log2(std::size_t p) {
    std::uint64_t bits = 0;
    while ((std::size_t{1} << bits) < p) ++bits;
    return bits;
}

/// Which partner a halving-doubling rank meets first.
enum class PartnerOrder { farthest_first, nearest_first };
/// Which part of a halving-doubling all-reduce to append.
enum class HalvingPart { all_reduce, reduce_scatter, all_gather };
/// The halving-doubling all-reduce (collectives.h), or its halving (reduce-scatter) or doubling
/// (all-gather) half alone, for a power-of-two number of ranks (std::logic_error otherwise).
/// Returns the first tag not used.
std::uint64_t halving_doubling(std::vector<NodeProgram>& programs, const std::vector<NodeId>& ranks,
                               std::uint64_t bytes, std::uint64_t tag, std::uint32_t label, PartnerOrder order,
                               HalvingPart part);
/// Its synchronous steps (all_reduce.h).
void halving_doubling_fluid_steps(const std::vector<NodeId>& ranks, FluidSteps& out, PartnerOrder order);
/// The chunk rank i of p (a power of two) holds after the halving.
std::size_t halving_owned_chunk(std::size_t i, std::size_t p, PartnerOrder order);
/// Its bytes of n: the segment the halving leaves rank i (each step keeps a half, the lower
/// rank the lower half, (hi - lo) / 2 bytes below the middle).
std::uint64_t halving_owned_bytes(std::uint64_t bytes, std::size_t i, std::size_t p, PartnerOrder order);

inline void send(std::vector<NodeProgram>& programs, NodeId from, NodeId to, std::uint64_t bytes, std::uint64_t tag,
                 std::uint32_t label) {
    programs[from.value()].ops.emplace_back(Send{to, bytes, tag, label});
}

inline void recv(std::vector<NodeProgram>& programs, NodeId at, NodeId from, std::uint64_t tag, std::uint32_t label) {
    programs[at.value()].ops.emplace_back(Recv{from, tag, label});
}

}  // namespace fastsim::interconnect::impl
