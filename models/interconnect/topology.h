// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "interconnect/link.h"

namespace fastsim::interconnect {

/// Index of a directed channel: link i carries channel 2i (a -> b, as given to add_link) and
/// channel 2i + 1 (b -> a).
using ChannelId = std::uint32_t;

/// One direction of a link.
struct Channel {
    std::size_t from = 0;
    std::size_t to = 0;
    LinkParams params;
    LinkTiming timing;  ///< params in integer bits/s and ps
};

/// Upper level of a hierarchical topology: how the groups' gateways are connected.
enum class UpperKind { ring, fully_connected, switch_star };

/// How one dimension of a multi-dimensional topology joins each line of its nodes (the nodes
/// that differ in that coordinate only): a bidirectional ring, a link between every pair, or a
/// switch of the line's own.
enum class DimensionKind : std::uint8_t { ring, fully_connected, switch_star };

/// One dimension of Topology::dimensional.
struct Dimension {
    DimensionKind kind = DimensionKind::ring;
    std::size_t size = 1;  ///< nodes per line
    LinkParams link;
};

/// A graph of compute nodes and switches joined by full-duplex links. Vertices
/// 0 .. node_count() - 1 are compute nodes, node_count() .. vertex_count() - 1 switches. Every
/// vertex forwards (direct networks such as rings route through compute nodes).
///
/// Routes are shortest by total latency, then by hop count. Within a ring or a torus (also as a
/// group of a hierarchical topology) they follow dimension order: columns first, then rows, each
/// ring dimension the short way round, and a tie (half-way round an even ring) going up from an
/// even coordinate and down from an odd one, so both directions of a ring carry half the ties.
/// Elsewhere they take the lowest predecessor vertex id at each step (walking back from the
/// destination). Both are deterministic. The latter are computed lazily, one Dijkstra per source
/// on first use, and cached; route queries are therefore not thread-safe on a shared Topology.
/// Route-table entries (one per vertex per cached source tree) a Topology keeps: 2^24, about
/// 200 MB. Beyond it the oldest trees are rebuilt when needed.
inline constexpr std::size_t kMaxCachedRouteEntries = std::size_t{1} << 24;

class Topology {
public:
    /// `node_count` compute nodes, `switch_count` switches, no links.
    explicit Topology(std::size_t node_count, std::size_t switch_count = 0);

    /// Bidirectional ring 0-1-..-(n-1)-0: n links for n >= 3, one for n = 2, none for n = 1.
    static Topology ring(std::size_t n, const LinkParams& link);
    /// A link between every pair: n(n-1)/2 links (a one-dimensional grid).
    static Topology fully_connected(std::size_t n, const LinkParams& link);
    /// One switch (vertex n), every node linked to it: n links (a one-dimensional grid).
    static Topology switch_star(std::size_t n, const LinkParams& link);
    /// rows x cols 2D torus, node id = row * cols + col, wrap-around in both dimensions: torus3d
    /// of one plane. A dimension of size k contributes k links per line for k >= 3, one for k = 2,
    /// none for k = 1.
    static Topology torus2d(std::size_t rows, std::size_t cols, const LinkParams& link);
    /// depth x rows x cols 3D torus, node id = (depth_index * rows + row) * cols + col, wrap-around
    /// in every dimension (links per line as torus2d's).
    static Topology torus3d(std::size_t depth, std::size_t rows, std::size_t cols, const LinkParams& link);
    /// The product of `dims` (ASTRA-sim's multi-dimensional network): node id = Σ coordinate_d x
    /// stride_d, dimension 0 of stride 1 and each next of stride the product of the sizes before
    /// it; every line of dimension d joined as dims[d].kind with dims[d].link. A ring line of
    /// size k has k links for k >= 3 and one for k = 2; a switch line has one switch (ids after
    /// the nodes, dimension by dimension, line by line in the order of their lowest node).
    /// torus3d(depth, rows, cols) is {ring cols, ring rows, ring depth}.
    static Topology dimensional(const std::vector<Dimension>& dims);
    /// Nodes are the leaves of a tree of switches: consecutive runs of `fanout` nodes share a
    /// leaf switch, consecutive runs of `fanout` switches a parent, up to one root (n <= fanout
    /// gives a single switch). Switch ids go level by level from the leaves up. fanout 2 is the
    /// H-tree of HyPar. Links: n + switches - 1.
    static Topology tree(std::size_t n, std::size_t fanout, const LinkParams& link);
    /// Groups side by side: group g's nodes are renumbered consecutively after those of groups
    /// 0 .. g-1, then all groups' switches follow in group order, then the upper level's switch
    /// (switch_star). The gateway of each group (its first node) joins the upper topology of
    /// `upper_kind` built with `upper_link`; inner links keep their own parameters.
    static Topology hierarchical(const std::vector<Topology>& groups, UpperKind upper_kind,
                                 const LinkParams& upper_link);

    /// Adds a full-duplex link between vertices a != b; returns the link's index. Parallel
    /// links are allowed (routing takes the faster, then the lower channel id). Throws
    /// std::invalid_argument on a bad vertex or bad parameters. A link added to a built ring or
    /// torus ends its dimension-order routing (routes are then shortest paths by vertex id).
    std::size_t add_link(std::size_t a, std::size_t b, const LinkParams& link);

