// SPDX-License-Identifier: MIT
#pragma once

// The alpha-beta cost of an all-reduce on a topology (docs/interconnect.md, "Collective costs"),
// measured: the collective's own program replayed alone on the network model at two buffer
// sizes, and a line fitted through them. Plain C++; the schedule uses it to choose an algorithm
// and the planner to predict the collective's time.

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/units.h"
#include "interconnect/collective.h"
#include "interconnect/collectives.h"
#include "interconnect/network.h"
#include "interconnect/topology.h"

namespace fastsim::interconnect {

/// Seconds of one collective as latency_s + bytes * seconds_per_byte (n = the buffer each rank
/// holds): alpha and beta of the whole collective. Each message carries a fixed fraction of n,
/// so the time is affine in n where contention does not change its pattern.
struct CollectiveCost {
    double latency_s = 0;
    double seconds_per_byte = 0;
    [[nodiscard]] double seconds(double bytes) const { return latency_s + bytes * seconds_per_byte; }
};

/// The cost of the all-reduce over `ranks` (as the generators in collectives.h order them) with
/// `algorithms` (collective.h) on `topology`, from replays at n = 4 KiB and 1 MiB per rank.
/// Ranks must be distinct compute nodes; fewer than 2 cost nothing.
CollectiveCost all_reduce_cost(const Topology& topology, const std::vector<NodeId>& ranks,
                               const AlgorithmPerDimension& algorithms);
/// The same on a network of the topology that the caller keeps (reset before each replay).
CollectiveCost all_reduce_cost(Network& network, const std::vector<NodeId>& ranks,
                               const AlgorithmPerDimension& algorithms);
/// The same with one algorithm in every dimension.
inline CollectiveCost all_reduce_cost(const Topology& topology, const std::vector<NodeId>& ranks,
                                      AllReduceAlgorithm algorithm) {
    return all_reduce_cost(topology, ranks, AlgorithmPerDimension{algorithm});
}

/// Beyond this many ranks, replaying a collective costs too much planning time for how often
/// it is asked for; the cost then comes from the synchronous-step (fluid) model instead: each
/// step takes its longest route latency plus its busiest channel's share of the bytes over its
/// bandwidth. It misses the extra serialisation of reservations in call order (it gives 322 us
/// where the replay and the simulation give 428 us for halving-doubling on a ring of 8).
inline constexpr std::size_t kMaxReplayRanks = 16;

/// The all-reduce of `algorithm` as the cluster simulates it: the plain algorithm's program
/// (all_reduce), except a ring over more than kMaxReplayRanks ranks, which is merged into the
/// 2(kMaxReplayRanks - 1) rounds of coalesced_ring_all_reduce (its step latencies the route
/// latencies on `topology`): p x 30 messages instead of 2p(p - 1), the same timing as the
/// fluid model the planner predicts it with where nothing contends.
std::uint64_t simulated_all_reduce(const Topology& topology, const AlgorithmPerDimension& algorithms,
                                   std::vector<NodeProgram>& programs, const std::vector<NodeId>& ranks,
                                   std::uint64_t bytes, std::uint64_t tag_base, std::uint32_t label);
/// The same with one algorithm in every dimension.
inline std::uint64_t simulated_all_reduce(const Topology& topology, AllReduceAlgorithm algorithm,
                                          std::vector<NodeProgram>& programs, const std::vector<NodeId>& ranks,
                                          std::uint64_t bytes, std::uint64_t tag_base, std::uint32_t label) {
    return simulated_all_reduce(topology, AlgorithmPerDimension{algorithm}, programs, ranks, bytes, tag_base, label);
}

/// Ops on each rank's stream, at most, of simulated_all_reduce over p ranks (for work estimates).
std::uint64_t simulated_all_reduce_ops_per_rank(AllReduceAlgorithm algorithm, std::size_t p);

/// Direct all-reduce posts p(p - 1) messages per phase; choose_all_reduce considers it only up
/// to this many ranks (it stays available when asked for by name).
inline constexpr std::size_t kMaxDirectRanks = 64;

/// The algorithms of an all-reduce and its predicted seconds.
struct AllReduceChoice {
    AlgorithmPerDimension algorithms;
    double seconds = 0;
};

/// The all-reduces chosen for while recording (AllReduceChooser::record), grouped by choice:
/// what a schedule runs, for the reports.
struct AllReduceUse {
    std::string algorithms;  ///< describe(): "ring", "ring/direct"
    std::string dimensions;  ///< the span's dimension sizes ("8x4"), or the rank count
    std::size_t ranks = 0;
    std::size_t count = 0;    ///< all-reduces with this choice over this span
    std::uint64_t bytes = 0;  ///< their bytes per rank, summed
};

/// The algorithms, and their cost, that all-reduce `bytes` over `ranks` fastest by
/// all_reduce_cost, or `forced`'s cost if given. Over a multi-dimensional span (collective.h)
/// `best` weighs each algorithm in every dimension and the mix whose dimensions' line costs add
/// up least (each dimension's lines costed alone at the share of n they handle). Memoises per
/// (ranks, algorithms).
class FluidModel;

class AllReduceChooser {
public:
    AllReduceChooser(const Topology& topology, std::optional<AllReduceAlgorithm> forced);
    ~AllReduceChooser();
    AllReduceChooser(const AllReduceChooser&) = delete;
    AllReduceChooser& operator=(const AllReduceChooser&) = delete;

