// SPDX-License-Identifier: MIT
#include "planner/gradient_sync.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

#include "common/checked.h"
#include "compression/compressor.h"
#include "interconnect/collectives.h"
#include "interconnect/replay.h"

namespace fastsim::planner {
namespace {

using interconnect::Compute;
using interconnect::NodeProgram;

std::vector<NodeId> sorted_unique(std::vector<NodeId> ids) {
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    return ids;
}

compression::Gradient gradient_of(const SyncJob& job) {
    return {job.elements, job.bytes, job.factor_rows, job.factor_cols};
}

void grow_to(std::vector<NodeProgram>& programs, const std::vector<NodeId>& nodes) {
    for (const NodeId n : nodes)
        if (n.value() >= programs.size()) programs.resize(n.value() + 1);
}

}  // namespace

// ---- schemes ------------------------------------------------------------------------------

SchemeSync::SchemeSync(interconnect::AllReduceChooser& chooser, SyncScheme scheme, CompressionSeconds work_seconds)
    : m_chooser(chooser),
      m_scheme(std::move(scheme)),
      m_work_seconds(std::move(work_seconds)),
      m_network(chooser.topology()),
      m_step_network(chooser.topology()) {
    if (const auto forced = chooser.forced()) m_forced_gather = *forced == interconnect::AllReduceAlgorithm::direct;
    m_scheme.servers = sorted_unique(m_scheme.servers);
    if (m_scheme.parameter_server && m_scheme.servers.empty())
        throw std::invalid_argument("SchemeSync: a parameter server needs at least one server node");
}

std::uint64_t SchemeSync::lower(std::vector<NodeProgram>& programs, const SyncJob& job, std::uint64_t tag,
                                std::uint32_t label) {
    grow_to(programs, job.ranks);
    const bool alone = job.ranks.size() < 2;
    if (alone && !m_scheme.parameter_server) return tag;
    // (1) Each rank compresses its gradient (error feedback, selection, quantisation, factors).
    const compression::Work work =
        compression::compressor_of(m_scheme.compression.scheme)
            .node_work(m_scheme.compression, job.elements, job.factor_rows + job.factor_cols);
    if (m_work_seconds && (work.dram_bytes > 0 || work.vector_values > 0 || work.macs > 0))
        for (const NodeId n : job.ranks) {
            const Picoseconds ps = m_work_seconds(n, work);
            if (ps > Picoseconds(0)) programs[n.value()].ops.emplace_back(Compute{ps, label});
        }
    // (2) The exchange.
    return m_scheme.parameter_server ? lower_parameter_server(programs, job, tag, label)
                                     : lower_all_reduce(programs, job, tag, label);
}

std::uint64_t SchemeSync::lower_all_reduce(std::vector<NodeProgram>& programs, const SyncJob& job, std::uint64_t tag,
                                           std::uint32_t label) {
    const compression::Params& c = m_scheme.compression;
    const std::size_t p = job.ranks.size();
    for (const compression::WireCollective& w : compression::compressor_of(c.scheme).wire(c, gradient_of(job), p)) {
        switch (w.op) {
        case compression::WireCollective::Op::all_reduce:
            if (p > m_scheme.message_level_max_ranks && c.scheme == compression::Scheme::none) {  // flow model
                const double seconds = m_chooser.choose(job.ranks, static_cast<double>(w.bytes)).seconds;
                const interconnect::FlowCollective flow{
                    tag++, static_cast<std::uint32_t>(p),
                    Picoseconds(static_cast<std::uint64_t>(std::llround(std::min(seconds, 1e6) * 1e12))), label};
                for (const NodeId n : job.ranks) programs[n.value()].ops.emplace_back(flow);
                break;
            }
            // By the algorithm the chooser picks for that many bytes.
            tag = interconnect::simulated_all_reduce(
                m_chooser.topology(), m_chooser.choose(job.ranks, static_cast<double>(w.bytes)).algorithms, programs,
                job.ranks, w.bytes, tag, label);
            break;
        case compression::WireCollective::Op::all_gather:
            // The selected values as a dense all-reduce where that is faster (`best` only).
            if (sends_dense(job, w.bytes)) {
                tag = interconnect::simulated_all_reduce(
                    m_chooser.topology(), m_chooser.choose(job.ranks, static_cast<double>(job.bytes)).algorithms,
                    programs, job.ranks, job.bytes, tag, label);
                break;
            }
            // On a ring, or each rank sending its part to every other at once, whichever replays
            // faster (or as forced).
            tag = direct_gather(job.ranks, w.bytes)
                      ? direct_all_gather(programs, job.ranks, w.bytes, tag, label)
                      : interconnect::ring_all_gather(programs, job.ranks,
                                                      checked_mul(w.bytes, p, "bytes of an all-gather"), tag, label);
            break;
        }
    }
    return tag;
}

std::uint64_t SchemeSync::lower_parameter_server(std::vector<NodeProgram>& programs, const SyncJob& job,
                                                 std::uint64_t tag, std::uint32_t label) {
    const compression::Params& c = m_scheme.compression;
    const std::vector<NodeId>& servers = m_scheme.servers;
    grow_to(programs, servers);
    const std::size_t p = job.ranks.size(), shards = servers.size();
    // One round: every rank pushes its shard s to server s, the server sums them and every rank
    // pulls the sum. Per shard of `values` values: the bytes pushed by a rank and pulled back.
    const auto round = [&](std::uint64_t values_total, const auto& push_bytes, const auto& pull_bytes) {
        const std::uint64_t base = tag;
        const auto push_tag = [&](std::size_t s, std::size_t r) { return base + 2 * (s * p + r); };
        for (std::size_t r = 0; r < p; ++r)  // pushes, non-blocking
            for (std::size_t s = 0; s < shards; ++s)
                if (job.ranks[r] != servers[s])
                    programs[job.ranks[r].value()].ops.emplace_back(
                        interconnect::Send{servers[s], push_bytes(interconnect::chunk_bytes(values_total, shards, s)),
                                           push_tag(s, r), label});
        for (std::size_t s = 0; s < shards; ++s) {  // each server: receive every push, then send the sum
            auto& ops = programs[servers[s].value()].ops;
            for (std::size_t r = 0; r < p; ++r)
                if (job.ranks[r] != servers[s])
                    ops.emplace_back(interconnect::Recv{job.ranks[r], push_tag(s, r), label});
            for (std::size_t r = 0; r < p; ++r)
                if (job.ranks[r] != servers[s])
                    ops.emplace_back(interconnect::Send{job.ranks[r],
                                                        pull_bytes(interconnect::chunk_bytes(values_total, shards, s)),
                                                        push_tag(s, r) + 1, label});
        }
        for (std::size_t r = 0; r < p; ++r)  // pulls
            for (std::size_t s = 0; s < shards; ++s)
                if (job.ranks[r] != servers[s])
                    programs[job.ranks[r].value()].ops.emplace_back(
                        interconnect::Recv{servers[s], push_tag(s, r) + 1, label});
        tag = base + 2 * shards * p;
    };
    const compression::Compressor& compressor = compression::compressor_of(c.scheme);
    const compression::Gradient g = gradient_of(job);
    for (const std::uint64_t values : compressor.server_rounds(c, g))
        round(
            values, [&](std::uint64_t shard) { return compressor.pushed_bytes(c, g, shard); },
            [&](std::uint64_t shard) { return compressor.pulled_bytes(c, g, shard, p); });
    return tag;
}

std::uint64_t SchemeSync::direct_all_gather(std::vector<NodeProgram>& programs, const std::vector<NodeId>& ranks,
                                            std::uint64_t each, std::uint64_t tag, std::uint32_t label) {
    const std::size_t p = ranks.size();
    for (std::size_t i = 0; i < p; ++i)
        for (std::size_t j = 0; j < p; ++j)
            if (i != j)
                programs[ranks[i].value()].ops.emplace_back(interconnect::Send{ranks[j], each, tag + i * p + j, label});
    for (std::size_t i = 0; i < p; ++i)
        for (std::size_t j = 0; j < p; ++j)
            if (i != j)
                programs[ranks[i].value()].ops.emplace_back(interconnect::Recv{ranks[j], tag + j * p + i, label});
    return tag + p * p;
}

Picoseconds SchemeSync::gather_ps(const std::vector<NodeId>& ranks, std::uint64_t each, bool direct) {
    std::vector<NodeProgram> programs;
    grow_to(programs, ranks);
    if (direct)
        direct_all_gather(programs, ranks, each, 0, 0);
    else
        interconnect::ring_all_gather(programs, ranks, checked_mul(each, ranks.size(), "bytes of an all-gather"), 0, 0);
    std::vector<NodeId> node_of(programs.size());
    for (std::size_t n = 0; n < programs.size(); ++n) node_of[n] = NodeId(n);
    return interconnect::replay_messages(m_network, programs, node_of);
}

bool SchemeSync::direct_gather(const std::vector<NodeId>& ranks, std::uint64_t each) {
    if (m_forced_gather) return *m_forced_gather;
    const auto key = std::make_pair(ranks, each);
    if (const auto it = m_gather_choice.find(key); it != m_gather_choice.end()) return it->second;
    const bool direct =
        ranks.size() <= interconnect::kMaxDirectRanks && gather_ps(ranks, each, true) < gather_ps(ranks, each, false);
    return m_gather_choice.emplace(key, direct).first->second;
}

bool SchemeSync::sends_dense(const SyncJob& job, std::uint64_t each) {
    if (m_chooser.forced() || job.ranks.size() < 2) return false;
    const auto key = std::make_tuple(job.ranks, each, job.bytes);
    if (const auto it = m_dense_choice.find(key); it != m_dense_choice.end()) return it->second;
    const double gather_s = to_seconds(gather_ps(job.ranks, each, direct_gather(job.ranks, each)));
    const double dense_s = m_chooser.cheapest(job.ranks, static_cast<double>(job.bytes)).seconds;
    return m_dense_choice.emplace(key, dense_s < gather_s).first->second;
}

std::vector<Picoseconds> SchemeSync::replay(interconnect::Network& network, const std::vector<SyncJob>& jobs,
                                            const std::vector<Picoseconds>& start_ps, bool reset,
                                            Picoseconds give_up_after) {
    std::vector<NodeProgram> programs;
    std::uint64_t tag = 0;
    for (const SyncJob& j : jobs) tag = lower(programs, j, tag, 0);
    for (std::size_t n = 0; n < programs.size() && n < start_ps.size(); ++n)
        if (start_ps[n] > Picoseconds(0) && !programs[n].ops.empty())
            programs[n].ops.insert(programs[n].ops.begin(), Compute{start_ps[n], 0});
    std::vector<NodeId> node_of(programs.size());
    for (std::size_t n = 0; n < programs.size(); ++n) node_of[n] = NodeId(n);
    std::vector<Picoseconds> end_ps;
    interconnect::replay_messages(network, programs, node_of, &end_ps, reset, give_up_after);
    return end_ps;
}

double SchemeSync::busiest_link_s() const {
    return to_seconds(m_step_at != kOffMemo ? m_step_entries[m_step_at].busiest_ps : step_busiest_ps());
}

Picoseconds SchemeSync::step_busiest_ps() const {
    Picoseconds busiest{0};
    for (const auto& s : m_step_network.stats()) busiest = std::max(busiest, s.busy_ps);
    return busiest;
}

void SchemeSync::replay_skipped() {
    for (const auto& [jobs, start_ps] : m_step_unreplayed) replay(m_step_network, jobs, start_ps, false);
    m_step_unreplayed.clear();
}

std::size_t SchemeSync::StepMemoKeyHash::operator()(const StepMemoKey& k) const {
    std::uint64_t h = k.first * 0x9E3779B97F4A7C15ull;
    for (const std::uint64_t v : k.second) h = (h ^ v) * 0x100000001B3ull;
    return static_cast<std::size_t>(h ^ (h >> 29));
}

void SchemeSync::begin_step() {
    m_step_network.reset();
    m_step_unreplayed.clear();
    if (m_step_entries.empty() || m_step_entries.size() > kMaxStepMemoEntries) {
        m_step_children.clear();
        m_step_entries.assign(1, StepMemoEntry{});
    }
    m_step_at = 0;
    m_step_given_up = false;
}

double SchemeSync::seconds(const SyncJob& job) {
    const auto key = std::make_tuple(job.ranks, job.elements, job.bytes, job.factor_rows, job.factor_cols);
    if (const auto it = m_alone.find(key); it != m_alone.end()) return it->second;
    const std::vector<Picoseconds> end_ps = replay(m_network, {job}, {}, true);
    Picoseconds last{0};
    for (const Picoseconds t : end_ps) last = std::max(last, t);
    return m_alone.emplace(key, to_seconds(last)).first->second;
}

double SchemeSync::estimated_seconds(const SyncJob& job) {
    if (m_scheme.parameter_server || m_scheme.compression.scheme != compression::Scheme::none) return seconds(job);
    return m_chooser.estimated_seconds(job.ranks, static_cast<double>(job.bytes));
}

std::vector<std::vector<double>> SchemeSync::finish_times(const std::vector<SyncJob>& jobs,
                                                          const std::vector<double>& ready) {
    return finish_times_until(jobs, ready, std::numeric_limits<double>::infinity());
}

std::vector<std::vector<double>> SchemeSync::finish_times_until(const std::vector<SyncJob>& jobs,
                                                                const std::vector<double>& ready,
                                                                double give_up_after_s) {
    constexpr double kNever = std::numeric_limits<double>::infinity();
    if (m_step_given_up) {
        std::vector<std::vector<double>> out;
        for (const SyncJob& j : jobs) out.emplace_back(j.ranks.size(), kNever);
        return out;
    }
    // Beyond what llround can hold (2^63 ps, about 107 days) is as good as never.
    const double give_up_after_ps = std::max(0.0, give_up_after_s) * 1e12;
    const Picoseconds give_up_ps = give_up_after_ps < static_cast<double>(std::numeric_limits<long long>::max())
                                       ? Picoseconds(static_cast<std::uint64_t>(std::llround(give_up_after_ps)))
                                       : interconnect::kNeverPs;
    // In the step's picoseconds, on the links as the step's earlier layers left them.
    std::vector<Picoseconds> start_ps(ready.size(), Picoseconds(0));
    for (std::size_t n = 0; n < ready.size(); ++n)
        start_ps[n] = Picoseconds(static_cast<std::uint64_t>(std::llround(std::max(0.0, ready[n]) * 1e12)));
    std::vector<Picoseconds> replayed;
    const std::vector<Picoseconds>* end_ps = &replayed;
    if (m_chooser.recording() && m_step_at != kOffMemo) {  // the chooser counts every lowering: replay all
        replay_skipped();
        m_step_at = kOffMemo;
    }
    if (m_step_at == kOffMemo) {
        replayed = replay(m_step_network, jobs, start_ps, false, give_up_ps);
    } else {
        StepMemoKey key{m_step_at, {}};
        for (const SyncJob& j : jobs) {
            key.second.push_back(j.ranks.size());
            for (const NodeId n : j.ranks) key.second.push_back(n.value());
            key.second.insert(key.second.end(), {j.elements, j.bytes, j.factor_rows, j.factor_cols});
        }
        for (const Picoseconds t : start_ps) key.second.push_back(t.count());
        if (const auto it = m_step_children.find(key); it != m_step_children.end()) {
            m_step_at = it->second;
            m_step_unreplayed.emplace_back(jobs, start_ps);
            end_ps = &m_step_entries[m_step_at].end_ps;
        } else {
            replay_skipped();
            replayed = replay(m_step_network, jobs, start_ps, false, give_up_ps);
            if (std::find(replayed.begin(), replayed.end(), interconnect::kNeverPs) == replayed.end()) {
                StepMemoEntry entry{replayed, step_busiest_ps()};
                m_step_at = static_cast<std::uint32_t>(m_step_entries.size());
                m_step_entries.push_back(std::move(entry));
                m_step_children.emplace(std::move(key), m_step_at);
            }
        }
    }
    // Past the bound is never, whether replayed or remembered (so a plan's fate does not depend
    // on the memo); a replay that gave up left the network mid-way, so the step's later calls are
    // never done either.
    bool past = false;
    for (const SyncJob& j : jobs)
        for (const NodeId n : j.ranks) past = past || (*end_ps)[n.value()] > give_up_ps;
    if (past) {
        m_step_given_up = true;
        m_step_at = kOffMemo;
    }
    std::vector<std::vector<double>> out;
    for (const SyncJob& j : jobs) {
        std::vector<double> ends;
        for (const NodeId n : j.ranks) {
            const Picoseconds t = (*end_ps)[n.value()];
            ends.push_back(t > give_up_ps ? kNever : to_seconds(t));
        }
        out.push_back(std::move(ends));
    }
    return out;
}

}  // namespace fastsim::planner
