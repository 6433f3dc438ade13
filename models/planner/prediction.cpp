// SPDX-License-Identifier: MIT
#include "planner/prediction.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <tuple>

#include "planner/schedule.h"

namespace fastsim::planner {
namespace {}  // namespace

NodeClocks::NodeClocks(std::size_t nodes) : main(nodes, 0.0), comm(nodes, 0.0), sent(nodes, 0.0), synced(nodes) {}

double stale_step_s(const NodeClocks& clocks, const std::vector<std::size_t>& nodes, std::size_t staleness,
                    double busiest_link_s) {
    double main_end = 0, sync_end = 0;
    for (const std::size_t n : nodes) {
        main_end = std::max(main_end, clocks.main[n]);
        sync_end = std::max(sync_end, clocks.comm[n]);
    }
    return std::max({main_end, busiest_link_s, sync_end / static_cast<double>(staleness + 1)});
}

void NodeClocks::deliver(const std::vector<std::pair<std::size_t, std::size_t>>& pairs,
                         const std::vector<double>& sent_at, double busiest_s, double share, double latency_s,
                         std::vector<double>& bottleneck_free) {
    const std::size_t n = pairs.size();
    const double k = std::clamp(std::round(share * static_cast<double>(n)), 1.0, static_cast<double>(n));
    const auto servers = static_cast<std::size_t>(std::max(1.0, std::floor(static_cast<double>(n) / k)));
    const double hold = busiest_s / k;
    std::vector<std::size_t> order(n);
    for (std::size_t i = 0; i < n; ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](std::size_t x, std::size_t y) {
        return sent_at[x] != sent_at[y] ? sent_at[x] < sent_at[y] : pairs[x].first < pairs[y].first;
    });
    if (bottleneck_free.size() != servers) bottleneck_free.assign(servers, 0.0);
    for (std::size_t j = 0; j < n; ++j) {
        double& f = bottleneck_free[j % servers];
        const double start = std::max(sent_at[order[j]], f);
        f = start + hold;
        double& clock = main[pairs[order[j]].second];
        clock = std::max(clock, f + latency_s);
    }
}

namespace {

class Predictor final : public StepVisitor {
public:
    Predictor(const LayerGraph& graph, const Plan& plan, const std::vector<std::size_t>& node_type,
              const ComputeModel& compute, GradientSync& gradient_sync, NodeClocks& clocks,
              double give_up_after_s = std::numeric_limits<double>::infinity())
        : m_plan(plan),
          m_nodes(plan.groups.front().nodes),
          m_node_type(node_type),
          m_compute(compute),
          m_sync(gradient_sync),
          m_clocks(clocks),
          m_main(clocks.main),
          m_comm(clocks.comm),
          m_sent(clocks.sent),
          m_synced(clocks.synced),
          m_times(graph.layers.size()),
          m_layer_total(graph.layers.size(), 0.0),
          m_sync_s(graph.layers.size(), 0.0),
          m_slowest(graph.layers.size(), PhaseSeconds{}),
          // Under a delayed update the step is not bounded by its synchronisations' ends.
          m_give_up_after_s(gradient_sync.staleness() > 0 ? std::numeric_limits<double>::infinity() : give_up_after_s) {
        m_sync.begin_step();
    }

    void exchange(std::size_t g, const SideVolumes& bytes, const StepTag& tag, ExchangeTensor tensor) override {
        const Group& group = m_plan.groups[g];
        const auto& a = m_plan.groups[static_cast<std::size_t>(group.side_a)].nodes;
        const auto& b = m_plan.groups[static_cast<std::size_t>(group.side_b)].nodes;
        const ExchangeCost& x = group.exchange;
        // Every node sends at its clock before any receives: arrivals use the clocks before.
        for (const std::size_t n : a) m_sent[n] = m_main[n];
        for (const std::size_t n : b) m_sent[n] = m_main[n];
        const std::size_t pairs = std::max(a.size(), b.size());
        m_arrivals.clear();
        if (bytes.to_a > 0)
            queue(pairs, bytes.to_a * x.seconds_per_byte_to_a, x.bottleneck_share_to_a, x.latency_s,
                  [&](std::size_t i) {
                      return std::pair{b[i % b.size()], a[i % a.size()]};
                  });
        if (bytes.to_b > 0)
            queue(pairs, bytes.to_b * x.seconds_per_byte_to_b, x.bottleneck_share_to_b, x.latency_s,
                  [&](std::size_t i) {
                      return std::pair{a[i % a.size()], b[i % b.size()]};
                  });
        for (const auto& [node, at] : m_arrivals) arrive(node, at, tag.layer);
        // Then each receiver converts what it received into its own format where that differs
        // (ScheduleBuilder::exchange: a Compute after the exchange's receives).
        for (const auto& [node, seconds] : exchange_conversions(m_plan, g, bytes, tensor)) {
            m_main[node] += seconds;
            m_layer_total[tag.layer.value()] += seconds;
        }
    }

