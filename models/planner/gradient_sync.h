// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <tuple>
#include <vector>

#include "common/units.h"
#include "compression/compression.h"
#include "interconnect/collective_cost.h"
#include "interconnect/network.h"
#include "interconnect/program.h"

namespace fastsim::planner {

/// One replica set's gradient to synchronise (docs/planner.md, "Gradient synchronisation").
struct SyncJob {
    std::vector<NodeId> ranks;        ///< ascending node ids
    std::uint64_t elements = 0;       ///< gradient values
    std::uint64_t bytes = 0;          ///< uncompressed: elements x the plan's weight-gradient width
    std::uint64_t factor_rows = 0;    ///< Σ n over its n x m matrix blocks (n = output channels)
    std::uint64_t factor_cols = 0;    ///< Σ m (m = input channels x kernel area)
};

/// How the weight gradients of one replica set are synchronised (docs/planner.md, "Gradient
/// synchronisation"): lowered to ops on the members' comm streams, and timed for the
/// planner's prediction. A scheme (all-reduce, parameter server, compression) is one
/// implementation of this interface; the schedule and the prediction call nothing else.
class GradientSync {
public:
    virtual ~GradientSync() = default;
    /// Appends to `programs` (indexed by node id; the caller moves every node's new ops onto its
    /// comm stream) the ops that synchronise `job`, using tags from `tag` on; returns the first
    /// tag not used.
    virtual std::uint64_t lower(std::vector<interconnect::NodeProgram>& programs, const SyncJob& job, std::uint64_t tag,
                                std::uint32_t label) = 0;
    /// Seconds the synchronisation takes on its own.
    virtual double seconds(const SyncJob& job) = 0;
    /// Seconds until each of `jobs` ends when all start at once, sharing links and nodes. By
    /// default each as if alone.
    virtual std::vector<double> seconds_concurrent(const std::vector<SyncJob>& jobs) {
        std::vector<double> out(jobs.size());
        for (std::size_t j = 0; j < jobs.size(); ++j) out[j] = seconds(jobs[j]);
        return out;
    }
    /// Delayed update (cluster.gradient_sync.staleness): iteration i applies the gradients of
    /// iteration i - D, so a step need not wait for its own synchronisation.
    [[nodiscard]] virtual std::size_t staleness() const { return 0; }
};

/// An all-reduce with the algorithm `chooser` picks (cluster.gradient_sync.algorithm: one
/// forced, or the one of lowest measured cost), of uncompressed gradients.
class AllReduceSync final : public GradientSync {
public:
    explicit AllReduceSync(interconnect::AllReduceChooser& chooser) : m_chooser(chooser) {}
    std::uint64_t lower(std::vector<interconnect::NodeProgram>& programs, const SyncJob& job, std::uint64_t tag,
                        std::uint32_t label) override;
    double seconds(const SyncJob& job) override;
    std::vector<double> seconds_concurrent(const std::vector<SyncJob>& jobs) override;

private:
    interconnect::AllReduceChooser& m_chooser;
};

/// The rest of cluster.gradient_sync (docs/compression.md): a parameter server instead of an
/// all-reduce, compressed gradients, and delayed updates.
struct SyncScheme {
    compression::Params compression;
    bool parameter_server = false;
    std::vector<NodeId> servers;  ///< parameter_server: the server nodes, each owning an equal shard
    std::size_t staleness = 0;
};

/// Seconds a node spends on its part of compressing a gradient (on its converter lanes, DRAM
/// and array), given by the caller from the node model.
using CompressionSeconds = std::function<Picoseconds(NodeId node, const compression::Work& work)>;

/// A SyncScheme lowered to messages: each rank first does its compression work (a Compute on
/// its comm stream), then the scheme's exchange (docs/compression.md, "Wire volumes"). Its
/// time is the lowered program replayed on the network, alone or with the other jobs of a
/// layer, memoised.
class SchemeSync final : public GradientSync {
public:
    SchemeSync(interconnect::AllReduceChooser& chooser, SyncScheme scheme, CompressionSeconds work_seconds);
    std::uint64_t lower(std::vector<interconnect::NodeProgram>& programs, const SyncJob& job, std::uint64_t tag,
                        std::uint32_t label) override;
    double seconds(const SyncJob& job) override;
    std::vector<double> seconds_concurrent(const std::vector<SyncJob>& jobs) override;
    [[nodiscard]] std::size_t staleness() const override { return m_scheme.staleness; }
    [[nodiscard]] const SyncScheme& scheme() const { return m_scheme; }

private:
    std::uint64_t lower_all_reduce(std::vector<interconnect::NodeProgram>& programs, const SyncJob& job, std::uint64_t tag,
                                   std::uint32_t label);
    std::uint64_t lower_parameter_server(std::vector<interconnect::NodeProgram>& programs, const SyncJob& job,
                                         std::uint64_t tag, std::uint32_t label);
    std::vector<double> replay(const std::vector<SyncJob>& jobs);

    interconnect::AllReduceChooser& m_chooser;
    SyncScheme m_scheme;
    CompressionSeconds m_work_seconds;
    interconnect::Network m_network;
    std::map<std::vector<std::tuple<std::vector<NodeId>, std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t>>,
             std::vector<double>>
        m_replays;
};

}  // namespace fastsim::planner
