// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "common/units.h"
#include "compression/compression.h"
#include "interconnect/collective_cost.h"
#include "interconnect/network.h"
#include "interconnect/program.h"
#include "interconnect/replay.h"

namespace fastsim::planner {

/// cluster.gradient_sync.message_level_max_ranks's default: an all-reduce over more ranks is
/// lowered to one FlowCollective per rank, timed by the chooser's cost (docs/planner.md,
/// "Gradient synchronisation").
inline constexpr std::size_t kDefaultMessageLevelMaxRanks = 1024;

/// One replica set's gradient to synchronise (docs/planner.md, "Gradient synchronisation").
struct SyncJob {
    std::vector<NodeId> ranks;      ///< ascending node ids
    std::uint64_t elements = 0;     ///< gradient values
    std::uint64_t bytes = 0;        ///< uncompressed: elements x the plan's weight-gradient width
    std::uint64_t factor_rows = 0;  ///< Σ n over its n x m matrix blocks (n = output channels)
    std::uint64_t factor_cols = 0;  ///< Σ m (m = input channels x kernel area)
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
    /// seconds(), or a cheaper estimate of it where the scheme has one.
    virtual double estimated_seconds(const SyncJob& job) { return seconds(job); }
    /// When each rank of each of a layer's `jobs` is done (seconds, per job in its ranks'
    /// order), given when each node's comm stream can start (`ready`, per node id: its gradient
    /// ready and its earlier synchronisations done). The jobs run at once, sharing links and
    /// nodes. By default each starts when all its ranks are ready and takes its time alone.
    virtual std::vector<std::vector<double>> finish_times(const std::vector<SyncJob>& jobs,
                                                          const std::vector<double>& ready) {
        std::vector<std::vector<double>> out;
        for (const SyncJob& j : jobs) {
            double start = 0;
            for (const NodeId n : j.ranks) start = std::max(start, ready[n.value()]);
            out.emplace_back(j.ranks.size(), start + seconds(j));
        }
        return out;
    }
    /// finish_times(), except that a time after `give_up_after_s` may be reported as +infinity
    /// instead (a planner's bound: a step that long is not worth timing to the end).
    virtual std::vector<std::vector<double>> finish_times_until(const std::vector<SyncJob>& jobs,
                                                                const std::vector<double>& ready,
                                                                double give_up_after_s) {
        (void)give_up_after_s;
        return finish_times(jobs, ready);
    }
    /// A new step's prediction begins (its times start again at 0).
    virtual void begin_step() {}
    /// Seconds the busiest link has carried the step's synchronisation so far (0 if not known).
    [[nodiscard]] virtual double busiest_link_s() const { return 0; }
    /// Delayed update (cluster.gradient_sync.staleness): iteration i applies the gradients of
    /// iteration i - D, so a step need not wait for its own synchronisation.
    [[nodiscard]] virtual std::size_t staleness() const { return 0; }
    /// Whether gradients go through parameter servers (which a pipeline's stages would share).
    [[nodiscard]] virtual bool uses_parameter_servers() const { return false; }
    /// The gradient buckets' cap in bytes (GradientBuckets); 0: every layer's gradients on their own.
    [[nodiscard]] virtual std::uint64_t bucket_bytes() const { return 0; }
};

/// How cluster.gradient_sync synchronises (docs/compression.md): an all-reduce (the default: the
/// algorithm the chooser picks, uncompressed) or a parameter server, compressed gradients, and
/// delayed updates.
struct SyncScheme {
    compression::Params compression;
    bool parameter_server = false;
    std::vector<NodeId> servers;  ///< parameter_server: the server nodes, each owning an equal shard
    std::size_t staleness = 0;
    std::uint64_t bucket_bytes = 0;  ///< gradient buckets' cap; 0: every layer's gradients on their own
    /// A plain all-reduce over more ranks is lowered to a FlowCollective per rank (its time the
    /// chooser's cost, no messages, no link traffic); compressed and parameter-server exchanges
    /// stay messages.
    std::size_t message_level_max_ranks = kDefaultMessageLevelMaxRanks;
};

/// Seconds a node spends on its part of compressing a gradient (on its converter lanes, DRAM
/// and array), given by the caller from the node model.
using CompressionSeconds = std::function<Picoseconds(NodeId node, const compression::Work& work)>;

/// A SyncScheme lowered to messages: each rank first does its compression work (a Compute on
/// its comm stream), then the scheme's exchange (docs/compression.md, "Wire volumes"); with the
/// default scheme, the plain all-reduce. Its time is the lowered program replayed on the
/// network: alone (memoised), or the step's jobs layer after layer on one network, each node's
/// ops from its ready time, so they share links and nodes as the cluster runs them.
class SchemeSync final : public GradientSync {
public:
    SchemeSync(interconnect::AllReduceChooser& chooser, SyncScheme scheme, CompressionSeconds work_seconds);
    std::uint64_t lower(std::vector<interconnect::NodeProgram>& programs, const SyncJob& job, std::uint64_t tag,
                        std::uint32_t label) override;
    double seconds(const SyncJob& job) override;
    /// A plain all-reduce (no compression, no server): the chooser's fluid-model estimate, no
    /// replay; otherwise seconds().
    double estimated_seconds(const SyncJob& job) override;
    /// The jobs lowered together, each node's ops after a delay to its ready time, and replayed:
    /// a parameter server's workers start their next pushes while it still serves the last.
    std::vector<std::vector<double>> finish_times(const std::vector<SyncJob>& jobs,
                                                  const std::vector<double>& ready) override;
    /// Ranks done after `give_up_after_s` (a replay stops there), and every later call of the
    /// step, are at +infinity; the same from the memo as from a replay.
    std::vector<std::vector<double>> finish_times_until(const std::vector<SyncJob>& jobs,
                                                        const std::vector<double>& ready,
                                                        double give_up_after_s) override;
    /// The links start the step free; each layer's replay then finds them as the earlier
    /// layers' left them.
    void begin_step() override;
    [[nodiscard]] double busiest_link_s() const override;
    [[nodiscard]] std::size_t staleness() const override { return m_scheme.staleness; }
    [[nodiscard]] bool uses_parameter_servers() const override { return m_scheme.parameter_server; }
    [[nodiscard]] std::uint64_t bucket_bytes() const override { return m_scheme.bucket_bytes; }
    [[nodiscard]] const SyncScheme& scheme() const { return m_scheme; }

private:
    std::uint64_t lower_all_reduce(std::vector<interconnect::NodeProgram>& programs, const SyncJob& job,
                                   std::uint64_t tag, std::uint32_t label);
    std::uint64_t lower_parameter_server(std::vector<interconnect::NodeProgram>& programs, const SyncJob& job,
                                         std::uint64_t tag, std::uint32_t label);
    /// Per node id: when its programs' ops end, all of `jobs` lowered in order, node n's ops
    /// starting at start_ps[n] (empty: all at 0), on `network` (reset first if `reset`).
    std::vector<Picoseconds> replay(interconnect::Network& network, const std::vector<SyncJob>& jobs,
                                    const std::vector<Picoseconds>& start_ps, bool reset,
                                    Picoseconds give_up_after = interconnect::kNeverPs);
    /// The busiest channel of m_step_network so far.
    [[nodiscard]] Picoseconds step_busiest_ps() const;
    /// Replays on m_step_network the step's calls answered from the memo, so it is as they left it.
    void replay_skipped();
    /// Each rank's `each` bytes sent to every other rank at once, then received: one step.
    std::uint64_t direct_all_gather(std::vector<interconnect::NodeProgram>& programs, const std::vector<NodeId>& ranks,
                                    std::uint64_t each, std::uint64_t tag, std::uint32_t label);
    /// Whether a sparse all-gather over `ranks` goes direct rather than round the ring.
    bool direct_gather(const std::vector<NodeId>& ranks, std::uint64_t each);
    /// The all-gather of `each` bytes per rank over `ranks`, ring or direct, replayed alone.
    Picoseconds gather_ps(const std::vector<NodeId>& ranks, std::uint64_t each, bool direct);
    /// Whether `job`'s sparse values (`each` bytes per rank) go as its dense all-reduce instead:
    /// with the algorithm `best` only, where that replays faster than the all-gather (over many
    /// ranks, p x density > 1, the gathered pairs outweigh the dense gradient).
    bool sends_dense(const SyncJob& job, std::uint64_t each);

