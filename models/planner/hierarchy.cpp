// SPDX-License-Identifier: MIT
#include "planner/hierarchy.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <unordered_map>

#include "common/output_files.h"
#include "planner/prediction.h"
#include "planner/strategy.h"

namespace fastsim::planner {
namespace {

/// The per-node dims a side of `nodes` nodes works on, for estimating its time: the
/// largest dimension halved (ceiling) until the halvings cover the nodes. The batch counts
/// as batch x out_rows / the layer's whole output rows (samples' worth of output rows, so that a
/// Type IV side is estimated at the shape a Type I side of the same work would be); halving it
/// halves the batch, or the rows once the batch is 1. A grouped convolution's channels are never
/// halved, as no planner splits them.
LayerDims per_node_share(LayerDims d, std::size_t nodes, const PlanLayer& layer) {
    const std::uint64_t whole_rows = layer.dims.out_rows;
    const bool channels_split = layer.groups == 1;  // PartitionRules::types_for keeps groups whole
    for (std::size_t left = nodes; left > 1; left = (left + 1) / 2) {
        const double samples =
            static_cast<double>(d.batch) * static_cast<double>(d.out_rows) / static_cast<double>(whole_rows);
        std::uint64_t* largest = nullptr;
        double size = samples;
        for (std::uint64_t* channels : {&d.in_channels, &d.out_channels})
            if (channels_split && static_cast<double>(*channels) > size) {
                largest = channels;
                size = static_cast<double>(*channels);
            }
        if (!largest) largest = d.batch > 1 || d.out_rows < 2 ? &d.batch : &d.out_rows;
        *largest = (*largest + 1) / 2;
    }
    return d;
}

double total(const PhaseSeconds& s) { return s[0] + s[1] + s[2] + s[kWeightUpdate]; }

}  // namespace

double speed_estimate(const ComputeModel& compute, const std::vector<std::size_t>& type_counts, const PlanLayer& layer,
                      LayerId l, const LayerDims& dims) {
    std::size_t nodes = 0;
    for (const std::size_t c : type_counts) nodes += c;
    const LayerDims share = per_node_share(dims, nodes, layer);
    double rate = 0;  // layers per second of all the nodes
    for (std::size_t t = 0; t < type_counts.size(); ++t)
        if (type_counts[t] > 0) rate += static_cast<double>(type_counts[t]) / total(compute(t, l, share));
    return static_cast<double>(nodes) / rate;
}

namespace {

/// The planner's working state for one make_plan call.
class Planning {
public:
    /// `memory_weight` > 0 adds the memory penalty to every option (docs/planner.md, "Memory").
    Planning(const PlanningInputs& in, const PartitionRules& rules, std::string_view planner, double memory_weight)
        : m_graph(in.graph),
          m_cluster(in.cluster),
          m_groups(in.groups),
          m_compute(in.compute),
          m_bytes(in.bytes),
          m_memory(in.memory),
          m_memory_weight(memory_weight),
          m_rules(rules),
          m_planner(planner),
          m_correction(in.groups.size(), std::vector<double>(in.graph.layers.size(), 1.0)) {
        std::size_t type_count = 0;
        for (std::size_t t : m_cluster.node_type) type_count = std::max(type_count, t + 1);
        m_type_counts.assign(m_groups.size(), std::vector<std::size_t>(type_count, 0));
        for (std::size_t g = 0; g < m_groups.size(); ++g)
            for (std::size_t n : m_groups[g].nodes) ++m_type_counts[g][m_cluster.node_type[n]];
        m_consumers.resize(m_graph.layers.size());
        for (std::size_t l = 0; l < m_graph.layers.size(); ++l)
            for (std::size_t e = 0; e < m_graph.layers[l].producers.size(); ++e)
                m_consumers[m_graph.layers[l].producers[e].from].push_back({l, e});
    }

    /// Seconds a side (the nodes of group `g`) takes for layer l at `dims`: the estimate from
    /// its nodes' speeds, scaled by the group's calibration.
    double side_seconds(std::size_t g, std::size_t l, const LayerDims& dims) const {
        return m_correction[g][l] * speed_estimate(g, l, dims);
    }

    /// Seconds a side takes for layer l at `dims`, assuming its nodes share the work in
    /// proportion to their speed and each node's share is the largest dimension halved.
    double speed_estimate(std::size_t g, std::size_t l, const LayerDims& dims) const {
        return planner::speed_estimate(m_compute, m_type_counts[g], m_graph.layers[l], LayerId(l), dims);
    }

    /// Chooses every layer's partition at group g, whose layers are `dims`, into `choices`.
    void plan_group(std::size_t g, const std::vector<LayerDims>& dims, std::vector<LayerChoice>& choices);

