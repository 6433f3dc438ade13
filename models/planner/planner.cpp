// SPDX-License-Identifier: MIT
#include "planner/planner.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace fastsim::planner {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();

constexpr std::array<std::pair<std::string_view, PlannerKind>, 5> kPlannerNames{{
    {"data_parallel", PlannerKind::data_parallel},
    {"owt", PlannerKind::owt},
    {"hypar", PlannerKind::hypar},
    {"accpar", PlannerKind::accpar},
    {"tofu", PlannerKind::tofu},
}};

/// Which types a planner may give a layer.
std::array<bool, kPartitionTypes> allowed_types(PlannerKind kind, const PlanLayer& layer) {
    switch (kind) {
    case PlannerKind::data_parallel: return {true, false, false};
    case PlannerKind::owt:
        return layer.layer.kind == workload::LayerKind::conv ? std::array<bool, 3>{true, false, false}
                                                             : std::array<bool, 3>{false, true, false};
    case PlannerKind::hypar: return {true, true, false};
    case PlannerKind::accpar:
    case PlannerKind::tofu: return {true, true, true};
    }
    return {true, true, true};
}

/// The per-node dims a side of `nodes` nodes works on, for estimating its time: the
/// largest dimension halved (ceiling) until the halvings cover the nodes.
LayerDims per_node_share(LayerDims d, std::size_t nodes) {
    for (std::size_t left = nodes; left > 1; left = (left + 1) / 2) {
        std::uint64_t* largest = &d.batch;
        if (d.in_channels > *largest) largest = &d.in_channels;
        if (d.out_channels > *largest) largest = &d.out_channels;
        *largest = (*largest + 1) / 2;
    }
    return d;
}

double total(const PhaseSeconds& s) { return s[0] + s[1] + s[2]; }

/// The planner's working state for one make_plan call.
class Planning {
public:
    Planning(const LayerGraph& graph, const ClusterView& cluster, const std::vector<Group>& groups,
             const ComputeModel& compute, const ElementBytes& bytes, Plan& plan)
        : m_graph(graph), m_groups(groups), m_compute(compute), m_bytes(bytes), m_plan(plan) {
        std::size_t type_count = 0;
        for (std::size_t t : cluster.node_type) type_count = std::max(type_count, t + 1);
        m_type_counts.assign(groups.size(), std::vector<std::size_t>(type_count, 0));
        for (std::size_t g = 0; g < groups.size(); ++g)
            for (std::size_t n : groups[g].nodes) ++m_type_counts[g][cluster.node_type[n]];
        m_consumers.resize(graph.layers.size());
        for (std::size_t l = 0; l < graph.layers.size(); ++l)
            for (std::size_t e = 0; e < graph.layers[l].producers.size(); ++e)
                m_consumers[graph.layers[l].producers[e].from].push_back({l, e});
    }

    /// Seconds a side (the nodes of group `g`) takes for layer l at `dims`, assuming its
    /// nodes share the work in proportion to their speed.
    double side_seconds(std::size_t g, std::size_t l, const LayerDims& dims) const {
        const std::size_t nodes = m_groups[g].nodes.size();
        const LayerDims share = per_node_share(dims, nodes);
        const auto& count = m_type_counts[g];
        double rate = 0;  // layers per second of the whole side
        for (std::size_t t = 0; t < count.size(); ++t)
            if (count[t] > 0) rate += static_cast<double>(count[t]) / total(m_compute(t, l, share));
        return static_cast<double>(nodes) / rate;
    }

    void plan_group(std::size_t g, const std::vector<LayerDims>& dims);

private:
    struct Option {
        bool feasible = false;
        double alpha = 0;
        std::uint64_t split_a = 0;
        double compute_a_s = 0, compute_b_s = 0;
    };
    struct ConsumerEdge {
        std::size_t consumer = 0;
        std::size_t edge = 0;  ///< index in the consumer's producers
    };

    Option split_option(std::size_t g, std::size_t l, const LayerDims& dims, PartitionType type);
    SideVolumes intra_bytes(std::size_t l, PartitionType type, const LayerDims& dims) const;

    const LayerGraph& m_graph;
    const std::vector<Group>& m_groups;
    const ComputeModel& m_compute;
    const ElementBytes& m_bytes;
    Plan& m_plan;
    std::vector<std::vector<std::size_t>> m_type_counts;  ///< per group, nodes of each type
    std::vector<std::vector<ConsumerEdge>> m_consumers;
};

