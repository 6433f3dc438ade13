// SPDX-License-Identifier: MIT
// cluster.groups and cluster.upper resolved into the cluster's topology (docs/config.md#cluster).
#include <sstream>

#include "config/sections.h"

namespace fastsim::config {
namespace {

/// The most links a cluster may have: routing keeps state per link (a fully connected group
/// grows as count^2: 16384 nodes would be 134 million links and many gigabytes).
constexpr std::uint64_t kMaxLinks = std::uint64_t{1} << 20;

/// Links `kind` uses to join `count` nodes (trees: at most 2 per node, switches included).
std::uint64_t topology_links(TopologyKind kind, std::uint64_t count) {
    switch (kind) {
    case TopologyKind::fully_connected: return count * (count - 1) / 2;
    case TopologyKind::torus2d:
    case TopologyKind::tree: return 2 * count;
    case TopologyKind::torus3d: return 3 * count;
    case TopologyKind::ring:
    case TopologyKind::switch_star: return count;
    }
    return count;
}

/// `total` + `more` links, or a ConfigError at the topology key beyond kMaxLinks.
std::uint64_t add_links(std::uint64_t total, std::uint64_t more, const Location& where, const std::string& topology,
                        std::uint64_t count) {
    if (total + more > kMaxLinks)
        throw ConfigError(
            where, "topology " + topology + " joins " + std::to_string(count) + " nodes with " + std::to_string(more) +
                       " links, which brings the cluster to " + std::to_string(total + more) +
                       "; a cluster has at most " + std::to_string(kMaxLinks) +
                       " links (routing keeps state per link): join large groups with switch, torus2d or tree");
    return total + more;
}

interconnect::DimensionKind dimension_kind(DimensionTopology kind) {
    switch (kind) {
    case DimensionTopology::ring: return interconnect::DimensionKind::ring;
    case DimensionTopology::fully_connected: return interconnect::DimensionKind::fully_connected;
    case DimensionTopology::switch_star: return interconnect::DimensionKind::switch_star;
    }
    return interconnect::DimensionKind::ring;
}

/// Links of one dimension's line of `count` nodes.
std::uint64_t line_links(DimensionTopology kind, std::uint64_t count) {
    switch (kind) {
    case DimensionTopology::ring: return count == 2 ? 1 : count;
    case DimensionTopology::fully_connected: return count * (count - 1) / 2;
    case DimensionTopology::switch_star: return count;
    }
    return count;
}

/// "switch of 8 x ring of 4".
std::string describe_dimensions(const std::vector<GroupDimensionParams>& dimensions) {
    std::string s;
    for (const GroupDimensionParams& d : dimensions)
        s += (s.empty() ? "" : " x ") + std::string(to_string(d.topology)) + " of " + std::to_string(d.count);
    return s;
}

/// Links of a group of `dimensions`: per dimension, its lines' links.
std::uint64_t dimension_links(const std::vector<GroupDimensionParams>& dimensions, std::uint64_t count) {
    std::uint64_t links = 0;
    for (const GroupDimensionParams& d : dimensions)
        if (d.count >= 2) links += count / d.count * line_links(d.topology, d.count);
    return links;
}

interconnect::Topology build_group(const NodeGroupParams& g) {
    using interconnect::Topology;
    if (!g.dimensions.empty()) {
        std::vector<interconnect::Dimension> dims;
        for (const GroupDimensionParams& d : g.dimensions)
            dims.push_back({dimension_kind(d.topology), d.count, d.link});
        return Topology::dimensional(dims);
    }
    switch (g.topology) {
    case TopologyKind::ring: return Topology::ring(g.count, g.link);
    case TopologyKind::fully_connected: return Topology::fully_connected(g.count, g.link);
    case TopologyKind::switch_star: return Topology::switch_star(g.count, g.link);
    case TopologyKind::torus2d: return Topology::torus2d(g.torus_rows, g.torus_cols, g.link);
    case TopologyKind::torus3d: return Topology::torus3d(g.torus_depth, g.torus_rows, g.torus_cols, g.link);
    case TopologyKind::tree: return Topology::tree(g.count, g.tree_fanout, g.link);
    }
    return Topology(g.count);
}

/// cluster.groups[i].dimensions, if given: each a ring, fully connected or switch dimension,
/// its link defaulting to the group's; the group's count their product.
void read_dimensions(NodeGroupParams& g, KeyReader& reader) {
    std::vector<MapReader> entries = reader.section().maps("dimensions");
    if (!reader.section().contains("dimensions")) return;
    const Location where = reader.section().location_of("dimensions");
    if (entries.empty()) throw ConfigError(where, "expected a list of {topology, count, link}, one per dimension");
    if (reader.given("topology"))
        throw ConfigError(reader.where("topology"),
                          "a group gives its topology as `topology` or as `dimensions`, not both");
    std::uint64_t product = 1;
    for (MapReader& entry : entries) {
        const Location entry_where = entry.location();
        GroupDimensionParams d;
        d.link = g.link;
        KeyReader dim = read_group_dimension(std::move(entry), d);
        dim.finish();
        if (!dim.given("count")) throw ConfigError(entry_where, "expected count: the nodes per line of this dimension");
        product *= d.count;
        if (product > static_cast<std::uint64_t>(kGroupCount.max))
            throw ConfigError(dim.where("count"), "the dimensions so far hold " + std::to_string(product) +
                                                      " nodes; a cluster has at most " + exact_number(kGroupCount.max) +
                                                      " nodes");
        g.dimensions.push_back(d);
    }
    if (reader.given("count") && g.count != product)
        throw ConfigError(reader.where("count"), "count is " + std::to_string(g.count) +
                                                     " but the product of the dimensions' counts is " +
                                                     std::to_string(product));
    g.count = static_cast<std::size_t>(product);
}

/// A group's topology keys fit its count.
void resolve_topology_keys(const NodeGroupParams& g, const KeyReader& reader, const Location& entry_where) {
    const bool torus_given = reader.given("torus.rows") || reader.given("torus.cols") || reader.given("torus.depth");
    if (g.topology == TopologyKind::torus3d) {
        if (!reader.given("torus.depth") || !reader.given("torus.rows") || !reader.given("torus.cols"))
            throw ConfigError(entry_where, "topology torus3d needs torus: {depth, rows, cols}");
        if (g.torus_depth * g.torus_rows * g.torus_cols != g.count)
            throw ConfigError(
                reader.where("torus.depth"),
                "torus depth x rows x cols = " + std::to_string(g.torus_depth * g.torus_rows * g.torus_cols) +
                    " but count is " + std::to_string(g.count));
    } else if (g.topology == TopologyKind::torus2d) {
        if (!reader.given("torus.rows") || !reader.given("torus.cols"))
            throw ConfigError(entry_where, "topology torus2d needs torus: {rows, cols}");
        if (reader.given("torus.depth"))
            throw ConfigError(reader.where("torus.depth"), "torus.depth applies to topology torus3d only");
        if (g.torus_rows * g.torus_cols != g.count)
            throw ConfigError(reader.where("torus.rows"),
                              "torus rows x cols = " + std::to_string(g.torus_rows * g.torus_cols) + " but count is " +
                                  std::to_string(g.count));
    } else if (torus_given) {
        throw ConfigError(reader.where(reader.given("torus.rows") ? "torus.rows" : "torus.cols"),
                          "torus: applies to topology torus2d and torus3d only");
    }
    if (reader.given("tree_fanout") && g.topology != TopologyKind::tree)
        throw ConfigError(reader.where("tree_fanout"), "tree_fanout applies to topology tree only");
}

/// One group's own rules: its node type exists, its topology's keys fit its count.
void resolve_group(NodeGroupParams& g, const KeyReader& reader, const Location& entry_where, const ClusterParams& c,
                   bool network_only) {
    if (network_only) {
        g.type_index = 0;
        resolve_topology_keys(g, reader, entry_where);
        return;
    }
    if (!reader.given("node_type")) throw ConfigError(entry_where, "expected node_type: the name of one of node_types");
    g.type_index = c.node_types.size();
    for (std::size_t i = 0; i < c.node_types.size(); ++i)
        if (c.node_types[i].name == g.node_type) g.type_index = i;
    if (g.type_index == c.node_types.size()) {
        std::string names;
        for (const auto& t : c.node_types) names += (names.empty() ? "" : ", ") + t.name;
        throw ConfigError(reader.where("node_type"),
                          "no node type named '" + g.node_type + "' (node_types has " + names + ")");
    }
    resolve_topology_keys(g, reader, entry_where);
}

}  // namespace

std::string describe_topology(const NodeGroupParams& g) {
    const auto at = [](const interconnect::LinkParams& link) {
        std::ostringstream out;
        out << " at " << link.bandwidth_gb_per_s << " GB/s";
        return out.str();
    };
    if (g.dimensions.empty()) return std::string(to_string(g.topology)) + at(g.link);
    std::string s;
    for (const GroupDimensionParams& d : g.dimensions)
        s += (s.empty() ? "" : " x ") + std::string(to_string(d.topology)) + " of " + std::to_string(d.count) +
             at(d.link);
    return s;
}

void resolve_groups(MapReader& cluster, const KeyReader& cluster_keys, Params& p, bool network_only) {
    ClusterParams& c = p.cluster;
    std::vector<MapReader> entries = cluster.maps("groups");
    if (entries.empty())
        throw ConfigError(cluster.location_of("groups"),
                          "run.mode cluster needs cluster.groups: a list of {node_type, count, topology, link}");
    std::vector<interconnect::Topology> group_topologies;
    std::uint64_t links = 0;
    for (MapReader& entry : entries) {
        const Location entry_where = entry.location();
        NodeGroupParams g;
        KeyReader reader = read_group(std::move(entry), g);
        read_dimensions(g, reader);
        reader.finish();
        resolve_group(g, reader, entry_where, c, network_only);
        if (c.node_type.size() + g.count > static_cast<std::size_t>(kGroupCount.max))
            throw ConfigError(reader.where("count"),
                              "the groups so far hold " + std::to_string(c.node_type.size() + g.count) +
                                  " nodes; a cluster has at most " + exact_number(kGroupCount.max) + " nodes in all (" +
                                  std::string(kGroupCount.reason) + ")");
        links = g.dimensions.empty()
                    ? add_links(links, topology_links(g.topology, g.count), reader.where("topology"),
                                std::string(to_string(g.topology)), g.count)
                    : add_links(links, dimension_links(g.dimensions, g.count), reader.where("dimensions"),
                                describe_dimensions(g.dimensions), g.count);
        group_topologies.push_back(build_group(g));
        for (std::size_t i = 0; i < g.count; ++i) c.node_type.push_back(g.type_index);
        c.group_first_node.push_back(c.node_type.size() - g.count);
        c.groups.push_back(std::move(g));
    }
    const Location upper_where = cluster.location_of("upper");
    if (cluster.contains("upper")) {
        if (!c.upper_topology)
            throw ConfigError(upper_where, "expected cluster.upper.topology: ring, fully_connected or switch");
        if (*c.upper_topology != TopologyKind::ring && *c.upper_topology != TopologyKind::fully_connected &&
            *c.upper_topology != TopologyKind::switch_star)
            throw ConfigError(cluster_keys.where("upper.topology"), "expected one of ring, fully_connected, switch");
        links =
            add_links(links, topology_links(*c.upper_topology, c.groups.size()), cluster_keys.where("upper.topology"),
                      std::string(to_string(*c.upper_topology)), c.groups.size());
    }
    if (group_topologies.size() == 1) {
        if (c.upper_topology) throw ConfigError(upper_where, "cluster.upper joins groups, and there is only one group");
        c.topology = std::make_shared<interconnect::Topology>(std::move(group_topologies.front()));
    } else {
        if (!c.upper_topology) {
            const std::size_t second = c.group_first_node[1];
            throw ConfigError(upper_where, "cluster.groups has " + std::to_string(c.groups.size()) +
                                               " groups but no cluster.upper {topology, link} joins them: nodes " +
                                               std::to_string(second) + ".." + std::to_string(c.node_type.size() - 1) +
                                               " are unreachable from node 0");
        }
        const auto upper = *c.upper_topology == TopologyKind::ring ? interconnect::UpperKind::ring
                           : *c.upper_topology == TopologyKind::fully_connected
                               ? interconnect::UpperKind::fully_connected
                               : interconnect::UpperKind::switch_star;
        c.topology = std::make_shared<interconnect::Topology>(
            interconnect::Topology::hierarchical(group_topologies, upper, c.upper_link));
    }
    if (const auto lost = c.topology->unreachable_nodes(); !lost.empty())
        throw ConfigError(cluster.location(),
                          "the topology leaves node " + std::to_string(lost.front()) + " unconnected");
}

}  // namespace fastsim::config