    [[nodiscard]] std::size_t node_count() const { return m_node_count; }
    [[nodiscard]] std::size_t vertex_count() const { return m_adjacency.size(); }
    [[nodiscard]] std::size_t link_count() const { return m_channels.size() / 2; }
    [[nodiscard]] std::size_t channel_count() const { return m_channels.size(); }
    [[nodiscard]] const std::vector<Channel>& channels() const { return m_channels; }
    [[nodiscard]] const Channel& channel(ChannelId id) const { return m_channels.at(id); }
    /// Gateway nodes of a hierarchical topology (first node of each group); empty otherwise.
    [[nodiscard]] const std::vector<std::size_t>& gateways() const { return m_gateways; }

    /// Directed channels from vertex `src` to vertex `dst` in path order; empty if src == dst.
    /// Throws std::invalid_argument if a vertex is out of range or dst is unreachable.
    [[nodiscard]] std::vector<ChannelId> route(std::size_t src, std::size_t dst) const;
    /// As route(), into `out` (cleared first), so a caller can reuse its buffer.
    void route_into(std::size_t src, std::size_t dst, std::vector<ChannelId>& out) const;
    /// Hop count of route(src, dst).
    [[nodiscard]] std::size_t hops(std::size_t src, std::size_t dst) const;

    /// Compute nodes that cannot reach node 0 (ascending); empty when connected.
    [[nodiscard]] std::vector<std::size_t> unreachable_nodes() const;
    /// Throws std::invalid_argument listing unreachable_nodes() if any.
    void check_connected() const;

    /// Consecutive nodes joined dimension by dimension (a ring, a torus, or dimensional()): node
    /// first_node + Σ coordinate_d x stride_d, dimension 0 of stride 1. Routes within it go
    /// dimension by dimension, lowest first.
    struct Grid {
        std::size_t first_node = 0;
        std::vector<std::size_t> sizes;    ///< per dimension (a ring of 2 has one link; 1: none)
        std::vector<DimensionKind> kinds;  ///< per dimension
        /// [local node x dimensions + d]: a ring dimension's channels to coordinate + 1 and - 1; a
        /// switch dimension's channel to the line's switch (up) and from it (down).
        std::vector<ChannelId> up, down;
        /// Per fully connected dimension d: [local node x sizes[d] + coordinate] the channel to
        /// the node of its line at that coordinate (empty for other dimensions).
        std::vector<std::vector<ChannelId>> peers;
        [[nodiscard]] std::size_t node_count() const;
        /// The stride of dimension d: the product of the sizes before it.
        [[nodiscard]] std::size_t stride(std::size_t d) const;
        /// A channel of dimension d (its links' timing; dimensions of size 1 have none).
        [[nodiscard]] ChannelId channel_of(std::size_t d) const;
    };
    /// The grid node `node` belongs to (as built by ring, torus2d, torus3d, dimensional, or as a
    /// group of hierarchical), if any.
    [[nodiscard]] const Grid* grid_of(std::size_t node) const;

    /// `ranks` with the nodes of each run of interchangeable nodes renamed to the run's first
    /// nodes, in the same relative order, each rank keeping its position. Nodes are
    /// interchangeable (twins) when swapping them maps every link onto a link of the same
    /// parameters: the nodes of a switch or a fully connected group, its gateway apart, that
    /// have no other links. The renaming is an automorphism that keeps the order of vertex and
    /// channel ids among the ranks, so a collective over the result replays exactly as over
    /// `ranks`: callers key their memos by it. Builds the runs on first use (not thread-safe).
    [[nodiscard]] std::vector<NodeId> canonical_ranks(std::vector<NodeId> ranks) const;

    /// One line per vertex with its links, for logs and error messages.
    [[nodiscard]] std::string describe() const;

private:
    struct Adjacent {
        std::size_t vertex;
        ChannelId channel;
    };
    /// Records `sizes` (ring dimensions) over nodes first_node.. as a grid, from the links
    /// already added.
    [[nodiscard]] Grid make_grid(std::size_t first_node, std::vector<std::size_t> sizes) const;
    void set_grids(std::vector<Grid> grids);
    /// The grid holding both nodes, if any.
    [[nodiscard]] const Grid* common_grid(std::size_t src, std::size_t dst) const;
    /// Dimension-order route within `grid` (appended to `out`); returns its hop count.
    static std::size_t grid_route(const Grid& grid, std::size_t src, std::size_t dst, std::vector<ChannelId>* out);

    /// Shortest-path tree from one source: the channel entering each vertex (kNone if none).
    struct SourceTree {
        std::vector<ChannelId> entering;
        std::vector<std::uint32_t> hops;
    };
    static constexpr ChannelId kNone = ~ChannelId{0};

    /// The tree from `src`, from the cache or built (and cached while the cache holds fewer than
    /// kMaxCachedRouteEntries vertices' worth).
    std::shared_ptr<const SourceTree> tree_from(std::size_t src) const;
    void check_vertex(std::size_t v, const char* what) const;

    std::size_t m_node_count;
    std::vector<std::vector<Adjacent>> m_adjacency;
    std::vector<Channel> m_channels;
    std::vector<std::size_t> m_gateways;
    std::vector<Grid> m_grids;
    std::vector<std::uint32_t> m_grid_of;  ///< per compute node: 1 + its grid's index, 0 for none
    /// Per source, built lazily; immutable once built, so copies of the Topology share them.
    /// At most kMaxCachedRouteEntries vertices' worth are kept (the first built; later ones are
    /// built each time), so routing a cluster of N nodes takes O(N) memory, not O(N^2).
    mutable std::vector<std::shared_ptr<const SourceTree>> m_trees;
    mutable std::size_t m_cached_trees = 0;  ///< the trees in m_trees
    /// Per compute node, the first node of its run of consecutive twins (canonical_ranks);
    /// built lazily, cleared by add_link.
    mutable std::vector<std::uint32_t> m_twin_run_first;
};

}  // namespace fastsim::interconnect