Planning::Option Planning::split_option(std::size_t g, std::size_t l, const LayerDims& dims, PartitionType type) {
    const Group& group = m_groups[g];
    Option o;
    const std::uint64_t d = dims.along(type);
    if (d < 2) return o;
    o.feasible = true;
    const auto at = [&](std::uint64_t split) {
        LayerDims a = dims, b = dims;
        a.along(type) = split;
        b.along(type) = d - split;
        return std::pair{side_seconds(static_cast<std::size_t>(group.side_a), l, a),
                         side_seconds(static_cast<std::size_t>(group.side_b), l, b)};
    };
    const auto round_split = [d](double alpha) {
        const double s = std::round(alpha * static_cast<double>(d));
        return static_cast<std::uint64_t>(std::clamp(s, 1.0, static_cast<double>(d - 1)));
    };
    const double nodes_a = static_cast<double>(m_groups[static_cast<std::size_t>(group.side_a)].nodes.size());
    if (m_plan.split == SplitRule::equal) {
        o.split_a = round_split(nodes_a / static_cast<double>(group.nodes.size()));
        std::tie(o.compute_a_s, o.compute_b_s) = at(o.split_a);
    } else {
        // Solve alpha * T_a = (1 - alpha) * T_b with each side's time linear in its share,
        // then once more with the slopes measured at that split (tiling is not linear).
        const auto [half_a, half_b] = at(d / 2);
        const double slope_a = half_a / (static_cast<double>(d / 2) / static_cast<double>(d));
        const double slope_b = half_b / (static_cast<double>(d - d / 2) / static_cast<double>(d));
        o.split_a = round_split(slope_b / (slope_a + slope_b));
        std::tie(o.compute_a_s, o.compute_b_s) = at(o.split_a);
        const double alpha = static_cast<double>(o.split_a) / static_cast<double>(d);
        const double measured_a = o.compute_a_s / alpha, measured_b = o.compute_b_s / (1 - alpha);
        const std::uint64_t refined = round_split(measured_b / (measured_a + measured_b));
        if (refined != o.split_a) {
            const auto [ra, rb] = at(refined);
            if (std::max(ra, rb) < std::max(o.compute_a_s, o.compute_b_s)) {
                o.split_a = refined;
                o.compute_a_s = ra;
                o.compute_b_s = rb;
            }
        }
    }
    o.alpha = static_cast<double>(o.split_a) / static_cast<double>(d);
    return o;
}

SideVolumes Planning::intra_bytes(std::size_t l, PartitionType type, const LayerDims& dims) const {
    const PlanLayer& layer = m_graph.layers[l];
    if (type == PartitionType::out_channels && layer.producers.empty()) return {};  // no backward-data, no E_l
    const double elements = intra_elements(layer, type, dims);
    const double width = type == PartitionType::batch ? m_bytes.weight_gradients : m_bytes.partial_sums;
    return {elements * width, elements * width};
}