    AllReduceChoice choose(const std::vector<NodeId>& ranks, double bytes);
    /// As choose(), never counted in uses(): for weighing an all-reduce against something else.
    AllReduceChoice cheapest(const std::vector<NodeId>& ranks, double bytes);
    /// Seconds of the fastest one-algorithm candidate by the fluid model alone (no replay, one
    /// pass per rank set up to interchangeable nodes, memoised): a cheap estimate of
    /// cheapest(), for ranking many candidate plans.
    double estimated_seconds(const std::vector<NodeId>& ranks, double bytes);
    /// The fastest algorithm per dimension for `op` (collective.h) over `ranks` at `bytes` among
    /// those that define it there: as choose() for an all-reduce; a reduce-scatter or an
    /// all-gather weighs each dimension's all-reduce cost halved; an all-to-all the whole n in
    /// each dimension.
    AlgorithmPerDimension choose_op(CollectiveOp op, const std::vector<NodeId>& ranks, double bytes);
    [[nodiscard]] const Topology& topology() const { return m_network.topology(); }
    /// The algorithm cluster.gradient_sync.algorithm forces, if any.
    [[nodiscard]] std::optional<AllReduceAlgorithm> forced() const { return m_forced; }
    /// While `on`, every choose() is counted in uses() (for a schedule's reports; planning's
    /// many trial choices are not); turning it on starts a new count.
    void record(bool on) {
        if (on) m_uses.clear();
        m_recording = on;
    }
    [[nodiscard]] bool recording() const { return m_recording; }
    /// The choices counted while recording, by first use.
    [[nodiscard]] const std::vector<AllReduceUse>& uses() const { return m_uses; }

private:
    /// The algorithms choose() compares over `ranks` ranks: the forced one, or all but direct
    /// beyond kMaxDirectRanks.
    [[nodiscard]] std::vector<AllReduceAlgorithm> candidates(std::size_t ranks) const;
    const CollectiveCost& cost(const std::vector<NodeId>& ranks, const AlgorithmPerDimension& algorithms);
    /// choose() without the memo or the recording.
    AllReduceChoice choose_anew(const std::vector<NodeId>& ranks, double bytes);
    /// The mix of one candidate per dimension of `span` whose lines' costs at their share of
    /// `bytes` add up least for `op`; empty if the span has under two dimensions.
    AlgorithmPerDimension best_mix(CollectiveOp op, const GridSpan& span, double bytes);

    Network m_network;                    ///< replays the collectives up to kMaxReplayRanks
    std::unique_ptr<FluidModel> m_fluid;  ///< costs them beyond, all candidates in one pass
    std::optional<AllReduceAlgorithm> m_forced;
    std::map<std::pair<std::vector<NodeId>, AlgorithmPerDimension>, CollectiveCost> m_costs;
    /// estimated_seconds()'s fluid costs of every candidate, by canonical rank set.
    std::map<std::vector<NodeId>, std::vector<CollectiveCost>> m_fluid_costs;
    /// choose()'s answers by (ranks, bytes): planners ask again for every plan they predict.
    struct ChoiceKeyHash {
        std::size_t operator()(const std::pair<std::vector<NodeId>, double>& k) const;
    };
    static constexpr std::size_t kMaxRememberedChoices = 1'000'000;  ///< then the memo starts over
    std::unordered_map<std::pair<std::vector<NodeId>, double>, AllReduceChoice, ChoiceKeyHash> m_choices;
    bool m_recording = false;
    std::vector<AllReduceUse> m_uses;
};

}  // namespace fastsim::interconnect
