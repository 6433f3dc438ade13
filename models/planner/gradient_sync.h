// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "common/units.h"
#include "interconnect/collective_cost.h"
#include "interconnect/program.h"

namespace fastsim::planner {

/// How the weight gradients of one replica set are synchronised (docs/planner.md, "Gradient
/// synchronisation"): lowered to ops on the members' comm streams, and timed for the
/// planner's prediction. A scheme (all-reduce, parameter server, compression) is one
/// implementation of this interface; the schedule and the prediction call nothing else.
class GradientSync {
public:
    virtual ~GradientSync() = default;
    /// Appends to `programs` (indexed by node id; the caller moves them onto the comm streams)
    /// the ops that synchronise `bytes` of gradients over `ranks` (ascending node ids), using
    /// tags from `tag` on; returns the first tag not used.
    virtual std::uint64_t lower(std::vector<interconnect::NodeProgram>& programs, const std::vector<NodeId>& ranks,
                                std::uint64_t bytes, std::uint64_t tag, std::uint32_t label) = 0;
    /// Seconds the synchronisation takes on its own.
    virtual double seconds(const std::vector<NodeId>& ranks, double bytes) = 0;
    /// Seconds of each of `sets` (bytes[s] each) when all synchronise at once, sharing links.
    /// By default each as if alone.
    virtual std::vector<double> seconds_concurrent(const std::vector<std::vector<NodeId>>& sets,
                                                   const std::vector<double>& bytes) {
        std::vector<double> out(sets.size());
        for (std::size_t s = 0; s < sets.size(); ++s) out[s] = seconds(sets[s], bytes[s]);
        return out;
    }
};

/// An all-reduce with the algorithm `chooser` picks (cluster.gradient_sync.algorithm: one
/// forced, or the one of lowest measured cost).
class AllReduceSync final : public GradientSync {
public:
    explicit AllReduceSync(interconnect::AllReduceChooser& chooser) : m_chooser(chooser) {}
    std::uint64_t lower(std::vector<interconnect::NodeProgram>& programs, const std::vector<NodeId>& ranks,
                        std::uint64_t bytes, std::uint64_t tag, std::uint32_t label) override {
        return interconnect::simulated_all_reduce(m_chooser.topology(), m_chooser.choose(ranks, static_cast<double>(bytes)).first,
                                                  programs, ranks, bytes, tag, label);
    }
    double seconds(const std::vector<NodeId>& ranks, double bytes) override {
        return m_chooser.choose(ranks, bytes).second;
    }
    std::vector<double> seconds_concurrent(const std::vector<std::vector<NodeId>>& sets,
                                           const std::vector<double>& bytes) override {
        return m_chooser.concurrent_seconds(sets, bytes);
    }

private:
    interconnect::AllReduceChooser& m_chooser;
};

}  // namespace fastsim::planner