void Planning::plan_group(std::size_t g, const std::vector<LayerDims>& dims) {
    const Group& group = m_groups[g];
    const std::size_t n = m_graph.layers.size();
    const bool by_time = m_plan.objective == Objective::time;
    const auto cost_of = [&](const SideVolumes& v) { return by_time ? group.exchange.seconds(v) : v.max(); };

    // (1) Per layer and type: the split, each side's compute and the layer's own reduction.
    std::vector<std::array<Option, kPartitionTypes>> options(n);
    AssignmentCosts costs;
    costs.layer.resize(n);
    costs.edge.resize(n);
    for (std::size_t l = 0; l < n; ++l) {
        const auto allowed = allowed_types(m_plan.options.kind, m_graph.layers[l]);
        bool any = false;
        for (std::size_t t = 0; t < kPartitionTypes; ++t) {
            const auto type = static_cast<PartitionType>(t);
            costs.layer[l][t] = kInfinity;
            if (!allowed[t]) continue;
            options[l][t] = split_option(g, l, dims[l], type);
            const Option& o = options[l][t];
            if (!o.feasible) continue;
            any = true;
            costs.layer[l][t] = cost_of(intra_bytes(l, type, dims[l])) + (by_time ? std::max(o.compute_a_s, o.compute_b_s) : 0);
        }
        if (!any) {
            std::string types;
            for (std::size_t t = 0; t < kPartitionTypes; ++t)
                if (allowed[t]) types += std::string(types.empty() ? "" : "/") + to_string(static_cast<PartitionType>(t));
            const LayerDims& d = dims[l];
            throw PlanError("layer '" + m_graph.layers[l].name + "' cannot be split over " +
                            std::to_string(group.nodes.size()) + " nodes by " + std::string(to_string(m_plan.options.kind)) +
                            " (Type " + types + "): at this level it has batch " + std::to_string(d.batch) +
                            ", " + std::to_string(d.in_channels) + " input and " + std::to_string(d.out_channels) +
                            " output channels, and a split needs at least 2");
        }
    }
    // (2) Per edge and type pair: converting the boundary tensors.
    const auto edge_bytes = [&](std::size_t l, std::size_t e, std::size_t tf, std::size_t tt) {
        const Edge& edge = m_graph.layers[l].producers[e];
        const double elements = static_cast<double>(m_graph.layers[l].input_elements(dims[l]));
        const EdgeTransfer x = edge_transfer(static_cast<PartitionType>(tf), static_cast<PartitionType>(tt), edge.shortcut,
                                             options[edge.from][tf].alpha, options[l][tt].alpha, elements);
        return std::pair{x.forward.scaled(m_bytes.activations), x.backward.scaled(m_bytes.gradients)};
    };
    for (std::size_t l = 0; l < n; ++l) {
        const auto& producers = m_graph.layers[l].producers;
        costs.edge[l].resize(producers.size());
        for (std::size_t e = 0; e < producers.size(); ++e)
            for (std::size_t tf = 0; tf < kPartitionTypes; ++tf)
                for (std::size_t tt = 0; tt < kPartitionTypes; ++tt) {
                    double& c = costs.edge[l][e][tf][tt];
                    c = 0;
                    if (!options[producers[e].from][tf].feasible || !options[l][tt].feasible) continue;
                    const auto [fwd, bwd] = edge_bytes(l, e, tf, tt);
                    c = cost_of(fwd) + cost_of(bwd);
                }
    }
    // (3) The exact DP, then the record of what was chosen.
    const Assignment best = solve_exact(m_graph, costs);
    auto& choices = m_plan.choices[g];
    choices.resize(n);
    for (std::size_t l = 0; l < n; ++l) {
        LayerChoice& c = choices[l];
        const auto t = static_cast<std::size_t>(best.types[l]);
        const Option& o = options[l][t];
        c.type = best.types[l];
        c.alpha = o.alpha;
        c.split_a = o.split_a;
        c.dims = dims[l];
        c.compute_a_s = o.compute_a_s;
        c.compute_b_s = o.compute_b_s;
        const SideVolumes own = intra_bytes(l, c.type, dims[l]);
        c.forward_out = c.type == PartitionType::in_channels ? own : SideVolumes{};
        c.backward_out = c.type == PartitionType::out_channels ? own : SideVolumes{};
        c.weight_sync = c.type == PartitionType::batch ? own : SideVolumes{};
    }
    for (std::size_t l = 0; l < n; ++l) {
        const auto& producers = m_graph.layers[l].producers;
        choices[l].forward_in.resize(producers.size());
        for (std::size_t e = 0; e < producers.size(); ++e) {
            choices[l].forward_in[e] = edge_bytes(l, e, static_cast<std::size_t>(best.types[producers[e].from]),
                                                  static_cast<std::size_t>(best.types[l]))
                                           .first;
        }
        choices[l].backward_in.clear();
        for (const ConsumerEdge& ce : m_consumers[l]) {
            choices[l].backward_in.push_back(edge_bytes(ce.consumer, ce.edge, static_cast<std::size_t>(best.types[l]),
                                                        static_cast<std::size_t>(best.types[ce.consumer]))
                                                 .second);
        }
    }
}

}  // namespace

std::string_view to_string(PlannerKind kind) {
    for (const auto& [name, k] : kPlannerNames)
        if (k == kind) return name;
    return "?";
}

std::optional<PlannerKind> parse_planner(std::string_view name) {
    for (const auto& [n, k] : kPlannerNames)
        if (n == name) return k;
    return std::nullopt;
}

double LayerChoice::forward_comm_s(const ExchangeCost& x) const {
    double s = x.seconds(forward_out);
    for (const auto& v : forward_in) s += x.seconds(v);
    return s;
}

double LayerChoice::backward_comm_s(const ExchangeCost& x) const {
    double s = x.seconds(backward_out);
    for (const auto& v : backward_in) s += x.seconds(v);
    return s;
}

double LayerChoice::comm_bytes() const {
    double b = forward_out.max() + backward_out.max() + weight_sync.max();
    for (const auto& v : forward_in) b += v.max();
    for (const auto& v : backward_in) b += v.max();
    return b;
}

