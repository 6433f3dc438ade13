// SPDX-License-Identifier: MIT
// Collectives per dimension: multi-dimensional topologies, every op with every algorithm that
// defines it, timed on the network against the closed forms (closed_form.h), and the errors for
// the combinations that do not exist.
#include <catch2/catch.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "cluster/cluster.h"
#include "interconnect/all_reduce.h"
#include "interconnect/closed_form.h"
#include "interconnect/collective.h"
#include "interconnect/collective_cost.h"
#include "interconnect/network.h"
#include "interconnect/replay.h"
#include "interconnect/topology.h"
#include "support/systemc_fixture.h"

using namespace fastsim;
using namespace fastsim::interconnect;

namespace {

/// 100 GB/s, 500 ns, cut-through.
const LinkParams kLink{100.0, 500.0, 1.0};
/// 25 GB/s, 2 us: a slower second dimension.
const LinkParams kSlowLink{25.0, 2000.0, 1.0};

std::vector<NodeId> all_nodes(const Topology& t) {
    std::vector<NodeId> r;
    for (std::size_t i = 0; i < t.node_count(); ++i) r.emplace_back(i);
    return r;
}

/// Seconds of `op` over every node, replayed on the network model.
double replayed_s(const Topology& t, CollectiveOp op, const AlgorithmPerDimension& algorithms, std::uint64_t bytes) {
    std::vector<NodeProgram> programs(t.node_count());
    simulated_collective(t, op, algorithms, programs, all_nodes(t), bytes, 0, 0);
    Network network(t);
    return to_seconds(replay_messages(network, programs, all_nodes(t)));
}

/// The same on the SystemC cluster.
double simulated_s(const Topology& t, CollectiveOp op, const AlgorithmPerDimension& algorithms, std::uint64_t bytes) {
    std::vector<NodeProgram> programs(t.node_count());
    simulated_collective(t, op, algorithms, programs, all_nodes(t), bytes, 0, 0);
    test::FreshSimContext kernel;
    return to_seconds(cluster::run_cluster(t, programs).end_ps);
}

}  // namespace

TEST_CASE("dimensional topologies: links per kind and dimension-order routes", "[interconnect][collective]") {
    // 4 (ring) x 3 (switch) x 2 (fully connected): 24 nodes.
    const Topology t = Topology::dimensional({{DimensionKind::ring, 4, kLink},
                                              {DimensionKind::switch_star, 3, kSlowLink},
                                              {DimensionKind::fully_connected, 2, kLink}});
    CHECK(t.node_count() == 24);
    CHECK(t.vertex_count() == 24 + 8);  // one switch per line of dimension 1: 24 / 3
    CHECK(t.link_count() == 6 * 4 + 24 + 12 * 1);
    // Node 0 to coordinates (2, 1, 1) = 2 + 1 x 4 + 1 x 12 = 18: two ring hops, through a
    // switch, then the direct link.
    const std::vector<ChannelId> route = t.route(0, 18);
    REQUIRE(route.size() == 5);
    CHECK(t.channel(route[0]).to == 1);
    CHECK(t.channel(route[1]).to == 2);
    CHECK(t.channel(route[2]).to >= 24);  // a switch
    CHECK(t.channel(route[2]).params.bandwidth_gb_per_s == 25.0);
    CHECK(t.channel(route[3]).to == 6);
    CHECK(t.channel(route[4]).to == 18);
    CHECK(t.hops(18, 0) == 5);
    // A switch and a fully connected group are one-dimensional grids with the same links as before.
    CHECK(Topology::switch_star(5, kLink).link_count() == 5);
    CHECK(Topology::switch_star(5, kLink).vertex_count() == 6);
    CHECK(Topology::fully_connected(5, kLink).link_count() == 10);
    CHECK(Topology::switch_star(1, kLink).link_count() == 1);
}

