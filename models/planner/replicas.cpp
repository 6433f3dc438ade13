// SPDX-License-Identifier: MIT
#include "planner/replicas.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

namespace fastsim::planner {
namespace {

/// A node's rows [in_lo, in_hi) and columns [out_lo, out_hi) of the weight matrix.
struct Region {
    std::uint64_t in_lo = 0, in_hi = 0, out_lo = 0, out_hi = 0;
    bool operator<(const Region& o) const {
        return std::tie(in_lo, in_hi, out_lo, out_hi) < std::tie(o.in_lo, o.in_hi, o.out_lo, o.out_hi);
    }
};

std::size_t index_of(const std::vector<std::uint64_t>& cuts, std::uint64_t value) {
    return static_cast<std::size_t>(std::lower_bound(cuts.begin(), cuts.end(), value) - cuts.begin());
}

}  // namespace

std::vector<ReplicaSet> weight_replica_sets(const LayerGraph& graph, const Plan& plan, LayerId layer) {
    const PlanLayer& pl = graph.layers[layer.value()];
    if (!pl.has_weights) return {};
    // (1) Each node's region, top down through the groups (parents come first).
    std::vector<Region> region(plan.groups.size());
    region[0] = {0, pl.dims.in_channels, 0, pl.dims.out_channels};
    std::map<Region, std::vector<std::size_t>> holders;  // distinct region -> its nodes
    for (std::size_t g = 0; g < plan.groups.size(); ++g) {
        const Group& group = plan.groups[g];
        if (group.leaf()) {
            holders[region[g]].push_back(group.nodes.front());
            continue;
        }
        const LayerChoice& c = plan.choices[g][layer.value()];
        Region a = region[g], b = region[g];
        if (c.type == PartitionType::in_channels) a.in_hi = b.in_lo = region[g].in_lo + c.split_a;
        if (c.type == PartitionType::out_channels) a.out_hi = b.out_lo = region[g].out_lo + c.split_a;
        region[static_cast<std::size_t>(group.side_a)] = a;
        region[static_cast<std::size_t>(group.side_b)] = b;
    }
    // (2) The cells between every region's cut lines, and which regions hold each.
    std::vector<std::uint64_t> in_cuts, out_cuts;
    for (const auto& [r, nodes] : holders) {
        in_cuts.insert(in_cuts.end(), {r.in_lo, r.in_hi});
        out_cuts.insert(out_cuts.end(), {r.out_lo, r.out_hi});
    }
    for (auto* cuts : {&in_cuts, &out_cuts}) {
        std::sort(cuts->begin(), cuts->end());
        cuts->erase(std::unique(cuts->begin(), cuts->end()), cuts->end());
    }
    const std::size_t columns = out_cuts.size() - 1;
    std::vector<std::vector<std::size_t>> cell_holders((in_cuts.size() - 1) * columns);
    std::vector<const std::vector<std::size_t>*> region_nodes;
    for (const auto& [r, nodes] : holders) {
        const std::size_t id = region_nodes.size();
        region_nodes.push_back(&nodes);
        for (std::size_t i = index_of(in_cuts, r.in_lo); i < index_of(in_cuts, r.in_hi); ++i)
            for (std::size_t o = index_of(out_cuts, r.out_lo); o < index_of(out_cuts, r.out_hi); ++o)
                cell_holders[i * columns + o].push_back(id);
    }
    // (3) Cells with the same holders, summed; their nodes.
    struct Sums {
        std::uint64_t elements = 0, factor_rows = 0, factor_cols = 0;
    };
    std::map<std::vector<std::size_t>, Sums> elements;
    for (std::size_t cell = 0; cell < cell_holders.size(); ++cell) {
        const std::size_t i = cell / columns, o = cell % columns;
        const auto& ids = cell_holders[cell];
        std::size_t nodes = 0;
        for (const std::size_t id : ids) nodes += region_nodes[id]->size();
        if (nodes < 2) continue;
        Sums& sums = elements[ids];
        // A grouped convolution is never channel-split, so its cells are whole and divide by groups.
        sums.elements += (in_cuts[i + 1] - in_cuts[i]) * (out_cuts[o + 1] - out_cuts[o]) * pl.kernel_area / pl.groups;
        sums.factor_rows += out_cuts[o + 1] - out_cuts[o];
        sums.factor_cols += (in_cuts[i + 1] - in_cuts[i]) * pl.kernel_area / pl.groups;
    }
    std::vector<ReplicaSet> sets;
    for (const auto& [ids, sums] : elements) {
        ReplicaSet s;
        for (const std::size_t id : ids)
            for (const std::size_t n : *region_nodes[id]) s.nodes.emplace_back(n);
        std::sort(s.nodes.begin(), s.nodes.end());
        s.elements = sums.elements;
        s.factor_rows = sums.factor_rows;
        s.factor_cols = sums.factor_cols;
        sets.push_back(std::move(s));
    }
    std::sort(sets.begin(), sets.end(), [](const ReplicaSet& x, const ReplicaSet& y) { return x.nodes < y.nodes; });
    return sets;
}

// ---- buckets ------------------------------------------------------------------------------

GradientBuckets::GradientBuckets(std::uint64_t cap_bytes, double bytes_per_element)
    : m_cap_bytes(cap_bytes), m_bytes_per_element(bytes_per_element) {}

bool GradientBuckets::full(const ReplicaSet& bucket) const {
    return std::ceil(static_cast<double>(bucket.elements) * m_bytes_per_element) >= static_cast<double>(m_cap_bytes);
}

std::vector<ReplicaSet> GradientBuckets::add(const std::vector<ReplicaSet>& gradients) {
    if (m_cap_bytes == 0) return gradients;
    std::vector<bool> filled(m_open.size(), false);
    for (const ReplicaSet& g : gradients) {
        auto it = std::find_if(m_open.begin(), m_open.end(), [&](const ReplicaSet& b) { return b.nodes == g.nodes; });
        if (it == m_open.end()) {
            m_open.push_back({g.nodes, 0, 0, 0});
            filled.push_back(false);
            it = m_open.end() - 1;
        }
        it->elements += g.elements;
        it->factor_rows += g.factor_rows;
        it->factor_cols += g.factor_cols;
        if (full(*it)) filled[static_cast<std::size_t>(it - m_open.begin())] = true;
    }
    std::vector<ReplicaSet> done, open;
    for (std::size_t b = 0; b < m_open.size(); ++b) (filled[b] ? done : open).push_back(std::move(m_open[b]));
    m_open = std::move(open);
    return done;
}

std::vector<ReplicaSet> GradientBuckets::flush() {
    std::vector<ReplicaSet> open = std::move(m_open);
    m_open.clear();
    return open;
}

}  // namespace fastsim::planner