    void compute(std::size_t phase, const StepTag& tag) override {
        const std::size_t l = tag.layer.value();
        std::vector<PhaseSeconds>& times = m_times[l];
        if (times.empty()) {  // each layer's phases once, when first walked
            times.resize(m_nodes.size());
            for (std::size_t i = 0; i < m_nodes.size(); ++i) {
                const std::size_t n = m_nodes[i];
                times[i] = m_compute(m_node_type[n], tag.layer, m_plan.node_dims[n][l]);
                for (std::size_t p = 0; p < times[i].size(); ++p)
                    m_slowest[l][p] = std::max(m_slowest[l][p], times[i][p]);
            }
        }
        for (std::size_t i = 0; i < m_nodes.size(); ++i) {
            m_main[m_nodes[i]] += times[i][phase];
            m_layer_total[l] += times[i][phase];
        }
    }

    void all_reduce(const std::vector<ReplicaSet>& sets, const StepTag& tag) override {
        const LayerId layer = tag.layer;
        for (const ReplicaSet& set : sets)
            for (const NodeId n : set.nodes)
                m_comm[n.value()] = std::max(m_comm[n.value()], m_main[n.value()]);  // the gradient is ready
        // The layer's sets run at once from each node's ready time, sharing links and nodes, as
        // the scheme times them (GradientSync::finish_times; docs/planner.md, "Gradient
        // synchronisation").
        m_jobs.clear();
        for (const ReplicaSet& set : sets) m_jobs.push_back(sync_job(m_plan, set));
        const std::vector<double> ready = m_comm;
        const std::vector<std::vector<double>> ends = m_sync.finish_times_until(m_jobs, ready, m_give_up_after_s);
        for (std::size_t s = 0; s < sets.size(); ++s) {
            double set_ready = 0, set_end = 0;
            for (std::size_t i = 0; i < sets[s].nodes.size(); ++i) {
                const std::size_t n = sets[s].nodes[i].value();
                set_ready = std::max(set_ready, ready[n]);
                m_comm[n] = std::max(m_comm[n], ends[s][i]);
                set_end = std::max(set_end, m_comm[n]);
            }
            m_sync_s[layer.value()] = std::max(m_sync_s[layer.value()], set_end - set_ready);
        }
        std::vector<bool> taking_part(m_main.size(), false);
        for (const ReplicaSet& set : sets)
            for (const NodeId n : set.nodes) taking_part[n.value()] = true;
        for (std::size_t n = 0; n < m_main.size(); ++n)
            if (taking_part[n]) m_synced[n].emplace_back(layer, m_comm[n]);
    }

    void weight_update(const StepTag& tag) override { m_updates.push_back(tag.layer); }

    /// `walk` (not synchronising) from the plan's nodes' clocks where they are. Such a walk is
    /// shift-invariant: started at t + r[n] on node n, each node ends at t plus what it ends at
    /// from r alone, and adds the same waits and compute to each layer. So a walk whose start
    /// offsets r (rounded to kOffsetQuantumS) were walked before is applied from the memo (a
    /// pipeline's stage walks 2M micro-batches from a few patterns of offsets).
    void walk_unsynced(const LayerGraph& graph, const Plan& plan, const StepWalk& walk) {
        double t0 = std::numeric_limits<double>::infinity();
        for (const std::size_t n : m_nodes) t0 = std::min(t0, m_main[n]);
        ShiftKey key{walk.forward, walk.backward, {}};
        key.offsets.reserve(m_nodes.size());
        for (const std::size_t n : m_nodes) key.offsets.push_back(std::llround((m_main[n] - t0) / kOffsetQuantumS));
        if (const auto it = m_shift_memo.find(key); it != m_shift_memo.end()) {
            const ShiftEntry& e = it->second;
            for (std::size_t i = 0; i < m_nodes.size(); ++i) m_main[m_nodes[i]] = t0 + e.end_offset_s[i];
            for (std::size_t l = 0; l < e.layer_added_s.size(); ++l) m_layer_total[l] += e.layer_added_s[l];
            return;
        }
        const std::vector<double> totals_before = m_layer_total;
        walk_step(graph, plan, *this, walk);
        if (m_shift_memo.size() >= kMaxShiftEntries) return;
        ShiftEntry e;
        for (const std::size_t n : m_nodes) e.end_offset_s.push_back(m_main[n] - t0);
        e.layer_added_s.resize(m_layer_total.size());
        for (std::size_t l = 0; l < m_layer_total.size(); ++l) e.layer_added_s[l] = m_layer_total[l] - totals_before[l];
        m_shift_memo.emplace(std::move(key), std::move(e));
    }