std::vector<Group> bisect(const ClusterView& cluster, const ExchangeModel& exchange) {
    std::vector<Group> groups;
    struct Range {
        std::size_t lo, hi, depth;
        int parent;
        bool is_a;
    };
    std::vector<Range> pending{{0, cluster.order.size(), 0, -1, false}};
    for (std::size_t i = 0; i < pending.size(); ++i) {  // breadth first: parents before children
        const Range r = pending[i];
        Group g;
        g.nodes.assign(cluster.order.begin() + static_cast<std::ptrdiff_t>(r.lo),
                       cluster.order.begin() + static_cast<std::ptrdiff_t>(r.hi));
        g.depth = r.depth;
        const int index = static_cast<int>(groups.size());
        if (r.parent >= 0) (r.is_a ? groups[static_cast<std::size_t>(r.parent)].side_a
                                   : groups[static_cast<std::size_t>(r.parent)].side_b) = index;
        if (r.hi - r.lo > 1) {
            std::size_t cut = r.lo + (r.hi - r.lo + 1) / 2;
            const double middle = (static_cast<double>(r.lo) + static_cast<double>(r.hi)) / 2;
            double nearest = kInfinity;
            for (std::size_t c : cluster.preferred_cuts)
                if (c > r.lo && c < r.hi && std::abs(static_cast<double>(c) - middle) < nearest) {
                    nearest = std::abs(static_cast<double>(c) - middle);
                    cut = c;
                }
            pending.push_back({r.lo, cut, r.depth + 1, index, true});
            pending.push_back({cut, r.hi, r.depth + 1, index, false});
            const std::vector<std::size_t> a(cluster.order.begin() + static_cast<std::ptrdiff_t>(r.lo),
                                             cluster.order.begin() + static_cast<std::ptrdiff_t>(cut));
            const std::vector<std::size_t> b(cluster.order.begin() + static_cast<std::ptrdiff_t>(cut),
                                             cluster.order.begin() + static_cast<std::ptrdiff_t>(r.hi));
            g.exchange = exchange(a, b);
        }
        groups.push_back(std::move(g));
    }
    return groups;
}

Plan make_plan(const LayerGraph& graph, const ClusterView& cluster, const std::vector<Group>& groups,
               const ComputeModel& compute, const ElementBytes& bytes, const PlannerOptions& options) {
    Plan plan;
    plan.options = options;
    const bool searches = options.kind == PlannerKind::accpar;
    plan.objective = searches && !options.comm_only ? Objective::time : Objective::comm_volume;
    plan.split = searches && !options.equal_split ? SplitRule::balanced : SplitRule::equal;
    plan.groups = groups;
    plan.choices.resize(groups.size());
    const std::size_t n = graph.layers.size();
    plan.node_dims.resize(cluster.node_type.size());

    // (1) Top down: each group's DP, then its layers' dims handed to its two sides.
    Planning planning(graph, cluster, groups, compute, bytes, plan);
    std::vector<std::vector<LayerDims>> dims(groups.size());
    dims[0].resize(n);
    for (std::size_t l = 0; l < n; ++l) dims[0][l] = graph.layers[l].dims;
    for (std::size_t g = 0; g < groups.size(); ++g) {
        const Group& group = groups[g];
        if (group.leaf()) {
            plan.node_dims[group.nodes.front()] = dims[g];
            continue;
        }
        planning.plan_group(g, dims[g]);
        auto& a = dims[static_cast<std::size_t>(group.side_a)];
        auto& b = dims[static_cast<std::size_t>(group.side_b)];
        a = b = dims[g];
        for (std::size_t l = 0; l < n; ++l) {
            const LayerChoice& c = plan.choices[g][l];
            a[l].along(c.type) = c.split_a;
            b[l].along(c.type) = dims[g][l].along(c.type) - c.split_a;
        }
    }
    // (2) Predictions: each node's exact share, and the communication of every depth.
    plan.compute_s.assign(n, PhaseSeconds{});
    plan.forward_comm_s.assign(n, 0);
    plan.backward_comm_s.assign(n, 0);
    plan.sync_comm_s.assign(n, 0);
    for (std::size_t node = 0; node < cluster.node_type.size(); ++node)
        for (std::size_t l = 0; l < n; ++l) {
            const PhaseSeconds s = compute(cluster.node_type[node], l, plan.node_dims[node][l]);
            for (std::size_t p = 0; p < 3; ++p) plan.compute_s[l][p] = std::max(plan.compute_s[l][p], s[p]);
        }
    std::size_t depths = 0;
    for (const Group& g : groups) depths = std::max(depths, g.depth + 1);
    for (std::size_t l = 0; l < n; ++l)
        for (std::size_t d = 0; d < depths; ++d) {
            double fwd = 0, bwd = 0, sync = 0;
            for (std::size_t g = 0; g < groups.size(); ++g) {
                if (groups[g].depth != d || groups[g].leaf()) continue;
                const LayerChoice& c = plan.choices[g][l];
                fwd = std::max(fwd, c.forward_comm_s(groups[g].exchange));
                bwd = std::max(bwd, c.backward_comm_s(groups[g].exchange));
                sync = std::max(sync, c.sync_comm_s(groups[g].exchange));
                plan.comm_bytes += c.comm_bytes();
            }
            plan.forward_comm_s[l] += fwd;
            plan.backward_comm_s[l] += bwd;
            plan.sync_comm_s[l] += sync;
        }
    for (std::size_t l = 0; l < n; ++l) plan.step_s += plan.layer_s(l);
    return plan;
}

}  // namespace fastsim::planner