    interconnect::AllReduceChooser& m_chooser;
    SyncScheme m_scheme;
    CompressionSeconds m_work_seconds;
    interconnect::Network m_network;       ///< replays alone
    interconnect::Network m_step_network;  ///< the step's replays, one layer after another
    std::optional<bool> m_forced_gather;   ///< from the chooser's forced algorithm: ring (false) or direct (true)
    std::map<std::pair<std::vector<NodeId>, std::uint64_t>, bool> m_gather_choice;
    std::map<std::tuple<std::vector<NodeId>, std::uint64_t, std::uint64_t>, bool> m_dense_choice;
    std::map<std::tuple<std::vector<NodeId>, std::uint64_t, std::uint64_t, std::uint64_t, std::uint64_t>, double>
        m_alone;

    /// The step's replays, memoised: a planner predicts many plans whose steps begin alike (or
    /// are the same), and a replay depends only on its jobs, their start times and the network
    /// as the step's earlier replays left it. Each entry is one finish_times() call after the
    /// calls on the path from the root (begin_step()) to it.
    struct StepMemoEntry {
        std::vector<Picoseconds> end_ps;  ///< per node id
        Picoseconds busiest_ps{0};        ///< the busiest channel after it
    };
    using StepMemoKey = std::pair<std::uint32_t, std::vector<std::uint64_t>>;  ///< (parent, call)
    struct StepMemoKeyHash {
        std::size_t operator()(const StepMemoKey& k) const;
    };
    /// Entries kept before the memo starts over (a key is about 100 words on large clusters).
    static constexpr std::size_t kMaxStepMemoEntries = 200'000;
    static constexpr std::uint32_t kOffMemo = ~std::uint32_t{0};
    std::unordered_map<StepMemoKey, std::uint32_t, StepMemoKeyHash> m_step_children;
    std::vector<StepMemoEntry> m_step_entries;  ///< [0]: the root
    std::uint32_t m_step_at = kOffMemo;         ///< the entry of this step's calls so far; kOffMemo: off the memo
    bool m_step_given_up = false;               ///< a replay of this step gave up: the rest is at +infinity
    /// Calls answered from the memo whose replay m_step_network has not seen; replayed if a
    /// later call of the step misses.
    std::vector<std::pair<std::vector<SyncJob>, std::vector<Picoseconds>>> m_step_unreplayed;
};

/// Another GradientSync's jobs each timed alone by its estimated_seconds(), from when all their
/// ranks are ready: no replay of the step's jobs sharing links. A cheap estimate for ranking
/// many candidate plans (alpa's block costs) whose winners are then predicted with the full
/// replay.
class AloneSync final : public GradientSync {
public:
    explicit AloneSync(GradientSync& timed) : m_timed(timed) {}
    std::uint64_t lower(std::vector<interconnect::NodeProgram>& programs, const SyncJob& job, std::uint64_t tag,
                        std::uint32_t label) override {
        return m_timed.lower(programs, job, tag, label);
    }
    double seconds(const SyncJob& job) override { return m_timed.estimated_seconds(job); }
    [[nodiscard]] std::size_t staleness() const override { return m_timed.staleness(); }
    [[nodiscard]] std::uint64_t bucket_bytes() const override { return m_timed.bucket_bytes(); }

private:
    GradientSync& m_timed;
};

}  // namespace fastsim::planner