    /// The inputs of plan_group at group g, as bytes: equal keys, equal choices.
    std::string subproblem_key(std::size_t g, const std::vector<LayerDims>& dims) const;
    void solve_group(std::size_t g, const std::vector<LayerDims>& dims, std::vector<LayerChoice>& choices);
    /// The choices `given` makes at group g, whose layers are `dims` (its estimates kept where
    /// given). PlanError naming `where` (e.g. "groups[3]") for a split a layer cannot take.
    void given_group(std::size_t g, const std::vector<LayerDims>& dims, const std::vector<LayerDecision>& given,
                     const std::string& where, std::vector<LayerChoice>& choices) const;

    /// Sets each group's calibration to what its slowest node takes for each layer under
    /// `plan` (whose groups had `dims`) over the speed estimate at those dims.
    void calibrate(const Plan& plan, const std::vector<std::vector<LayerDims>>& dims);

private:
    /// One candidate for a layer at a group: a partition type and side A's part of the split
    /// dimension, with each side's compute at that split.
    struct Option {
        PartitionType type = PartitionType::batch;
        double alpha = 0;
        std::uint64_t split_a = 0;
        double compute_a_s = 0, compute_b_s = 0;
        SplitChoice split;  ///< the layouts it holds its tensors in (ownership.h)
        [[nodiscard]] const SplitChoice& choice() const { return split; }
    };
    /// A layer's own exchanges at a group under one option (bytes each side receives).
    struct OwnExchanges {
        SideVolumes forward_out;   ///< Type II: output partial sums; carried normalisations' statistics
        SideVolumes backward_out;  ///< Type III: input-error partial sums; Type IV: its halo's; statistics
        SideVolumes weight_sync;   ///< Types I and IV: the weight-gradient sum
    };
    struct ConsumerEdge {
        std::size_t consumer = 0;
        std::size_t edge = 0;  ///< index in the consumer's producers
    };

    /// Each side's compute when side A takes `split_a` of the layer's `type` dimension.
    Option option_at(std::size_t g, std::size_t l, const LayerDims& dims, PartitionType type,
                     std::uint64_t split_a) const;
    /// Side A's units of layer l's `type` dimension of d at group g for share alpha: rounded, at
    /// least 1 a side, and, where the rules split the layer by that type alone (so every node
    /// below needs a unit of it), at least one per node a side where d has that many.
    std::uint64_t split_at(std::size_t g, std::size_t l, PartitionType type, double alpha, std::uint64_t d) const;
    /// The split of the planner's rule (balanced or equal); nullopt if the dimension has < 2.
    std::optional<Option> rule_option(std::size_t g, std::size_t l, const LayerDims& dims, PartitionType type) const;
    /// Side A's share of the whole network's compute, balanced: the share every layer can keep
    /// so that no data moves between layers of the same type.
    double common_share(std::size_t g, const std::vector<LayerDims>& dims) const;
    OwnExchanges own_bytes(std::size_t l, const Option& o, const LayerDims& dims) const;
    /// The memory penalty of an option: over the two sides, the larger estimated per-node
    /// footprint of the layer at the side's dims (its nodes sharing it evenly) over the smallest
    /// capacity among the side's nodes; 0 when memory is not checked.
    double memory_penalty(std::size_t g, std::size_t l, const LayerDims& dims, const Option& o) const;
    /// `choices` recording `chosen` (one option per layer) at group g, with their exchanges.
    void record(std::size_t g, const std::vector<LayerDims>& dims, const std::vector<Option>& chosen,
                std::vector<LayerChoice>& choices) const;
    /// Bytes of F and E each side receives on edge e into layer l between two options.
    std::pair<SideVolumes, SideVolumes> edge_bytes(std::size_t g, std::size_t l, std::size_t e, const LayerDims& dims,
                                                   const Option& from, const Option& to) const;