TEST_CASE("every op with every algorithm that defines it meets its closed form on switches and fully connected groups",
          "[interconnect][collective]") {
    struct Case {
        CollectiveOp op;
        AllReduceAlgorithm algorithm;
    };
    std::vector<Case> cases;
    for (const CollectiveOp op : kCollectiveOps)
        for (const AllReduceAlgorithm a : kAllReduceAlgorithms) cases.push_back({op, a});
    std::size_t checked = 0;
    for (const bool through_switch : {true, false})
        for (const std::size_t p : {4, 8, 16}) {
            const Topology t = through_switch ? Topology::switch_star(p, kLink) : Topology::fully_connected(p, kLink);
            for (const Case& c : cases)
                for (const std::uint64_t n : {std::uint64_t{1} << 12, std::uint64_t{1} << 24}) {
                    const std::optional<double> form = closed_form_seconds(t, c.op, {c.algorithm}, all_nodes(t), n);
                    if (unsupported(t, c.op, {c.algorithm}, all_nodes(t))) {
                        CHECK(!form);
                        continue;
                    }
                    CAPTURE(through_switch, p, to_string(c.op), to_string(c.algorithm), n);
                    REQUIRE(form);
                    // The tree on a fully connected group: the root's children send to it in
                    // turn over distinct links, as the form says; on a switch its downlink
                    // serialises them, also as the form says.
                    CHECK(replayed_s(t, c.op, {c.algorithm}, n) == Approx(*form).epsilon(0.01));
                    ++checked;
                }
        }
    CHECK(checked >= 2 * 3 * 2 * 18);  // all-reduce 6, reduce-scatter and all-gather 5 each, all-to-all 2
}

TEST_CASE("a collective over a multi-dimensional grid goes dimension by dimension, with its own algorithm in each",
          "[interconnect][collective]") {
    // 8 nodes per switch line x a ring of 4 slower links: the forms of each dimension add, the
    // second handling an eighth of the buffer where the first splits.
    const Topology t =
        Topology::dimensional({{DimensionKind::switch_star, 8, kLink}, {DimensionKind::ring, 4, kSlowLink}});
    const std::uint64_t n = std::uint64_t{1} << 26;
    const double nn = static_cast<double>(n);
    const double L1 = 500e-9, B1 = 100e9, L2 = 2000e-9, B2 = 25e9;
    const double direct_then_ring = 2 * (2 * L1 + 7.0 / 8 * nn / B1) + 2 * 3 * (L2 + nn / 8.0 / (4 * B2));
    const AlgorithmPerDimension mixed{AllReduceAlgorithm::direct, AllReduceAlgorithm::ring};
    CHECK(*closed_form_seconds(t, CollectiveOp::all_reduce, mixed, all_nodes(t), n) ==
          Approx(direct_then_ring).epsilon(1e-9));
    CHECK(replayed_s(t, CollectiveOp::all_reduce, mixed, n) == Approx(direct_then_ring).epsilon(0.01));
    CHECK(simulated_s(t, CollectiveOp::all_reduce, mixed, n) == Approx(direct_then_ring).epsilon(0.01));
    // A tree in the first dimension reduces whole: the ring then handles all n.
    const AlgorithmPerDimension tree_first{AllReduceAlgorithm::tree, AllReduceAlgorithm::ring};
    const double tree_then_ring = 2 * 3 * (2 * L1 + nn / B1) + 2 * 3 * (L2 + nn / (4 * B2));
    CHECK(replayed_s(t, CollectiveOp::all_reduce, tree_first, n) == Approx(tree_then_ring).epsilon(0.01));
    // Reduce-scatter and all-gather are each half of the all-reduce's dimensions.
    for (const CollectiveOp op : {CollectiveOp::reduce_scatter, CollectiveOp::all_gather}) {
        CAPTURE(to_string(op));
        CHECK(replayed_s(t, op, mixed, n) == Approx(direct_then_ring / 2).epsilon(0.01));
    }
    // An all-to-all exchanges the whole buffer in each dimension: direct through the switch, then
    // pairwise round the ring of 4, whose step to the opposite node crosses two hops on links no
    // other message of that step uses (no closed form is claimed for rings beyond 3).
    const AlgorithmPerDimension a2a{AllReduceAlgorithm::direct, AllReduceAlgorithm::ring};
    CHECK(!closed_form_seconds(t, CollectiveOp::all_to_all, a2a, all_nodes(t), n));
    CHECK(replayed_s(t, CollectiveOp::all_to_all, a2a, n) ==
          Approx((2 * L1 + 7.0 / 8 * nn / B1) + (4 * L2 + 3 * nn / (4 * B2))).epsilon(0.01));
    // flat_ring ignores the dimensions: one ring over all 32 nodes in id order.
    CHECK(replayed_s(t, CollectiveOp::all_reduce, {AllReduceAlgorithm::flat_ring}, n) >
          replayed_s(t, CollectiveOp::all_reduce, {AllReduceAlgorithm::ring}, n));
}