    StepPrediction finish() {
        StepPrediction p;
        if (m_sync.staleness() > 0) {  // a delayed update: the main streams do not wait
            update_weights();
            p.step_s = stale_step_s(m_clocks, m_nodes, m_sync.staleness(), m_sync.busiest_link_s());
            finish_layers(p);
            return p;
        }
        for (const std::size_t n : m_nodes) {
            for (const auto& [layer, done] : m_synced[n]) {  // the final waits, in the order signalled
                if (done > m_main[n]) {
                    m_layer_total[layer.value()] += done - m_main[n];
                    m_main[n] = done;
                }
            }
        }
        update_weights();
        for (const std::size_t n : m_nodes) p.step_s = std::max(p.step_s, m_main[n]);
        finish_layers(p);
        return p;
    }

private:
    /// The weight updates weight_update named, after everything else on each node.
    void update_weights() {
        for (const LayerId layer : m_updates) {
            const std::vector<PhaseSeconds>& times = m_times[layer.value()];
            if (times.empty()) continue;  // never computed: nothing of it on these nodes
            for (std::size_t i = 0; i < m_nodes.size(); ++i) {
                m_main[m_nodes[i]] += times[i][kWeightUpdate];
                m_layer_total[layer.value()] += times[i][kWeightUpdate];
            }
        }
        m_updates.clear();
    }

    void finish_layers(StepPrediction& p) const {
        p.layer_s.resize(m_layer_total.size());
        for (std::size_t l = 0; l < m_layer_total.size(); ++l)
            p.layer_s[l] = m_layer_total[l] / static_cast<double>(m_nodes.size());
        p.sync_s = m_sync_s;
        p.compute_s = m_slowest;
    }

    /// One direction of an exchange: the pairs' messages (sender, receiver) = pair(i), sent at
    /// the senders' clocks. Its bottleneck channel carries k = share x pairs of them, so the
    /// messages queue, in the order sent (ties: the lower sender), at pairs / k bottlenecks
    /// in parallel, each message holding one for busiest_s / k; a message arrives latency_s
    /// after its turn ends. All sent at once, the last arrives busiest_s + latency_s after.
    template <typename PairAt>
    void queue(std::size_t pairs, double busiest_s, double share, double latency_s, const PairAt& pair) {
        const double k = std::clamp(std::round(share * static_cast<double>(pairs)), 1.0, static_cast<double>(pairs));
        const auto servers = static_cast<std::size_t>(std::max(1.0, std::floor(static_cast<double>(pairs) / k)));
        const double hold = busiest_s / k;
        m_order.clear();
        for (std::size_t i = 0; i < pairs; ++i) {
            const auto [sender, receiver] = pair(i);
            m_order.push_back({m_sent[sender], sender, receiver});
        }
        std::sort(m_order.begin(), m_order.end(), [](const Message& x, const Message& y) {
            return x.sent_s != y.sent_s ? x.sent_s < y.sent_s : x.sender < y.sender;
        });
        m_free.assign(servers, 0.0);
        for (std::size_t j = 0; j < m_order.size(); ++j) {
            const Message& message = m_order[j];
            double& free = m_free[j % servers];
            const double start = std::max(message.sent_s, free);
            free = start + hold;
            m_arrivals.emplace_back(message.receiver, free + latency_s);
        }
    }

    void arrive(std::size_t n, double at, LayerId layer) {
        if (at <= m_main[n]) return;
        m_layer_total[layer.value()] += at - m_main[n];
        m_main[n] = at;
    }

