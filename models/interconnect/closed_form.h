// SPDX-License-Identifier: MIT
#pragma once

// The alpha-beta closed forms of the collectives (docs/interconnect.md, "Closed forms"): what an
// uncontended, cut-through network gives, for a researcher to check the simulation against.

#include <cstdint>
#include <optional>
#include <vector>

#include "interconnect/collective.h"
#include "interconnect/topology.h"

namespace fastsim::interconnect {

/// Seconds of `op` over `ranks` with `algorithms` by its closed form, where there is one:
/// the ranks are every node of one grid (a ring, a switch, a fully connected group, a torus or
/// a group of dimensions) or some nodes of one switch or fully connected group, and each dimension's algorithm has a form on its kind of line (ring:
/// ring; switch and fully connected: every algorithm; halving-doubling and tree over a power of
/// two). A dimension of lines of k nodes, its links' latency L and bandwidth B, h hops per
/// message (1; 2 through a switch), m the bytes it handles:
///   ring              2(k - 1)(hL + m/(kB))
///   direct            2(hL + (k - 1)/k m/B) through a switch; 2(L + m/(kB)) fully connected
///   halving_doubling  2 log2(k) hL + 2(k - 1)/k m/B (either partner order)
///   tree              2 log2(k)(hL + m/B)
/// halved for a reduce-scatter or an all-gather; an all-to-all: (k - 1)(hL + m/(kB)) pairwise
/// (`ring`), hL + (k - 1)/k m/B through a switch or L + m/(kB) fully connected (`direct`). Over
/// several dimensions the forms add, m shrinking by k after each dimension that splits.
/// Nothing for store-and-forward switching through a switch, or where no form applies.
std::optional<double> closed_form_seconds(const Topology& topology, CollectiveOp op,
                                          const AlgorithmPerDimension& algorithms, const std::vector<NodeId>& ranks,
                                          std::uint64_t bytes);

}  // namespace fastsim::interconnect