TEST_CASE("ring over a 3-D torus and per-dimension halving-doubling meet their forms", "[interconnect][collective]") {
    const Topology t = Topology::torus3d(4, 4, 4, kLink);
    for (const std::uint64_t n : {std::uint64_t{1} << 10, std::uint64_t{1} << 28}) {
        CAPTURE(n);
        const double form =
            *closed_form_seconds(t, CollectiveOp::all_reduce, {AllReduceAlgorithm::ring}, all_nodes(t), n);
        const double nn = static_cast<double>(n);
        const double expected = 2 * 3 * (500e-9 + nn / (4 * 100e9)) + 2 * 3 * (500e-9 + nn / (16 * 100e9)) +
                                2 * 3 * (500e-9 + nn / (64 * 100e9));
        CHECK(form == Approx(expected).epsilon(1e-9));
        CHECK(replayed_s(t, CollectiveOp::all_reduce, {AllReduceAlgorithm::ring}, n) == Approx(form).epsilon(0.02));
    }
    // Halving-doubling on rings of 4 has no closed form (its far partner is two hops away)...
    CHECK(!closed_form_seconds(t, CollectiveOp::all_reduce, {AllReduceAlgorithm::halving_doubling}, all_nodes(t), 1));
    // ...and the two partner orders differ in the first step's partner: rank 0 of 8 meets rank 4
    // first (farthest) or rank 1 (nearest), and rank 0 ends holding chunk 0 either way.
    const Topology ring8 = Topology::ring(8, kLink);
    for (const auto& [algorithm, partner] : {std::pair{AllReduceAlgorithm::halving_doubling, 4},
                                             std::pair{AllReduceAlgorithm::halving_doubling_nearest, 1}}) {
        std::vector<NodeProgram> programs(8);
        simulated_collective(ring8, CollectiveOp::reduce_scatter, {algorithm}, programs, all_nodes(ring8), 1024, 0, 0);
        REQUIRE(std::holds_alternative<Send>(programs[0].ops.front()));
        CHECK(std::get<Send>(programs[0].ops.front()).peer == NodeId(static_cast<std::size_t>(partner)));
        CHECK(algorithm_of(algorithm).owned_chunk(0, 8) == 0);
    }
    CHECK(algorithm_of(AllReduceAlgorithm::halving_doubling_nearest).owned_chunk(1, 8) == 4);
    // What each rank holds after a reduce-scatter of 7 bytes over 4 adds up to the 7 bytes, the
    // halving's segments (1, 2, 2, 2 farthest first) as it sends them.
    for (const AllReduceAlgorithm a : kAllReduceAlgorithms) {
        if (!algorithm_of(a).scatters(4)) continue;
        CAPTURE(to_string(a));
        std::uint64_t total = 0;
        for (std::size_t i = 0; i < 4; ++i) total += algorithm_of(a).owned_bytes(7, i, 4);
        CHECK(total == 7);
    }
    CHECK(algorithm_of(AllReduceAlgorithm::halving_doubling).owned_bytes(7, 0, 4) == 1);
    CHECK(algorithm_of(AllReduceAlgorithm::ring).owned_bytes(7, 3, 4) == 2);  // rank 3 holds chunk 0
}

TEST_CASE("collectives that do not exist are refused with the reason", "[interconnect][collective]") {
    const Topology sw = Topology::switch_star(6, kLink);
    const auto why = [](const Topology& t, CollectiveOp op, const AlgorithmPerDimension& a) {
        return unsupported(t, op, a, all_nodes(t)).value_or("");
    };
    CHECK_THAT(why(sw, CollectiveOp::reduce_scatter, {AllReduceAlgorithm::tree}),
               Catch::Contains("reduce_scatter needs an algorithm that splits") && Catch::Contains("tree"));
    CHECK_THAT(why(sw, CollectiveOp::all_gather, {AllReduceAlgorithm::halving_doubling}),
               Catch::Contains("power of two"));
    CHECK_THAT(why(sw, CollectiveOp::all_to_all, {AllReduceAlgorithm::tree}),
               Catch::Contains("all_to_all runs with direct or ring"));
    CHECK_THAT(why(sw, CollectiveOp::all_reduce, {AllReduceAlgorithm::ring, AllReduceAlgorithm::direct}),
               Catch::Contains("2 algorithms (one per dimension)"));
    CHECK(why(sw, CollectiveOp::all_reduce, {AllReduceAlgorithm::halving_doubling}).empty());  // folds
    std::vector<NodeProgram> programs(6);
    CHECK_THROWS_AS(simulated_collective(sw, CollectiveOp::reduce_scatter, {AllReduceAlgorithm::tree}, programs,
                                         all_nodes(sw), 64, 0, 0),
                    std::invalid_argument);
}