    /// walk_unsynced's start offsets are compared in picoseconds; at most this many patterns kept.
    static constexpr double kOffsetQuantumS = 1e-12;
    static constexpr std::size_t kMaxShiftEntries = 64;
    struct ShiftKey {
        bool forward, backward;
        std::vector<long long> offsets;  ///< per plan node, its start after the earliest, in quanta
        bool operator<(const ShiftKey& o) const {
            return std::tie(forward, backward, offsets) < std::tie(o.forward, o.backward, o.offsets);
        }
    };
    struct ShiftEntry {
        std::vector<double> end_offset_s;   ///< per plan node, its end after the earliest start
        std::vector<double> layer_added_s;  ///< per layer, what the walk added to m_layer_total
    };

    const Plan& m_plan;
    const std::vector<std::size_t>& m_nodes;  ///< the plan's nodes (ids)
    const std::vector<std::size_t>& m_node_type;
    const ComputeModel& m_compute;
    GradientSync& m_sync;
    NodeClocks& m_clocks;
    std::vector<double>& m_main;  ///< per node: the main clock, s
    std::vector<double>& m_comm;  ///< per node: the comm stream's clock, s
    std::vector<double>& m_sent;  ///< per node: its clock when the exchange sent
    struct Message {
        double sent_s;
        std::size_t sender, receiver;
    };
    std::vector<Message> m_order;                                    ///< an exchange direction's pairs, in send order
    std::vector<double> m_free;                                      ///< when each bottleneck is next free
    std::vector<std::pair<std::size_t, double>> m_arrivals;          ///< (receiver, arrival) of this exchange
    std::vector<SyncJob> m_jobs;                                     ///< an all-reduce's replica sets
    std::vector<std::vector<std::pair<LayerId, double>>>& m_synced;  ///< per node: (layer, all-reduces done)
    std::vector<std::vector<PhaseSeconds>> m_times;  ///< per layer, per position in m_nodes (once computed)
    std::vector<double> m_layer_total;               ///< per layer: Σ over nodes of compute + waits
    std::vector<double> m_sync_s;                    ///< per layer: its slowest all-reduce
    std::vector<PhaseSeconds> m_slowest;             ///< per layer: the slowest node per phase
    std::vector<LayerId> m_updates;                  ///< the layers weight_update named, in order
    double m_give_up_after_s;                        ///< predict_step's give_up_after_s
    std::map<ShiftKey, ShiftEntry> m_shift_memo;     ///< walk_unsynced's walks
};

}  // namespace

StepPrediction predict_step(const LayerGraph& graph, const Plan& plan, const std::vector<std::size_t>& node_type,
                            const ComputeModel& compute, GradientSync& gradient_sync, const StepWalk& walk,
                            double give_up_after_s) {
    NodeClocks clocks(node_type.size());
    Predictor predictor(graph, plan, node_type, compute, gradient_sync, clocks, give_up_after_s);
    StepWalk bucketed = walk;  // the scheme's buckets, as the schedule fills them
    bucketed.bucket_bytes = gradient_sync.bucket_bytes();
    walk_step(graph, plan, predictor, bucketed);
    return predictor.finish();
}

struct ClockedPredictor::Impl {
    Predictor predictor;
};

ClockedPredictor::ClockedPredictor(const LayerGraph& graph, const Plan& plan, const std::vector<std::size_t>& node_type,
                                   const ComputeModel& compute, GradientSync& gradient_sync, NodeClocks& clocks)
    : m_graph(graph),
      m_plan(plan),
      m_bucket_bytes(gradient_sync.bucket_bytes()),
      m_impl(std::make_unique<Impl>(Impl{Predictor(graph, plan, node_type, compute, gradient_sync, clocks)})) {}

ClockedPredictor::~ClockedPredictor() = default;
ClockedPredictor::ClockedPredictor(ClockedPredictor&&) noexcept = default;

void ClockedPredictor::walk(const StepWalk& walk) {
    StepWalk bucketed = walk;
    bucketed.bucket_bytes = m_bucket_bytes;
    if (walk.backward && walk.sync)
        walk_step(m_graph, m_plan, m_impl->predictor, bucketed);
    else
        m_impl->predictor.walk_unsynced(m_graph, m_plan, bucketed);
}

void ClockedPredictor::finish() { m_impl->predictor.finish(); }

}  // namespace fastsim::planner