    const LayerGraph& m_graph;
    const ClusterView& m_cluster;
    const std::vector<Group>& m_groups;
    const ComputeModel& m_compute;
    const ElementBytes& m_bytes;
    const MemoryModel& m_memory;
    double m_memory_weight;
    const PartitionRules& m_rules;
    std::string_view m_planner;                           ///< for messages
    std::vector<std::vector<std::size_t>> m_type_counts;  ///< per group, nodes of each type
    std::vector<std::vector<ConsumerEdge>> m_consumers;
    std::vector<std::vector<double>> m_correction;  ///< per group, per layer: real / estimated compute
    std::unordered_map<std::string, std::vector<LayerChoice>> m_solved;  ///< by subproblem_key
};

void Planning::calibrate(const Plan& plan, const std::vector<std::vector<LayerDims>>& dims) {
    // The slowest node of each group, per layer: leaves first (bisect lists parents first). A
    // leaf's estimate is its own node's time, so its calibration stays 1.
    const std::size_t n = m_graph.layers.size();
    std::vector<std::vector<double>> slowest(m_groups.size(), std::vector<double>(n, 0.0));
    for (std::size_t g = m_groups.size(); g-- > 0;) {
        const Group& group = m_groups[g];
        for (std::size_t l = 0; l < n; ++l) {
            if (group.leaf()) {
                const std::size_t node = group.nodes.front();
                slowest[g][l] = total(m_compute(m_cluster.node_type[node], LayerId(l), plan.node_dims[node][l]));
                continue;
            }
            slowest[g][l] = std::max(slowest[static_cast<std::size_t>(group.side_a)][l],
                                     slowest[static_cast<std::size_t>(group.side_b)][l]);
            const double estimate = speed_estimate(g, l, dims[g][l]);
            m_correction[g][l] = estimate > 0 && slowest[g][l] > 0 ? slowest[g][l] / estimate : 1.0;
        }
    }
}

std::uint64_t round_split(double alpha, std::uint64_t d) {
    const double s = std::round(alpha * static_cast<double>(d));
    return static_cast<std::uint64_t>(std::clamp(s, 1.0, static_cast<double>(d - 1)));
}

std::uint64_t Planning::split_at(std::size_t g, std::size_t l, PartitionType type, double alpha,
                                 std::uint64_t d) const {
    const std::uint64_t split = round_split(alpha, d);
    // A layer split by this type alone is split by it all the way down: where the dimension has
    // a unit for every node, each side keeps at least one per node, so no node is left without
    // a share. (Where other types may split below, a side may take fewer units than nodes.)
    const auto allowed = m_rules.types_for(m_graph.layers[l]);
    if (std::count(allowed.begin(), allowed.end(), true) != 1 || !allowed[static_cast<std::size_t>(type)]) return split;
    const std::uint64_t nodes_a = m_groups[static_cast<std::size_t>(m_groups[g].side_a)].nodes.size();
    const std::uint64_t nodes_b = m_groups[static_cast<std::size_t>(m_groups[g].side_b)].nodes.size();
    if (d < nodes_a + nodes_b) return split;
    return std::clamp(split, nodes_a, d - nodes_b);
}

Planning::Option Planning::option_at(std::size_t g, std::size_t l, const LayerDims& dims, PartitionType type,
                                     std::uint64_t split_a) const {
    const Group& group = m_groups[g];
    const std::uint64_t d = dims.along(type);
    LayerDims a = dims, b = dims;
    a.along(type) = split_a;
    b.along(type) = d - split_a;
    Option o;
    o.type = type;
    o.split_a = split_a;
    o.alpha = static_cast<double>(split_a) / static_cast<double>(d);
    o.split =
        type == PartitionType::spatial ? spatial_choice(m_graph.layers[l], dims, split_a) : SplitChoice{type, o.alpha};
    o.compute_a_s = side_seconds(static_cast<std::size_t>(group.side_a), l, a);
    o.compute_b_s = side_seconds(static_cast<std::size_t>(group.side_b), l, b);
    return o;
}

std::optional<Planning::Option> Planning::rule_option(std::size_t g, std::size_t l, const LayerDims& dims,
                                                      PartitionType type) const {
    const Group& group = m_groups[g];
    const std::uint64_t d = dims.along(type);
    if (d < 2) return std::nullopt;
    const double nodes_a = static_cast<double>(m_groups[static_cast<std::size_t>(group.side_a)].nodes.size());
    if (m_rules.split == SplitRule::equal)
        return option_at(g, l, dims, type, split_at(g, l, type, nodes_a / static_cast<double>(group.nodes.size()), d));
    // Solve alpha * T_a = (1 - alpha) * T_b with each side's time linear in its share,
    // then once more with the slopes measured at that split (tiling is not linear).
    const Option half = option_at(g, l, dims, type, d / 2);
    const double slope_a = half.compute_a_s / (static_cast<double>(d / 2) / static_cast<double>(d));
    const double slope_b = half.compute_b_s / (static_cast<double>(d - d / 2) / static_cast<double>(d));
    Option o = option_at(g, l, dims, type, split_at(g, l, type, slope_b / (slope_a + slope_b), d));
    const double measured_a = o.compute_a_s / o.alpha, measured_b = o.compute_b_s / (1 - o.alpha);
    const std::uint64_t refined = split_at(g, l, type, measured_b / (measured_a + measured_b), d);
    if (refined != o.split_a) {
        const Option r = option_at(g, l, dims, type, refined);
        if (std::max(r.compute_a_s, r.compute_b_s) < std::max(o.compute_a_s, o.compute_b_s)) o = r;
    }
    return o;
}

double Planning::common_share(std::size_t g, const std::vector<LayerDims>& dims) const {
    const Group& group = m_groups[g];
    double a = 0, b = 0;
    for (std::size_t l = 0; l < dims.size(); ++l) {
        a += side_seconds(static_cast<std::size_t>(group.side_a), l, dims[l]);
        b += side_seconds(static_cast<std::size_t>(group.side_b), l, dims[l]);
    }
    return b / (a + b);
}

double Planning::memory_penalty(std::size_t g, std::size_t l, const LayerDims& dims, const Option& o) const {
    const Group& group = m_groups[g];
    const PlanLayer& layer = m_graph.layers[l];
    double worst = 0;
    for (const bool side_a : {true, false}) {
        const Group& side = m_groups[static_cast<std::size_t>(side_a ? group.side_a : group.side_b)];
        LayerDims d = dims;
        d.along(o.type) = side_a ? o.split_a : dims.along(o.type) - o.split_a;
        double capacity = 0;
        std::size_t type = 0;
        for (const std::size_t n : side.nodes) {
            const double c = m_memory.capacity_bytes[m_cluster.node_type[n]];
            if (c > 0 && (capacity == 0 || c < capacity)) {
                capacity = c;
                type = m_cluster.node_type[n];
            }
        }
        if (capacity == 0) continue;
        const std::uint64_t w = layer.weight_elements(d);
        const double bytes = m_memory.bytes(type, Stored::weights, w) +
                             m_memory.bytes(type, Stored::weight_gradients, w) +
                             m_memory.optimizer_copies * m_memory.bytes(type, Stored::optimizer_state, w) +
                             m_memory.bytes(type, Stored::activations, layer.input_elements(d));
        worst = std::max(worst, bytes / static_cast<double>(side.nodes.size()) / capacity);
    }
    return worst;
}

Planning::OwnExchanges Planning::own_bytes(std::size_t l, const Option& o, const LayerDims& dims) const {
    const PlanLayer& layer = m_graph.layers[l];
    const auto both = [](double bytes) { return SideVolumes{bytes, bytes}; };
    const bool backward_data = layer.has_backward_data();  // a layer reading only the network input has no E_l
    OwnExchanges x;
    switch (o.type) {
    case PartitionType::batch:
        x.weight_sync = both(intra_elements(layer, o.type, dims) * m_bytes.weight_gradients);
        break;
    case PartitionType::in_channels:
        x.forward_out = both(intra_elements(layer, o.type, dims) * m_bytes.partial_sums);
        break;
    case PartitionType::out_channels:
        if (backward_data) x.backward_out = both(intra_elements(layer, o.type, dims) * m_bytes.partial_sums);
        break;
    case PartitionType::spatial:
        x.weight_sync = both(intra_elements(layer, o.type, dims) * m_bytes.weight_gradients);
        if (backward_data) x.backward_out = both(spatial_halo_elements(layer, dims, o.split_a) * m_bytes.partial_sums);
        break;
    }
    // The carried normalisations' statistics, reduced across the cut where it splits them.
    x.forward_out += both(statistics_elements(layer, o.type, dims, false) * m_bytes.partial_sums);
    x.backward_out += both(statistics_elements(layer, o.type, dims, true) * m_bytes.partial_sums);
    return x;
}

std::pair<SideVolumes, SideVolumes> Planning::edge_bytes(std::size_t g, std::size_t l, std::size_t e,
                                                         const LayerDims& dims, const Option& from,
                                                         const Option& to) const {
    // The boundary tensor is the consumer's input at this group: rows = samples, columns =
    // input channels x the image rows its output rows read x their width (channel-major, so a
    // channel split is a column split and an image-row split a stripe in every channel).
    const PlanLayer& layer = m_graph.layers[l];
    // An operand of a concatenation is its share of the channels (rounded, at least one).
    const double share = layer.producers[e].share;
    const std::uint64_t channels =
        share >= 1 ? dims.in_channels
                   : std::max<std::uint64_t>(
                         1, static_cast<std::uint64_t>(std::llround(static_cast<double>(dims.in_channels) * share)));
    const TensorShape shape{dims.batch, channels, layer.input_rows(dims.out_rows), layer.in_width};
    const EdgeTransfer x = edge_transfer(layer.producers[e].kind, from.choice(), to.choice(), shape);
    // Each side receives in the other's wire format (ExchangeCost::into_a, into_b), where given.
    const ExchangeCost& cost = m_groups[g].exchange;
    const auto width = [](const BoundaryFormat& f, double fallback) {
        return f.wire_bytes > 0 ? f.wire_bytes : fallback;
    };
    return {SideVolumes{x.forward.to_a * width(cost.into_a[0], m_bytes.activations),
                        x.forward.to_b * width(cost.into_b[0], m_bytes.activations)},
            SideVolumes{x.backward.to_a * width(cost.into_a[1], m_bytes.gradients),
                        x.backward.to_b * width(cost.into_b[1], m_bytes.gradients)}};
}

std::string Planning::subproblem_key(std::size_t g, const std::vector<LayerDims>& dims) const {
    // Everything plan_group reads: the dims, each side's node types and calibration, the
    // exchange cost. Groups of a homogeneous torus or switch repeat it many times over.
    std::string key;
    const auto put = [&key](const auto& value) { key.append(reinterpret_cast<const char*>(&value), sizeof value); };
    for (const LayerDims& d : dims) {
        put(d.batch);
        put(d.in_channels);
        put(d.out_channels);
        put(d.out_rows);
    }
    const Group& group = m_groups[g];
    for (const int side : {group.side_a, group.side_b}) {
        const auto s = static_cast<std::size_t>(side);
        put(m_groups[s].nodes.size());
        for (std::size_t count : m_type_counts[s]) put(count);
        for (double c : m_correction[s]) put(c);
    }
    put(group.exchange.latency_s);
    put(group.exchange.seconds_per_byte_to_a);
    put(group.exchange.seconds_per_byte_to_b);
    for (std::size_t k = 0; k < 2; ++k) {
        put(group.exchange.into_a[k].wire_bytes);
        put(group.exchange.into_b[k].wire_bytes);
    }
    return key;
}

void Planning::plan_group(std::size_t g, const std::vector<LayerDims>& dims, std::vector<LayerChoice>& choices) {
    std::string key = subproblem_key(g, dims);
    if (const auto it = m_solved.find(key); it != m_solved.end()) {
        choices = it->second;
        return;
    }
    solve_group(g, dims, choices);
    m_solved.emplace(std::move(key), choices);
}

void Planning::solve_group(std::size_t g, const std::vector<LayerDims>& dims, std::vector<LayerChoice>& choices) {
    const Group& group = m_groups[g];
    const std::size_t n = m_graph.layers.size();
    const bool by_time = m_rules.objective == Objective::time;
    const auto cost_of = [&](const SideVolumes& v) { return by_time ? group.exchange.seconds(v) : v.max(); };

    // (1) Per layer, the candidates: each allowed type at the rule's split and, when splits
    // are balanced, also at the network's common share (so that consecutive layers of one type
    // can keep their samples or channels where they are).
    const bool two_shares = m_rules.split == SplitRule::balanced;
    const double common = two_shares ? common_share(g, dims) : 0;
    std::vector<std::vector<Option>> options(n);
    AssignmentCosts costs;
    costs.layer.resize(n);
    costs.edge.resize(n);
    for (std::size_t l = 0; l < n; ++l) {
        const auto allowed = m_rules.types_for(m_graph.layers[l]);
        for (std::size_t t = 0; t < kPartitionTypes; ++t) {
            const auto type = static_cast<PartitionType>(t);
            if (!allowed[t]) continue;
            if (dims[l].along(type) < 2) continue;
            if (m_rules.one_share && two_shares) {  // one share per node, network-wide
                options[l].push_back(option_at(g, l, dims[l], type, split_at(g, l, type, common, dims[l].along(type))));
                continue;
            }
            const std::optional<Option> o = rule_option(g, l, dims[l], type);
            options[l].push_back(*o);
            if (two_shares) {
                const std::uint64_t split = split_at(g, l, type, common, dims[l].along(type));
                if (split != o->split_a) options[l].push_back(option_at(g, l, dims[l], type, split));
            }
        }
        for (const Option& o : options[l]) {
            const OwnExchanges own = own_bytes(l, o, dims[l]);
            costs.layer[l].push_back(cost_of(own.forward_out) + cost_of(own.backward_out) + cost_of(own.weight_sync) +
                                     (by_time ? std::max(o.compute_a_s, o.compute_b_s) : 0) +
                                     (m_memory_weight > 0 ? m_memory_weight * memory_penalty(g, l, dims[l], o) : 0));
        }
        if (options[l].empty()) {
            std::string types;
            for (std::size_t t = 0; t < kPartitionTypes; ++t)
                if (allowed[t])
                    types += std::string(types.empty() ? "" : "/") + to_string(static_cast<PartitionType>(t));
            const LayerDims& d = dims[l];
            throw PlanError("layer '" + m_graph.layers[l].name + "' cannot be split over " +
                            std::to_string(group.nodes.size()) + " nodes by " + std::string(m_planner) + " (Type " +
                            types + "): at this level it has batch " + std::to_string(d.batch) + ", " +
                            std::to_string(d.in_channels) + " input and " + std::to_string(d.out_channels) +
                            " output channels" +
                            (allowed[static_cast<std::size_t>(PartitionType::spatial)]
                                 ? " and " + std::to_string(d.out_rows) + " output rows"
                                 : std::string()) +
                            ", and a split needs at least 2");
        }
    }
    // (2) Per edge and option pair: re-partitioning the boundary tensors.
    for (std::size_t l = 0; l < n; ++l) {
        const auto& producers = m_graph.layers[l].producers;
        for (std::size_t e = 0; e < producers.size(); ++e) {
            const auto& from = options[producers[e].from];
            AssignmentCosts::EdgeCosts edge;
            edge.to_options = options[l].size();
            edge.cost.reserve(from.size() * options[l].size());
            for (const Option& f : from)
                for (const Option& t : options[l]) {
                    const auto [fwd, bwd] = edge_bytes(g, l, e, dims[l], f, t);
                    edge.cost.push_back(cost_of(fwd) + cost_of(bwd));
                }
            costs.edge[l].push_back(std::move(edge));
        }
    }
    // (3) The exact DP, then the record of what was chosen.
    const Assignment best = solve_exact(m_graph, costs);
    std::vector<Option> chosen(n);
    for (std::size_t l = 0; l < n; ++l) chosen[l] = options[l][best.options[l]];
    record(g, dims, chosen, choices);
}

void Planning::record(std::size_t g, const std::vector<LayerDims>& dims, const std::vector<Option>& chosen,
                      std::vector<LayerChoice>& choices) const {
    const std::size_t n = m_graph.layers.size();
    choices.resize(n);
    for (std::size_t l = 0; l < n; ++l) {
        LayerChoice& c = choices[l];
        const Option& o = chosen[l];
        c.type = o.type;
        c.alpha = o.alpha;
        c.split_a = o.split_a;
        c.dims = dims[l];
        c.compute_a_s = o.compute_a_s;
        c.compute_b_s = o.compute_b_s;
        const OwnExchanges own = own_bytes(l, o, dims[l]);
        c.forward_out = own.forward_out;
        c.backward_out = own.backward_out;
        c.weight_sync = own.weight_sync;
    }
    for (std::size_t l = 0; l < n; ++l) {
        const auto& producers = m_graph.layers[l].producers;
        choices[l].forward_in.resize(producers.size());
        for (std::size_t e = 0; e < producers.size(); ++e)
            choices[l].forward_in[e] = edge_bytes(g, l, e, dims[l], chosen[producers[e].from], chosen[l]).first;
        choices[l].backward_in.clear();
        for (const ConsumerEdge& ce : m_consumers[l])
            choices[l].backward_in.push_back(
                edge_bytes(g, ce.consumer, ce.edge, dims[ce.consumer], chosen[l], chosen[ce.consumer]).second);
    }
}

void Planning::given_group(std::size_t g, const std::vector<LayerDims>& dims, const std::vector<LayerDecision>& given,
                           const std::string& where, std::vector<LayerChoice>& choices) const {
    const std::size_t n = m_graph.layers.size();
    if (given.size() != n)
        throw PlanError(where + " gives " + std::to_string(given.size()) + " layers' splits; the network has " +
                        std::to_string(n));
    std::vector<Option> chosen(n);
    for (std::size_t l = 0; l < n; ++l) {
        const LayerDecision& d = given[l];
        const PlanLayer& layer = m_graph.layers[l];
        const std::string at = where + ", layer '" + layer.name + "'";
        const auto type = static_cast<std::size_t>(d.type);
        if (!every_type(layer)[type] ||
            (layer.groups > 1 && (d.type == PartitionType::in_channels || d.type == PartitionType::out_channels)))
            throw PlanError(at + ": Type " + std::string(to_string(d.type)) + " is not a split this layer takes" +
                            (layer.groups > 1 ? " (a grouped convolution keeps its groups whole: Type I or IV)" : ""));
        const std::uint64_t whole = dims[l].along(d.type);
        const std::string along = " along Type " + std::string(to_string(d.type)) + " at this group";
        std::uint64_t split_a = d.split_a;
        if (whole < 2)
            throw PlanError(at + ": cannot be split" + along + ": its size there is " + std::to_string(whole) +
                            " (a split needs at least 2)");
        if (d.alpha) {
            if (!(*d.alpha > 0 && *d.alpha < 1))
                throw PlanError(at + ": alpha " + format_number(*d.alpha) + " is not a share strictly between 0 and 1");
            const double share = *d.alpha * static_cast<double>(whole);
            if (split_a == 0)
                split_a = static_cast<std::uint64_t>(std::llround(share));
            else if (std::abs(share - static_cast<double>(split_a)) > 0.5)
                throw PlanError(at + ": alpha " + format_number(*d.alpha) + " gives side A " +
                                std::to_string(std::llround(share)) + " of its " + std::to_string(whole) + along +
                                ", but split_a is " + std::to_string(split_a) + ": the shares do not add up");
        }
        if (split_a < 1 || split_a >= whole)
            throw PlanError(at + ": split_a " + std::to_string(split_a) + " is outside 1 .. " +
                            std::to_string(whole - 1) + " (side A's part of its " + std::to_string(whole) + along +
                            ")");
        chosen[l] = option_at(g, l, dims[l], d.type, split_a);
        if (d.compute_a_s) chosen[l].compute_a_s = *d.compute_a_s;
        if (d.compute_b_s) chosen[l].compute_b_s = *d.compute_b_s;
    }
    record(g, dims, chosen, choices);
}

/// Gives group g's two sides the dims of its layers (`dims[g]`), each cut by its choice there.
void hand_down(const std::vector<Group>& groups, std::size_t g, const std::vector<LayerChoice>& choices,
               std::vector<std::vector<LayerDims>>& dims) {
    auto& a = dims[static_cast<std::size_t>(groups[g].side_a)];
    auto& b = dims[static_cast<std::size_t>(groups[g].side_b)];
    a = b = dims[g];
    for (std::size_t l = 0; l < choices.size(); ++l) {
        const LayerChoice& c = choices[l];
        a[l].along(c.type) = c.split_a;
        b[l].along(c.type) = dims[g][l].along(c.type) - c.split_a;
    }
}

/// Top down: each group's DP, then its layers' dims handed to its two sides. Fills
/// plan.choices, plan.node_dims and `dims` (per group, per layer).
void plan_top_down(const LayerGraph& graph, Planning& planning, Plan& plan, std::vector<std::vector<LayerDims>>& dims) {
    const std::size_t n = graph.layers.size();
    const std::vector<Group>& groups = plan.groups;
    dims.assign(groups.size(), {});
    dims[0].resize(n);
    for (std::size_t l = 0; l < n; ++l) dims[0][l] = graph.layers[l].dims;
    for (std::size_t g = 0; g < groups.size(); ++g) {
        const Group& group = groups[g];
        if (group.leaf()) {
            plan.node_dims[group.nodes.front()] = dims[g];
            continue;
        }
        planning.plan_group(g, dims[g], plan.choices[g]);
        hand_down(groups, g, plan.choices[g], dims);
    }
}

/// plan_top_down with each group's choices given instead of planned: plan.choices,
/// plan.node_dims. `where` prefixes each group's entry ("groups" or "pipeline.stages[1].groups").
void given_top_down(const LayerGraph& graph, const Planning& planning, const HierarchyDecisions& given,
                    const std::string& where, Plan& plan) {
    const std::size_t n = graph.layers.size();
    const std::vector<Group>& groups = plan.groups;
    if (given.groups.size() != groups.size())
        throw PlanError(where + " lists " + std::to_string(given.groups.size()) + " groups; bisecting these " +
                        std::to_string(groups.front().nodes.size()) + " nodes gives " + std::to_string(groups.size()));
    std::vector<std::vector<LayerDims>> dims(groups.size());
    dims[0].resize(n);
    for (std::size_t l = 0; l < n; ++l) dims[0][l] = graph.layers[l].dims;
    for (std::size_t g = 0; g < groups.size(); ++g) {
        const Group& group = groups[g];
        const std::string at = where + "[" + std::to_string(g) + "]";
        if (g < given.group_nodes.size() && !given.group_nodes[g].empty() && given.group_nodes[g] != group.nodes) {
            std::string nodes;
            for (const std::size_t id : group.nodes) nodes += (nodes.empty() ? "" : ", ") + std::to_string(id);
            throw PlanError(at + ".nodes are not the nodes bisecting the cluster puts in this group: [" + nodes + "]");
        }
        if (g < given.group_shapes.size()) {
            const GroupShape& shape = given.group_shapes[g];
            const auto check = [&](const char* key, const std::optional<std::size_t>& got, long expected) {
                if (got && static_cast<long>(*got) != expected)
                    throw PlanError(at + "." + key + " is " + std::to_string(*got) + "; bisecting the cluster gives " +
                                    (expected < 0 ? std::string("none (a leaf)") : std::to_string(expected)));
            };
            check("depth", shape.depth, static_cast<long>(group.depth));
            check("side_a", shape.side_a, group.side_a);
            check("side_b", shape.side_b, group.side_b);
        }
        if (group.leaf()) {
            if (!given.groups[g].empty()) throw PlanError(at + " is one node (a leaf) and takes no splits");
            plan.node_dims[group.nodes.front()] = dims[g];
            continue;
        }
        planning.given_group(g, dims[g], given.groups[g], at, plan.choices[g]);
        hand_down(groups, g, plan.choices[g], dims);
    }
}

/// Whether predict() walks the step (predict_step) or leaves step_s NaN.
enum class StepWalked { yes, no };

/// The plan's predictions: each node's exact share, the communication of every depth, and the
/// step walked with every node's clocks (predict_step), given up after `give_up_after_s`.
void predict(const PlanningInputs& in, Plan& plan, double give_up_after_s = std::numeric_limits<double>::infinity(),
             StepWalked walked = StepWalked::yes) {
    const LayerGraph& graph = in.graph;
    const std::size_t n = graph.layers.size();
    const std::vector<Group>& groups = plan.groups;
    plan.forward_comm_s.assign(n, 0);
    plan.backward_comm_s.assign(n, 0);
    plan.comm_bytes = 0;
    std::size_t depths = 0;
    for (const Group& g : groups) depths = std::max(depths, g.depth + 1);
    std::vector<double> fwd(n * depths, 0.0), bwd(n * depths, 0.0);  // per layer and depth: the slowest group
    for (std::size_t g = 0; g < groups.size(); ++g) {
        if (groups[g].leaf()) continue;
        const std::size_t d = groups[g].depth;
        for (std::size_t l = 0; l < n; ++l) {
            const LayerChoice& c = plan.choices[g][l];
            fwd[l * depths + d] = std::max(fwd[l * depths + d], c.forward_comm_s(groups[g].exchange));
            bwd[l * depths + d] = std::max(bwd[l * depths + d], c.backward_comm_s(groups[g].exchange));
            plan.comm_bytes += c.comm_bytes();
        }
    }
    for (std::size_t l = 0; l < n; ++l)
        for (std::size_t d = 0; d < depths; ++d) {
            plan.forward_comm_s[l] += fwd[l * depths + d];
            plan.backward_comm_s[l] += bwd[l * depths + d];
        }
    if (walked == StepWalked::yes) {
        const StepPrediction step =
            predict_step(graph, plan, in.cluster.node_type, in.compute, *in.gradient_sync, {}, give_up_after_s);
        plan.step_s = step.step_s;
        plan.compute_s = step.compute_s;
        plan.layer_step_s = step.layer_s;
        plan.sync_comm_s = step.sync_s;
    } else {
        plan.step_s = std::numeric_limits<double>::quiet_NaN();
        plan.compute_s.clear();
        plan.layer_step_s.clear();
        plan.sync_comm_s.clear();
    }
    plan.footprint = plan_footprint(graph, plan, in.cluster.node_type, in.memory);
    plan.memory_shortfalls = memory_shortfalls(plan.footprint, in.cluster.node_type, in.memory);
    if (in.plan_made) in.plan_made();
}

/// A plan's settings over in.groups, its choices still to make.
Plan unplanned(const PlanningInputs& in, const PlannerOptions& options, PlannerKind chosen_from, Objective objective,
               SplitRule split) {
    Plan p;
    p.options = options;
    p.chosen_from = chosen_from;
    p.bytes = in.bytes;
    p.objective = objective;
    p.split = split;
    p.groups = in.groups;
    p.choices.resize(in.groups.size());
    p.node_dims.resize(in.cluster.node_type.size());
    return p;
}

void check_batch_impl(const LayerGraph& graph, const ClusterView& cluster, const PartitionRules& rules,
                      std::string_view planner) {
    const std::size_t nodes = cluster.order.size();
    for (const PlanLayer& layer : graph.layers) {
        const auto allowed = rules.types_for(layer);
        const bool batch_only = std::count(allowed.begin(), allowed.end(), true) == 1 &&
                                allowed[static_cast<std::size_t>(PartitionType::batch)];
        if (batch_only && layer.dims.batch < nodes)
            throw PlanError("planner " + std::string(planner) + " splits the batch of layer '" + layer.name +
                            "' over every node: batch " + std::to_string(layer.dims.batch) + " is smaller than the " +
                            std::to_string(nodes) + " nodes");
    }
}

}  // namespace

void check_batch(const LayerGraph& graph, const ClusterView& cluster, const PartitionRules& rules,
                 std::string_view planner) {
    check_batch_impl(graph, cluster, rules, planner);
}

Plan evaluate_hierarchy(const PlanningInputs& in, const HierarchyDecisions& given, const PlannerOptions& options,
                        const std::string& where) {
    Plan plan = unplanned(in, options, given.chosen_from, given.objective, given.split);
    PartitionRules rules;
    rules.allowed = every_type;
    const Planning planning(in, rules, to_string(options.kind), 0);
    given_top_down(in.graph, planning, given, where, plan);
    predict(in, plan);
    return plan;
}

Plan plan_hierarchy(const PlanningInputs& in, const PartitionRules& rules, const PlannerOptions& options,
                    double memory_weight, int calibration_rounds, double give_up_after_s) {
    const std::string_view name = to_string(options.kind);
    check_batch_impl(in.graph, in.cluster, rules, name);
    Plan plan = unplanned(in, options, options.kind, rules.objective, rules.split);
    Planning planning(in, rules, name, memory_weight);
    std::vector<std::vector<LayerDims>> dims;
    plan_top_down(in.graph, planning, plan, dims);
    predict(in, plan, give_up_after_s);
    if (plan.split != SplitRule::balanced || memory_weight > 0) return plan;
    // AccPar's estimate from the levels below (docs/planner.md, "A side's time"): a side's
    // compute at a cut is first estimated from its nodes' speeds; once a plan exists, each
    // group's estimate is scaled by what its nodes really take under that plan, and the
    // hierarchy is planned again, keeping the best prediction (a round's plan is predicted
    // only as far as the plan it must beat, as it is not kept otherwise).
    for (int round = 0; round < calibration_rounds; ++round) {
        planning.calibrate(plan, dims);
        Plan next = unplanned(in, options, options.kind, rules.objective, rules.split);
        plan_top_down(in.graph, planning, next, dims);
        if (same_partition(next, plan)) break;
        predict(in, next, std::min(give_up_after_s, plan.step_s));
        if (!(next.step_s < plan.step_s)) break;
        plan = std::move(next);
    }
    return plan;
}

Plan plan_hierarchy_unwalked(const PlanningInputs& in, const PartitionRules& rules, const PlannerOptions& options) {
    const std::string_view name = to_string(options.kind);
    check_batch_impl(in.graph, in.cluster, rules, name);
    Plan plan = unplanned(in, options, options.kind, rules.objective, rules.split);
    Planning planning(in, rules, name, /*memory_weight=*/0);
    std::vector<std::vector<LayerDims>> dims;
    plan_top_down(in.graph, planning, plan, dims);
    predict(in, plan, std::numeric_limits<double>::infinity(), StepWalked::no);
    return plan;
}

}  // namespace fastsim::planner
