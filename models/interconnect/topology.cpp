// SPDX-License-Identifier: MIT
#include "interconnect/topology.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <queue>
#include <sstream>
#include <stdexcept>
#include <tuple>

namespace fastsim::interconnect {
namespace {

void require_nodes(std::size_t n, const char* builder) {
    if (n == 0) throw std::invalid_argument(std::string(builder) + ": needs at least one node");
}

std::string id_list(const std::vector<std::size_t>& ids, std::size_t limit = 32) {
    std::ostringstream out;
    for (std::size_t i = 0; i < ids.size() && i < limit; ++i) out << (i ? ", " : "") << ids[i];
    if (ids.size() > limit) out << ", ... (" << ids.size() << " in all)";
    return out.str();
}

}  // namespace

Topology::Topology(std::size_t node_count, std::size_t switch_count)
    : m_node_count(node_count), m_adjacency(node_count + switch_count) {}

Topology Topology::ring(std::size_t n, const LinkParams& link) {
    require_nodes(n, "ring");
    Topology t(n);
    if (n == 2) t.add_link(0, 1, link);
    if (n >= 3)
        for (std::size_t i = 0; i < n; ++i) t.add_link(i, (i + 1) % n, link);
    if (n >= 2) t.set_grids({t.make_grid(0, {n})});
    return t;
}

Topology Topology::fully_connected(std::size_t n, const LinkParams& link) {
    require_nodes(n, "fully_connected");
    return dimensional({{DimensionKind::fully_connected, n, link}});  // links (a, b), a < b, in order
}

Topology Topology::switch_star(std::size_t n, const LinkParams& link) {
    require_nodes(n, "switch_star");
    if (n == 1) {
        Topology t(1, 1);
        t.add_link(0, 1, link);
        return t;
    }
    return dimensional({{DimensionKind::switch_star, n, link}});  // node i's link to switch n, in order
}

Topology Topology::torus2d(std::size_t rows, std::size_t cols, const LinkParams& link) {
    if (rows == 0 || cols == 0) throw std::invalid_argument("torus2d: rows and cols must be >= 1");
    return torus3d(1, rows, cols, link);  // one plane: the same links, in the same order
}

Topology Topology::torus3d(std::size_t depth, std::size_t rows, std::size_t cols, const LinkParams& link) {
    if (depth == 0 || rows == 0 || cols == 0) throw std::invalid_argument("torus3d: depth, rows and cols must be >= 1");
    Topology t(depth * rows * cols);
    const auto id = [rows, cols](std::size_t d, std::size_t r, std::size_t c) { return (d * rows + r) * cols + c; };
    const auto links_from = [](std::size_t pos, std::size_t k) { return k >= 3 || (k == 2 && pos == 0); };
    for (std::size_t d = 0; d < depth; ++d)
        for (std::size_t r = 0; r < rows; ++r)
            for (std::size_t c = 0; c < cols; ++c) {
                if (links_from(c, cols)) t.add_link(id(d, r, c), id(d, r, (c + 1) % cols), link);
                if (links_from(r, rows)) t.add_link(id(d, r, c), id(d, (r + 1) % rows, c), link);
                if (links_from(d, depth)) t.add_link(id(d, r, c), id((d + 1) % depth, r, c), link);
            }
    if (depth * rows * cols >= 2) t.set_grids({t.make_grid(0, {cols, rows, depth})});
    return t;
}

Topology Topology::dimensional(const std::vector<Dimension>& dims) {
    if (dims.empty()) throw std::invalid_argument("dimensional: needs at least one dimension");
    std::size_t n = 1, switches = 0;
    for (const Dimension& d : dims) {
        if (d.size == 0) throw std::invalid_argument("dimensional: a dimension of size 0");
        if (n > std::numeric_limits<std::size_t>::max() / d.size)
            throw std::invalid_argument("dimensional: too many nodes");
        n *= d.size;
    }
    for (const Dimension& d : dims)
        if (d.kind == DimensionKind::switch_star && d.size >= 2) switches += n / d.size;
    Topology t(n, switches);
    Grid g;
    g.sizes.reserve(dims.size());
    for (const Dimension& d : dims) {
        g.sizes.push_back(d.size);
        g.kinds.push_back(d.kind);
    }
    const std::size_t rank = dims.size();
    g.up.assign(n * rank, kNone);
    g.down.assign(n * rank, kNone);
    g.peers.resize(rank);
    std::size_t stride = 1, next_switch = n;
    for (std::size_t d = 0; d < rank; ++d) {
        const std::size_t k = dims[d].size;
        const LinkParams& link = dims[d].link;
        if (dims[d].kind == DimensionKind::fully_connected) g.peers[d].assign(n * k, kNone);
        for (std::size_t first = 0; first < n && k >= 2; ++first) {
            if (first / stride % k != 0) continue;  // each line once, from its coordinate-0 node
            const auto at = [&](std::size_t c) { return first + c * stride; };
            switch (dims[d].kind) {
            case DimensionKind::ring:
                for (std::size_t c = 0; c < k && (k >= 3 || c == 0); ++c) {
                    const auto forward = static_cast<ChannelId>(2 * t.add_link(at(c), at((c + 1) % k), link));
                    g.up[at(c) * rank + d] = forward;
                    g.down[at((c + 1) % k) * rank + d] = forward + 1;
                    if (k == 2) {
                        g.down[at(0) * rank + d] = forward;
                        g.up[at(1) * rank + d] = forward + 1;
                    }
                }
                break;
            case DimensionKind::fully_connected:
                for (std::size_t a = 0; a < k; ++a)
                    for (std::size_t b = a + 1; b < k; ++b) {
                        const auto forward = static_cast<ChannelId>(2 * t.add_link(at(a), at(b), link));
                        g.peers[d][at(a) * k + b] = forward;
                        g.peers[d][at(b) * k + a] = forward + 1;
                    }
                break;
            case DimensionKind::switch_star:
                for (std::size_t c = 0; c < k; ++c) {
                    const auto forward = static_cast<ChannelId>(2 * t.add_link(at(c), next_switch, link));
                    g.up[at(c) * rank + d] = forward;
                    g.down[at(c) * rank + d] = forward + 1;
                }
                ++next_switch;
                break;
            }
        }
        stride *= k;
    }
    if (n >= 2) t.set_grids({std::move(g)});
    return t;
}

Topology Topology::tree(std::size_t n, std::size_t fanout, const LinkParams& link) {
    require_nodes(n, "tree");
    if (fanout < 2) throw std::invalid_argument("tree: fanout must be >= 2");
    // 1. Switches per level, leaves first, until one root.
    std::vector<std::size_t> level_sizes;
    for (std::size_t below = n;;) {
        const std::size_t level = (below + fanout - 1) / fanout;
        level_sizes.push_back(level);
        if (level == 1) break;
        below = level;
    }
    std::size_t switches = 0;
    for (const std::size_t s : level_sizes) switches += s;
    Topology t(n, switches);
    // 2. Link each vertex of a level to its parent: child i -> parent i / fanout.
    std::size_t child_first = 0, child_count = n, parent_first = n;
    for (const std::size_t level : level_sizes) {
        for (std::size_t i = 0; i < child_count; ++i) t.add_link(child_first + i, parent_first + i / fanout, link);
        child_first = parent_first;
        child_count = level;
        parent_first += level;
    }
    return t;
}

Topology Topology::hierarchical(const std::vector<Topology>& groups, UpperKind upper_kind,
                                const LinkParams& upper_link) {
    if (groups.empty()) throw std::invalid_argument("hierarchical: needs at least one group");
    // 1. Where each group's nodes and switches go.
    std::size_t nodes = 0, switches = 0;
    for (std::size_t g = 0; g < groups.size(); ++g) {
        if (groups[g].node_count() == 0)
            throw std::invalid_argument("hierarchical: group " + std::to_string(g) + " has no nodes");
        nodes += groups[g].node_count();
        switches += groups[g].vertex_count() - groups[g].node_count();
    }
    const bool upper_switch = upper_kind == UpperKind::switch_star && groups.size() > 1;
    Topology t(nodes, switches + (upper_switch ? 1 : 0));
    // 2. Copy each group's links with its vertices renumbered.
    std::size_t node_offset = 0, switch_offset = nodes;
    std::vector<Grid> grids;
    for (const Topology& group : groups) {
        const auto first_channel = static_cast<ChannelId>(t.channel_count());
        for (Grid g : group.m_grids) {  // its channels are copied in order, after first_channel
            g.first_node += node_offset;
            const auto shift = [first_channel](ChannelId& c) {
                if (c != kNone) c += first_channel;  // kNone: no channel (a dimension of size 1, a node to itself)
            };
            for (ChannelId& c : g.up) shift(c);
            for (ChannelId& c : g.down) shift(c);
            for (std::vector<ChannelId>& peers : g.peers)
                for (ChannelId& c : peers) shift(c);
            grids.push_back(std::move(g));
        }
        const auto map = [&](std::size_t v) {
            return v < group.node_count() ? node_offset + v : switch_offset + (v - group.node_count());
        };
        for (std::size_t c = 0; c < group.channel_count(); c += 2) {
            const Channel& ch = group.channels()[c];
            t.add_link(map(ch.from), map(ch.to), ch.params);
        }
        t.m_gateways.push_back(node_offset);
        node_offset += group.node_count();
        switch_offset += group.vertex_count() - group.node_count();
    }
    // 3. The upper level over the gateways.
    const std::vector<std::size_t>& gw = t.m_gateways;
    const std::size_t k = gw.size();
    switch (upper_kind) {
    case UpperKind::ring:
        if (k == 2) t.add_link(gw[0], gw[1], upper_link);
        if (k >= 3)
            for (std::size_t i = 0; i < k; ++i) t.add_link(gw[i], gw[(i + 1) % k], upper_link);
        break;
    case UpperKind::fully_connected:
        for (std::size_t a = 0; a < k; ++a)
            for (std::size_t b = a + 1; b < k; ++b) t.add_link(gw[a], gw[b], upper_link);
        break;
    case UpperKind::switch_star:
        if (upper_switch)
            for (std::size_t i = 0; i < k; ++i) t.add_link(gw[i], t.vertex_count() - 1, upper_link);
        break;
    }
    // One gateway per group: no shortest path between two nodes of a group leaves it.
    t.set_grids(std::move(grids));
    return t;
}

std::size_t Topology::add_link(std::size_t a, std::size_t b, const LinkParams& link) {
    check_vertex(a, "add_link");
    check_vertex(b, "add_link");
    if (a == b)
        throw std::invalid_argument("add_link: a link joins two different vertices, got " + std::to_string(a) +
                                    " twice");
    const LinkTiming timing = link_timing(link);
    if (m_channels.size() + 2 > std::numeric_limits<ChannelId>::max())
        throw std::length_error("add_link: too many channels");
    const auto forward = static_cast<ChannelId>(m_channels.size());
    m_channels.push_back({a, b, link, timing});
    m_channels.push_back({b, a, link, timing});
    m_adjacency[a].push_back({b, forward});
    m_adjacency[b].push_back({a, forward + 1});
    m_trees.clear();
    m_cached_trees = 0;
    m_grids.clear();
    m_grid_of.clear();
    m_twin_run_first.clear();
    return forward / 2;
}

namespace {

bool same_link(const LinkParams& a, const LinkParams& b) {
    return a.bandwidth_gb_per_s == b.bandwidth_gb_per_s && a.latency_ns == b.latency_ns &&
           a.energy_pj_per_bit == b.energy_pj_per_bit && a.switching == b.switching;
}

}  // namespace

std::vector<NodeId> Topology::canonical_ranks(std::vector<NodeId> ranks) const {
    if (m_twin_run_first.size() != m_node_count) {
        // Node v + 1 is v's twin when their links, the one joining them apart, reach the same
        // vertices with the same parameters. Twins joined by a link (a fully connected group)
        // and twins without one (a switch's nodes) are each an equivalence, so a run of
        // consecutive twins of one kind is a class of interchangeable nodes.
        struct Neighbour {
            std::size_t vertex;
            const LinkParams* link;
        };
        const auto neighbours = [&](std::size_t v, std::size_t other) {
            std::vector<Neighbour> out;
            for (const Adjacent& a : m_adjacency[v])
                if (a.vertex != other) out.push_back({a.vertex, &m_channels[a.channel].params});
            std::sort(out.begin(), out.end(),
                      [](const Neighbour& x, const Neighbour& y) { return x.vertex < y.vertex; });
            return out;
        };
        const auto links_between = [&](std::size_t a, std::size_t b) {
            std::vector<const LinkParams*> out;
            for (const Adjacent& x : m_adjacency[a])
                if (x.vertex == b) out.push_back(&m_channels[x.channel].params);
            return out;
        };
        m_twin_run_first.assign(m_node_count, 0);
        for (std::size_t v = 0; v < m_node_count; ++v) {
            m_twin_run_first[v] = static_cast<std::uint32_t>(v);
            if (v == 0) continue;
            const std::vector<Neighbour> a = neighbours(v - 1, v), b = neighbours(v, v - 1);
            const std::size_t joining = links_between(v - 1, v).size();
            const std::size_t first = m_twin_run_first[v - 1];
            const bool same_kind = first == v - 1 || links_between(first, first + 1).size() == joining;
            bool twins = same_kind && a.size() == b.size() && joining <= 1;
            for (std::size_t i = 0; twins && i < a.size(); ++i)
                twins = a[i].vertex == b[i].vertex && same_link(*a[i].link, *b[i].link);
            // Parallel links to one vertex could pair up differently: not twins then.
            for (std::size_t i = 1; twins && i < a.size(); ++i) twins = a[i].vertex != a[i - 1].vertex;
            if (twins) m_twin_run_first[v] = m_twin_run_first[v - 1];
        }
    }
    // Each run's ranks, by id, become the run's first nodes in order.
    std::vector<std::pair<std::size_t, std::size_t>> moved;  // (node id, position), nodes in runs of two or more
    for (std::size_t i = 0; i < ranks.size(); ++i) {
        const std::size_t node = ranks[i].value();
        if (node >= m_node_count) throw std::invalid_argument("canonical_ranks: node out of range");
        const bool alone =
            m_twin_run_first[node] == node && (node + 1 >= m_node_count || m_twin_run_first[node + 1] != node);
        if (!alone) moved.emplace_back(node, i);
    }
    std::sort(moved.begin(), moved.end());
    for (std::size_t i = 0; i < moved.size(); ++i) {
        const std::size_t first = m_twin_run_first[moved[i].first];
        const std::size_t before =
            i > 0 && m_twin_run_first[moved[i - 1].first] == first ? ranks[moved[i - 1].second].value() + 1 : first;
        ranks[moved[i].second] = NodeId(before);
    }
    return ranks;
}

std::size_t Topology::Grid::node_count() const {
    std::size_t n = 1;
    for (const std::size_t k : sizes) n *= k;
    return n;
}

std::size_t Topology::Grid::stride(std::size_t d) const {
    std::size_t s = 1;
    for (std::size_t i = 0; i < d; ++i) s *= sizes[i];
    return s;
}

ChannelId Topology::Grid::channel_of(std::size_t d) const {
    if (kinds[d] == DimensionKind::fully_connected) return peers[d].at(1);  // node 0 to coordinate 1
    return up.at(d);                                                        // node 0's
}

Topology::Grid Topology::make_grid(std::size_t first_node, std::vector<std::size_t> sizes) const {
    Grid g;
    g.first_node = first_node;
    g.sizes = std::move(sizes);
    g.kinds.assign(g.sizes.size(), DimensionKind::ring);
    g.peers.resize(g.sizes.size());
    const std::size_t dims = g.sizes.size(), n = g.node_count();
    g.up.assign(n * dims, kNone);
    g.down.assign(n * dims, kNone);
    const auto channel_to = [&](std::size_t from, std::size_t to) {
        for (const Adjacent& a : m_adjacency[from])
            if (a.vertex == to) return a.channel;
        throw std::logic_error("make_grid: no link from " + std::to_string(from) + " to " + std::to_string(to));
    };
    for (std::size_t local = 0; local < n; ++local) {
        std::size_t stride = 1;
        for (std::size_t d = 0; d < dims; ++d) {
            const std::size_t k = g.sizes[d], c = local / stride % k;
            if (k >= 2) {
                const std::size_t up = local - c * stride + (c + 1) % k * stride;
                const std::size_t down = local - c * stride + (c + k - 1) % k * stride;
                g.up[local * dims + d] = channel_to(first_node + local, first_node + up);
                g.down[local * dims + d] = channel_to(first_node + local, first_node + down);
            }
            stride *= k;
        }
    }
    return g;
}

void Topology::set_grids(std::vector<Grid> grids) {
    m_grids = std::move(grids);
    m_grid_of.assign(m_node_count, 0);
    for (std::size_t i = 0; i < m_grids.size(); ++i)
        for (std::size_t v = 0; v < m_grids[i].node_count(); ++v)
            m_grid_of[m_grids[i].first_node + v] = static_cast<std::uint32_t>(i + 1);
}

const Topology::Grid* Topology::grid_of(std::size_t node) const {
    if (node >= m_grid_of.size() || m_grid_of[node] == 0) return nullptr;
    return &m_grids[m_grid_of[node] - 1];
}

const Topology::Grid* Topology::common_grid(std::size_t src, std::size_t dst) const {
    if (src >= m_grid_of.size() || dst >= m_grid_of.size()) return nullptr;
    const std::uint32_t g = m_grid_of[src];
    return g != 0 && g == m_grid_of[dst] ? &m_grids[g - 1] : nullptr;
}

std::size_t Topology::grid_route(const Grid& grid, std::size_t src, std::size_t dst, std::vector<ChannelId>* out) {
    const std::size_t dims = grid.sizes.size();
    std::size_t at = src - grid.first_node, to = dst - grid.first_node, stride = 1, hops = 0;
    for (std::size_t d = 0; d < dims; ++d) {
        const std::size_t k = grid.sizes[d], c = at / stride % k, t = to / stride % k;
        if (c == t) {
            stride *= k;
            continue;
        }
        const std::size_t there = at - c * stride + t * stride;
        switch (grid.kinds[d]) {
        case DimensionKind::fully_connected:
            if (out) out->push_back(grid.peers[d][at * k + t]);
            hops += 1;
            at = there;
            break;
        case DimensionKind::switch_star:
            if (out) {
                out->push_back(grid.up[at * dims + d]);
                out->push_back(grid.down[there * dims + d]);
            }
            hops += 2;
            at = there;
            break;
        case DimensionKind::ring: {
            const std::size_t forward = (t + k - c) % k, backward = (k - forward) % k;
            // The short way round; half-way: up from an even coordinate, down from an odd one.
            const bool up = forward < backward || (forward == backward && c % 2 == 0);
            const std::size_t steps = up ? forward : backward;
            for (std::size_t s = 0; s < steps; ++s) {
                const std::size_t cur = at / stride % k;
                if (out) out->push_back(up ? grid.up[at * dims + d] : grid.down[at * dims + d]);
                at = at - cur * stride + (up ? (cur + 1) % k : (cur + k - 1) % k) * stride;
            }
            hops += steps;
            break;
        }
        }
        stride *= k;
    }
    return hops;
}

void Topology::check_vertex(std::size_t v, const char* what) const {
    if (v >= vertex_count())
        throw std::invalid_argument(std::string(what) + ": vertex " + std::to_string(v) + " out of range (" +
                                    std::to_string(vertex_count()) + " vertices)");
}

std::shared_ptr<const Topology::SourceTree> Topology::tree_from(std::size_t src) const {
    if (m_trees.size() != vertex_count()) {
        m_trees.assign(vertex_count(), nullptr);
        m_cached_trees = 0;
    }
    if (m_trees[src]) return m_trees[src];
    // Dijkstra on (latency, hops); a vertex keeps the lowest-id predecessor among equal-cost
    // ones. Every hop adds one to the key, so all predecessors are settled before the vertex.
    const std::size_t n = vertex_count();
    constexpr std::uint64_t kInf = std::numeric_limits<std::uint64_t>::max();
    std::vector<std::uint64_t> latency(n, kInf);
    auto tree = std::make_shared<SourceTree>();
    tree->entering.assign(n, kNone);
    tree->hops.assign(n, std::numeric_limits<std::uint32_t>::max());
    using Key = std::tuple<std::uint64_t, std::uint32_t, std::size_t>;  // latency, hops, vertex
    std::priority_queue<Key, std::vector<Key>, std::greater<>> queue;
    latency[src] = 0;
    tree->hops[src] = 0;
    queue.emplace(0, 0, src);
    while (!queue.empty()) {
        const auto [lat, hop, u] = queue.top();
        queue.pop();
        if (lat != latency[u] || hop != tree->hops[u]) continue;
        for (const Adjacent& edge : m_adjacency[u]) {
            const Channel& ch = m_channels[edge.channel];
            const std::uint64_t l = lat + ch.timing.latency_ps.count();
            const std::uint32_t h = hop + 1;
            const std::size_t v = edge.vertex;
            const ChannelId old = tree->entering[v];
            bool better = l < latency[v] || (l == latency[v] && h < tree->hops[v]);
            if (!better && l == latency[v] && h == tree->hops[v] && old != kNone) {
                // Equal cost: lower predecessor id, then (parallel links) the lower channel id.
                const std::size_t old_u = m_channels[old].from;
                better = u < old_u || (u == old_u && edge.channel < old);
                if (better) {
                    tree->entering[v] = edge.channel;
                    continue;  // same key: already queued
                }
            }
            if (better) {
                latency[v] = l;
                tree->hops[v] = h;
                tree->entering[v] = edge.channel;
                queue.emplace(l, h, v);
            }
        }
    }
    // Once full, a tree is built and not kept: the planners sweep the sources in turn, and
    // evicting the oldest would miss on every one once there are more sources than room
    // (4,096 nodes: room for 3,854 trees); keeping the first ones hits on most.
    const std::size_t max_trees = std::max<std::size_t>(1, kMaxCachedRouteEntries / n);
    if (m_cached_trees < max_trees) {
        m_trees[src] = tree;
        ++m_cached_trees;
    }
    return tree;
}

void Topology::route_into(std::size_t src, std::size_t dst, std::vector<ChannelId>& out) const {
    check_vertex(src, "route");
    check_vertex(dst, "route");
    out.clear();
    if (src == dst) return;
    if (const Grid* grid = common_grid(src, dst)) {
        grid_route(*grid, src, dst, &out);
        return;
    }
    const auto tree = tree_from(src);
    if (tree->entering[dst] == kNone)
        throw std::invalid_argument("route: vertex " + std::to_string(dst) + " is unreachable from vertex " +
                                    std::to_string(src));
    for (std::size_t v = dst; v != src; v = m_channels[out.back()].from) out.push_back(tree->entering[v]);
    std::reverse(out.begin(), out.end());
}

std::vector<ChannelId> Topology::route(std::size_t src, std::size_t dst) const {
    std::vector<ChannelId> out;
    route_into(src, dst, out);
    return out;
}

std::size_t Topology::hops(std::size_t src, std::size_t dst) const {
    check_vertex(src, "hops");
    check_vertex(dst, "hops");
    if (src == dst) return 0;
    if (const Grid* grid = common_grid(src, dst)) return grid_route(*grid, src, dst, nullptr);
    const auto tree = tree_from(src);
    if (tree->entering[dst] == kNone)
        throw std::invalid_argument("hops: vertex " + std::to_string(dst) + " is unreachable from vertex " +
                                    std::to_string(src));
    return tree->hops[dst];
}

std::vector<std::size_t> Topology::unreachable_nodes() const {
    std::vector<std::size_t> out;
    if (m_node_count == 0) return out;
    // Links are full duplex, so "reaches node 0" is "is reached from node 0".
    std::vector<char> seen(vertex_count(), 0);
    std::vector<std::size_t> stack{0};
    seen[0] = 1;
    while (!stack.empty()) {
        const std::size_t u = stack.back();
        stack.pop_back();
        for (const Adjacent& edge : m_adjacency[u])
            if (!seen[edge.vertex]) {
                seen[edge.vertex] = 1;
                stack.push_back(edge.vertex);
            }
    }
    for (std::size_t v = 0; v < m_node_count; ++v)
        if (!seen[v]) out.push_back(v);
    return out;
}

void Topology::check_connected() const {
    const std::vector<std::size_t> lost = unreachable_nodes();
    if (!lost.empty())
        throw std::invalid_argument("topology: compute node(s) " + id_list(lost) + " cannot reach node 0");
}

std::string Topology::describe() const {
    std::ostringstream out;
    out << m_node_count << " nodes, " << vertex_count() - m_node_count << " switches, " << link_count() << " links\n";
    for (std::size_t v = 0; v < vertex_count(); ++v) {
        out << (v < m_node_count ? "node " : "switch ") << v << ":";
        for (const Adjacent& edge : m_adjacency[v]) {
            const Channel& ch = m_channels[edge.channel];
            out << ' ' << edge.vertex << " (" << ch.params.bandwidth_gb_per_s << " GB/s, " << ch.params.latency_ns
                << " ns)";
        }
        out << '\n';
    }
    return out.str();
}

}  // namespace fastsim::interconnect
