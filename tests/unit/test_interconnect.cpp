// SPDX-License-Identifier: MIT
// The interconnect: link timing, routing over each topology, contention, collective schedules
// timed by the cluster executor against their alpha-beta formulas, and the executor's own
// accounting and error reports.
#include <catch2/catch.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <cstdio>
#include <stdexcept>

#include "cluster/cluster.h"
#include "planner/gradient_sync.h"
#include "interconnect/all_reduce.h"
#include "interconnect/collective_cost.h"
#include "interconnect/collectives.h"
#include "interconnect/link.h"
#include "interconnect/network.h"
#include "interconnect/program.h"
#include "interconnect/replay.h"
#include "interconnect/topology.h"
#include "support/systemc_fixture.h"

using namespace fastsim;
using interconnect::ChannelId;
using interconnect::Compute;
using interconnect::LinkParams;
using interconnect::Network;
using interconnect::NodeProgram;
using interconnect::Recv;
using interconnect::Send;
using interconnect::Topology;

namespace {

/// 100 GB/s (8e11 bits/s: 10 ps per byte), 500 ns, 1 pJ/bit.
const LinkParams kLink{100.0, 500.0, 1.0};
constexpr std::uint64_t kAlphaPs = 500'000;
constexpr std::uint64_t kPsPerByte = 10;
constexpr std::uint64_t kMB = 1'000'000;

constexpr Picoseconds ps(std::uint64_t count) { return Picoseconds(count); }

/// The vertices a route visits, src first.
std::vector<std::size_t> vertices_of(const Topology& t, std::size_t src, std::size_t dst) {
    std::vector<std::size_t> out{src};
    for (const ChannelId c : t.route(src, dst)) out.push_back(t.channel(c).to);
    return out;
}

std::vector<NodeId> iota_ranks(std::size_t p) {
    std::vector<NodeId> r;
    for (std::size_t i = 0; i < p; ++i) r.emplace_back(i);
    return r;
}

std::vector<NodeId> nodes(std::initializer_list<std::size_t> ids) {
    std::vector<NodeId> r;
    for (const std::size_t i : ids) r.emplace_back(i);
    return r;
}

/// One cluster run under a kernel of its own, for test cases that run several.
cluster::ClusterResult run_fresh(const Topology& t, const std::vector<NodeProgram>& programs) {
    test::FreshSimContext kernel;
    return cluster::run_cluster(t, programs);
}

}  // namespace

TEST_CASE("link timing: occupancy is ceil(bits * 1e12 / bits_per_s) ps, latency rounds to ps once", "[interconnect]") {
    const auto t = interconnect::link_timing(kLink);
    CHECK(t.bits_per_s == 800'000'000'000ull);
    CHECK(t.latency_ps.count() == kAlphaPs);
    CHECK(interconnect::occupancy_ps(kMB, t.bits_per_s).count() == 10'000'000);  // 1 MB at 100 GB/s = 10 us
    CHECK(interconnect::occupancy_ps(1, 3'000'000'000ull).count() == 2667);      // 8e12 / 3e9 = 2666.67, rounded up
    CHECK(interconnect::occupancy_ps(0, t.bits_per_s).count() == 0);
    const auto hgx = interconnect::link_timing({12.5, 936.25, 0.0});
    CHECK(hgx.bits_per_s == 100'000'000'000ull);
    CHECK(hgx.latency_ps.count() == 936'250);
    CHECK_THROWS_AS(interconnect::link_timing({0.0, 1.0, 0.0}), std::invalid_argument);
    CHECK_THROWS_AS(interconnect::link_timing({1.0, -1.0, 0.0}), std::invalid_argument);
    CHECK_THROWS_AS(interconnect::link_timing({NAN, 1.0, 0.0}), std::invalid_argument);
    CHECK_THROWS_AS(interconnect::occupancy_ps(~std::uint64_t{0}, 1), std::overflow_error);
}

TEST_CASE("builders: link and vertex counts of each topology", "[interconnect]") {
    CHECK(Topology::ring(1, kLink).link_count() == 0);
    CHECK(Topology::ring(2, kLink).link_count() == 1);
    CHECK(Topology::ring(5, kLink).link_count() == 5);
    CHECK(Topology::fully_connected(5, kLink).link_count() == 10);
    const Topology star = Topology::switch_star(6, kLink);
    CHECK(star.link_count() == 6);
    CHECK(star.vertex_count() == 7);
    CHECK(Topology::torus2d(4, 4, kLink).link_count() == 32);
    CHECK(Topology::torus2d(2, 3, kLink).link_count() == 9);  // 2 rows x 3 + 3 cols x 1
    CHECK(Topology::torus2d(2, 2, kLink).link_count() == 4);
    CHECK(Topology::torus2d(1, 4, kLink).link_count() == 4);
    CHECK(Topology::torus2d(1, 1, kLink).link_count() == 0);
    const Topology htree = Topology::tree(8, 2, kLink);
    CHECK(htree.vertex_count() == 15);  // 4 + 2 + 1 switches
    CHECK(htree.link_count() == 14);
    const Topology wide = Topology::tree(5, 4, kLink);
    CHECK(wide.vertex_count() == 8);  // 2 leaf switches + root
    CHECK(wide.link_count() == 7);
    CHECK(Topology::tree(3, 4, kLink).vertex_count() == 4);
    CHECK_THROWS_AS(Topology::ring(0, kLink), std::invalid_argument);
    CHECK_THROWS_AS(Topology::tree(4, 1, kLink), std::invalid_argument);
    for (const Topology& t : {Topology::ring(7, kLink), Topology::torus2d(3, 5, kLink), Topology::tree(9, 3, kLink),
                              Topology::switch_star(4, kLink)})
        CHECK(t.unreachable_nodes().empty());
}

TEST_CASE("network: one hop takes latency + occupancy exactly, and stats count it", "[interconnect]") {
    const Topology t = Topology::ring(2, kLink);
    Network net(t);
    CHECK(net.transfer(0, 1, kMB, ps(1000)).count() == 1000 + kAlphaPs + kMB * kPsPerByte);
    const ChannelId c = t.route(0, 1).at(0);
    CHECK(net.stats()[c].busy_ps.count() == kMB * kPsPerByte);
    CHECK(net.stats()[c].bytes == kMB);
    CHECK(net.stats()[c].transfers == 1);
    CHECK(net.stats()[c].energy_pj == Approx(8e6));
    CHECK(net.transfer(1, 1, kMB, ps(77)).count() == 77);         // self: no link
    CHECK(net.transfer(1, 0, 0, ps(5)).count() == 5 + kAlphaPs);  // zero bytes: latency only
    net.reset();
    CHECK(net.stats()[c].bytes == 0);
    CHECK(net.free_at_ps(c) == ps(0));
}

TEST_CASE("network: a multi-hop path takes h latencies + one occupancy (cut-through)", "[interconnect]") {
    const Topology ring = Topology::ring(8, kLink);
    CHECK(vertices_of(ring, 0, 3) == std::vector<std::size_t>{0, 1, 2, 3});
    CHECK(vertices_of(ring, 0, 5) == std::vector<std::size_t>{0, 7, 6, 5});     // the short way round
    CHECK(vertices_of(ring, 0, 4) == std::vector<std::size_t>{0, 1, 2, 3, 4});  // tie: lower predecessor id
    Network net(ring);
    CHECK(net.transfer(0, 5, kMB, ps(0)).count() == 3 * kAlphaPs + kMB * kPsPerByte);

    const Topology torus = Topology::torus2d(4, 4, kLink);
    CHECK(torus.hops(0, 10) == 4);  // (0,0) -> (2,2)
    CHECK(torus.hops(0, 15) == 2);  // (0,0) -> (3,3) by both wraps
    CHECK(torus.hops(5, 6) == 1);
    Network tnet(torus);
    CHECK(tnet.transfer(0, 10, 2 * kMB, ps(100)).count() == 100 + 4 * kAlphaPs + 2 * kMB * kPsPerByte);
}

TEST_CASE("network: the slowest hop sets the tail, wherever it is on the path", "[interconnect]") {
    const LinkParams fast{100.0, 100.0, 0.0}, slow{10.0, 300.0, 0.0};  // 10 and 100 ps per byte
    Topology t(3);
    t.add_link(0, 1, fast);
    t.add_link(1, 2, slow);
    Network net(t);
    const std::uint64_t expected = 100'000 + 300'000 + kMB * 100;
    CHECK(net.transfer(0, 2, kMB, ps(0)).count() == expected);  // fast then slow
    net.reset();
    CHECK(net.transfer(2, 0, kMB, ps(0)).count() == expected);  // slow then fast: the tail cannot overtake
}

TEST_CASE("network: transfers sharing a channel serialise, opposite directions do not", "[interconnect]") {
    const Topology t = Topology::ring(5, kLink);
    Network net(t);
    const std::uint64_t first = net.transfer(0, 1, kMB, ps(0)).count();
    CHECK(first == kAlphaPs + kMB * kPsPerByte);
    CHECK(net.transfer(0, 1, kMB, ps(0)).count() == first + kMB * kPsPerByte);
    CHECK(net.transfer(1, 0, kMB, ps(0)).count() == first);  // the other direction of the same link
    // 4 -> 1 goes 4-0-1 (the short way round) and queues behind both transfers on 0 -> 1.
    CHECK(vertices_of(t, 4, 1) == std::vector<std::size_t>{4, 0, 1});
    CHECK(net.transfer(4, 1, kMB, ps(0)).count() == 2 * kMB * kPsPerByte + kAlphaPs + kMB * kPsPerByte);
}

TEST_CASE("network: the hop intervals of a transfer are each channel's reservation", "[interconnect][timeline]") {
    // 4 -> 1 goes 4-0-1. Hop 4->0 is free: [0, O). Hop 0->1 already carries a transfer until
    // O, so the head waits: [O, 2 O), and the tail arrives a latency later.
    const Topology t = Topology::ring(5, kLink);
    Network net(t);
    std::vector<interconnect::HopInterval> hops;
    const std::uint64_t occupancy = kMB * kPsPerByte;
    net.transfer(0, 1, kMB, ps(0), &hops);
    REQUIRE(hops.size() == 1);
    const ChannelId zero_to_one = hops[0].channel;
    CHECK(t.channel(zero_to_one).from == 0);
    CHECK(hops[0].start_ps.count() == 0);
    CHECK(hops[0].end_ps.count() == occupancy);
    const std::uint64_t arrival = net.transfer(4, 1, kMB, ps(0), &hops).count();
    REQUIRE(hops.size() == 2);  // cleared first
    CHECK(t.channel(hops[0].channel).from == 4);
    CHECK(hops[0].start_ps.count() == 0);
    CHECK(hops[0].end_ps.count() == occupancy);
    CHECK(hops[1].channel == zero_to_one);
    CHECK(hops[1].start_ps.count() == occupancy);
    CHECK(hops[1].end_ps.count() == 2 * occupancy);
    CHECK(arrival == hops[1].end_ps.count() + kAlphaPs);
}

TEST_CASE("routing: dimension order on rings and tori, both directions, ties split by coordinate parity",
          "[interconnect]") {
    // Ring of 4: half-way ties go up from an even node and down from an odd one, so the four
    // distance-2 messages use each of the eight channels once.
    const Topology ring = Topology::ring(4, kLink);
    CHECK(vertices_of(ring, 0, 2) == std::vector<std::size_t>{0, 1, 2});
    CHECK(vertices_of(ring, 2, 0) == std::vector<std::size_t>{2, 3, 0});
    CHECK(vertices_of(ring, 1, 3) == std::vector<std::size_t>{1, 0, 3});
    CHECK(vertices_of(ring, 3, 1) == std::vector<std::size_t>{3, 2, 1});
    std::vector<int> load(ring.channel_count(), 0);
    for (const auto& [a, b] : {std::pair{0, 2}, {2, 0}, {1, 3}, {3, 1}})
        for (const ChannelId c : ring.route(a, b)) ++load[c];
    CHECK(std::count(load.begin(), load.end(), 1) == 8);
    // 4 x 4 torus (id = row x 4 + col): columns first, then rows, each the short way round.
    const Topology torus = Topology::torus2d(4, 4, kLink);
    CHECK(vertices_of(torus, 0, 5) == std::vector<std::size_t>{0, 1, 5});
    CHECK(vertices_of(torus, 0, 15) == std::vector<std::size_t>{0, 3, 15});
    CHECK(torus.hops(0, 10) == 4);
    // A flat ring in row-major order over a 4 x 4 torus: its 16 steps use 16 distinct channels
    // (the row ends go down a row, then back round the row; no wrap channel twice).
    std::vector<int> used(torus.channel_count(), 0);
    for (std::size_t i = 0; i < 16; ++i)
        for (const ChannelId c : torus.route(i, (i + 1) % 16)) ++used[c];
    CHECK(*std::max_element(used.begin(), used.end()) == 1);
    // The same inside a group of a hierarchical topology (its channels renumbered).
    const Topology two = Topology::hierarchical({Topology::ring(4, kLink), Topology::ring(4, kLink)},
                                                interconnect::UpperKind::switch_star, kLink);
    CHECK(vertices_of(two, 7, 5) == std::vector<std::size_t>{7, 6, 5});
    CHECK(vertices_of(two, 5, 7) == std::vector<std::size_t>{5, 4, 7});
}

TEST_CASE("routing: least latency first, then fewer hops, then the lowest predecessor id", "[interconnect]") {
    Topology t(4);
    t.add_link(0, 1, {100.0, 1000.0, 0.0});  // direct but slow to start
    t.add_link(0, 3, {100.0, 100.0, 0.0});
    t.add_link(3, 1, {100.0, 100.0, 0.0});
    CHECK(vertices_of(t, 0, 1) == std::vector<std::size_t>{0, 3, 1});  // 200 ns beats 1000 ns
    t.add_link(0, 2, {100.0, 100.0, 0.0});
    t.add_link(2, 1, {100.0, 100.0, 0.0});
    CHECK(vertices_of(t, 0, 1) == std::vector<std::size_t>{0, 2, 1});  // equal: predecessor 2 < 3
    t.add_link(0, 1, {100.0, 200.0, 0.0});
    CHECK(vertices_of(t, 0, 1) == std::vector<std::size_t>{0, 1});  // equal latency: one hop wins
    for (int i = 0; i < 3; ++i) CHECK(t.route(0, 1) == t.route(0, 1));
    CHECK(Topology(t).route(1, 0) == t.route(1, 0));  // copies route alike
}

TEST_CASE("routing: tree hop counts go up to the common ancestor", "[interconnect]") {
    const Topology htree = Topology::tree(8, 2, kLink);
    CHECK(htree.hops(0, 1) == 2);
    CHECK(htree.hops(0, 3) == 4);
    CHECK(htree.hops(0, 7) == 6);
    CHECK(htree.hops(6, 7) == 2);
    const Topology t = Topology::tree(9, 3, kLink);  // 3 leaf switches under one root
    CHECK(t.hops(0, 2) == 2);
    CHECK(t.hops(0, 8) == 4);
}

TEST_CASE("routing: a 1024-node torus routes without all-pairs work", "[interconnect]") {
    const Topology t = Topology::torus2d(32, 32, kLink);
    const auto t0 = std::chrono::steady_clock::now();
    std::size_t total = 0;
    for (std::size_t dst = 0; dst < 1024; ++dst) total += t.hops(0, dst) + t.hops(dst, 0);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    CHECK(total == 2 * 32 * 32 * 16);  // mean 16 hops each way (8 per dimension)
    CHECK(t.hops(0, 1023) == 2);
    CHECK(seconds < 2.0);
}

TEST_CASE("hierarchical: fast groups joined at their gateways by a slower ring", "[interconnect]") {
    const LinkParams inner{400.0, 100.0, 0.5}, upper{25.0, 1000.0, 5.0};
    const std::vector<Topology> groups(3, Topology::switch_star(4, inner));
    const Topology t = Topology::hierarchical(groups, interconnect::UpperKind::ring, upper);
    CHECK(t.node_count() == 12);
    CHECK(t.vertex_count() == 15);  // switches 12, 13, 14
    CHECK(t.link_count() == 15);
    CHECK(t.gateways() == std::vector<std::size_t>{0, 4, 8});
    CHECK(vertices_of(t, 5, 10) == std::vector<std::size_t>{5, 13, 4, 8, 14, 10});
    CHECK(vertices_of(t, 1, 3) == std::vector<std::size_t>{1, 12, 3});  // stays inside its group
    Network net(t);
    // Four inner hops and one upper hop; the upper link is the bottleneck (40 ps per byte).
    CHECK(net.transfer(5, 10, kMB, ps(0)).count() == 4 * 100'000 + 1'000'000 + kMB * 40);
    CHECK(t.channel(t.route(5, 10)[2]).params.bandwidth_gb_per_s == 25.0);

    const Topology star_of_rings = Topology::hierarchical({Topology::ring(4, inner), Topology::ring(3, inner)},
                                                          interconnect::UpperKind::switch_star, upper);
    CHECK(star_of_rings.node_count() == 7);
    CHECK(star_of_rings.vertex_count() == 8);
    CHECK(vertices_of(star_of_rings, 2, 5) == std::vector<std::size_t>{2, 1, 0, 7, 4, 5});
}

TEST_CASE("canonical ranks: interchangeable nodes renamed, and the collective replays the same", "[interconnect]") {
    // A fully connected group, a switch group and a torus under a slow ring; gateways 0, 5, 10.
    const LinkParams inner{400.0, 100.0, 0.5}, upper{25.0, 1000.0, 5.0};
    const Topology t = Topology::hierarchical(
        {Topology::fully_connected(5, inner), Topology::switch_star(5, inner), Topology::torus2d(2, 3, inner)},
        interconnect::UpperKind::ring, upper);
    const auto ids = [](std::initializer_list<std::size_t> v) {
        std::vector<NodeId> out;
        for (const std::size_t i : v) out.emplace_back(i);
        return out;
    };
    // Gateways and torus nodes keep their ids; a group's other nodes become its first ones in
    // the same order, each at its position in the list.
    CHECK(t.canonical_ranks(ids({4, 2, 14, 9, 5, 12})) == ids({2, 1, 14, 6, 5, 12}));
    CHECK(t.canonical_ranks(ids({0, 3, 8, 6})) == ids({0, 1, 7, 6}));
    CHECK(t.canonical_ranks(ids({11, 13})) == ids({11, 13}));
    // A link of one node's own makes it unlike the rest of its group, and splits the run.
    Topology extra = t;
    extra.add_link(3, 12, inner);
    CHECK(extra.canonical_ranks(ids({3, 4})) == ids({3, 4}));
    CHECK(extra.canonical_ranks(ids({2, 4, 1})) == ids({2, 4, 1}));
    CHECK(extra.canonical_ranks(ids({2, 4})) == ids({1, 4}));

    // Every algorithm over random rank sets costs exactly what it costs over their canonical form.
    std::mt19937 rng(7);
    for (int trial = 0; trial < 40; ++trial) {
        std::vector<NodeId> ranks;
        for (std::size_t n = 0; n < t.node_count(); ++n)
            if (rng() % 2) ranks.emplace_back(n);
        if (ranks.size() < 2) continue;
        std::shuffle(ranks.begin(), ranks.end(), rng);
        const std::vector<NodeId> canonical = t.canonical_ranks(ranks);
        for (const interconnect::AllReduceAlgorithm a :
             {interconnect::AllReduceAlgorithm::ring, interconnect::AllReduceAlgorithm::tree,
              interconnect::AllReduceAlgorithm::halving_doubling, interconnect::AllReduceAlgorithm::direct}) {
            const interconnect::CollectiveCost c = interconnect::all_reduce_cost(t, ranks, {a});
            const interconnect::CollectiveCost d = interconnect::all_reduce_cost(t, canonical, {a});
            CHECK(c.latency_s == d.latency_s);
            CHECK(c.seconds_per_byte == d.seconds_per_byte);
        }
    }
}

TEST_CASE("topology: nodes that cannot reach node 0 are reported", "[interconnect]") {
    Topology t(5, 1);
    t.add_link(0, 5, kLink);
    t.add_link(1, 5, kLink);
    t.add_link(2, 3, kLink);
    CHECK(t.unreachable_nodes() == std::vector<std::size_t>{2, 3, 4});
    try {
        t.check_connected();
        FAIL("check_connected accepted a disconnected topology");
    } catch (const std::invalid_argument& e) {
        CHECK(std::string(e.what()).find("2, 3, 4") != std::string::npos);
    }
    CHECK_THROWS_AS(t.route(0, 4), std::invalid_argument);
    CHECK_THROWS_AS(t.add_link(0, 0, kLink), std::invalid_argument);
    CHECK_THROWS_AS(t.add_link(0, 6, kLink), std::invalid_argument);
}

TEST_CASE("collectives: schedules have the documented messages and unique tags", "[interconnect]") {
    std::vector<NodeProgram> programs(5);
    const std::uint64_t next = interconnect::ring_all_reduce(programs, nodes({0, 1, 2, 3, 4}), 1003, 10, 7);
    CHECK(next == 10 + 8);
    std::uint64_t sent = 0;
    for (const auto& p : programs) {
        CHECK(p.ops.size() == 16);  // 8 steps, a Send and a Recv each
        for (const auto& op : p.ops)
            if (const auto* s = std::get_if<Send>(&op)) {
                sent += s->bytes;
                CHECK(s->label == 7);
            }
    }
    CHECK(sent == 2 * 4 * 1003);  // every rank sends every chunk but one, twice
    CHECK(interconnect::chunk_bytes(1003, 5, 2) == 201);
    CHECK(interconnect::chunk_bytes(1003, 5, 3) == 200);
    CHECK(interconnect::tree_all_reduce(programs, nodes({0, 1, 2, 3, 4}), 1, 100, 0) == 106);
    CHECK(interconnect::all_to_all(programs, nodes({4, 3}), 1, 200, 0) == 201);
    CHECK(interconnect::ring_all_reduce(programs, nodes({3}), 1, 300, 0) == 300);
    CHECK_THROWS_AS(interconnect::ring_all_reduce(programs, nodes({0, 0}), 1, 0, 0), std::invalid_argument);
    CHECK_THROWS_AS(interconnect::all_to_all(programs, nodes({0, 5}), 1, 0, 0), std::invalid_argument);
}

TEST_CASE("collectives: ring all-reduce on a ring is 2(p-1) alpha + 2(p-1)/p n beta", "[interconnect]") {
    for (const std::size_t p : {2, 4, 8, 5}) {
        for (const std::uint64_t n : {8'400'000ull, 1'000'003ull}) {
            CAPTURE(p, n);
            const Topology t = Topology::ring(p, kLink);
            std::vector<NodeProgram> programs(p);
            interconnect::ring_all_reduce(programs, iota_ranks(p), n, 0, 1);
            const auto r = run_fresh(t, programs);
            const double expected =
                2.0 * double(p - 1) * kAlphaPs + 2.0 * double(p - 1) / double(p) * double(n) * kPsPerByte;
            CHECK(double(r.end_ps.count()) == Approx(expected).epsilon(0.01));
            if (n % p == 0) CHECK(double(r.end_ps.count()) == expected);  // exact when chunks are equal
            CHECK(r.labels.at(1).last_end_ps.count() == r.end_ps.count());
        }
    }
}

TEST_CASE("collectives: ring reduce-scatter and all-gather are (p-1) alpha + (p-1)/p n beta", "[interconnect]") {
    const std::uint64_t n = 8'400'000;
    for (const std::size_t p : {2, 5, 8}) {
        CAPTURE(p);
        const Topology t = Topology::ring(p, kLink);
        const double expected = double(p - 1) * kAlphaPs + double(p - 1) / double(p) * double(n) * kPsPerByte;
        std::vector<NodeProgram> rs(p), ag(p);
        interconnect::ring_reduce_scatter(rs, iota_ranks(p), n, 0, 0);
        interconnect::ring_all_gather(ag, iota_ranks(p), n, 0, 0);
        CHECK(double(run_fresh(t, rs).end_ps.count()) == Approx(expected).epsilon(0.01));
        CHECK(double(run_fresh(t, ag).end_ps.count()) == Approx(expected).epsilon(0.01));
    }
}

TEST_CASE("collectives: tree all-reduce on a fully connected network is 2 log2 p (alpha + n beta)", "[interconnect]") {
    const std::uint64_t n = 3 * kMB;
    const double step = kAlphaPs + double(n) * kPsPerByte;
    for (const std::size_t p : {2, 4, 8, 16}) {
        CAPTURE(p);
        std::vector<NodeProgram> programs(p);
        interconnect::tree_all_reduce(programs, iota_ranks(p), n, 0, 0);
        CHECK(double(run_fresh(Topology::fully_connected(p, kLink), programs).end_ps.count()) ==
              Approx(2.0 * std::log2(double(p)) * step).epsilon(0.01));
    }
    // Not a power of two: the binomial tree is floor(log2 p) deep, and sends to different
    // children use different links, so p = 5 and p = 7 take 2 * 2 steps, not 2 * ceil(log2 p).
    for (const std::size_t p : {5, 7}) {
        CAPTURE(p);
        std::vector<NodeProgram> programs(p);
        interconnect::tree_all_reduce(programs, iota_ranks(p), n, 0, 0);
        CHECK(double(run_fresh(Topology::fully_connected(p, kLink), programs).end_ps.count()) == Approx(4.0 * step));
    }
}

TEST_CASE("collectives: pairwise all-to-all on a switch is (p-1) alpha + (p-1)/p n beta", "[interconnect]") {
    const std::uint64_t n = 4'200'000;
    for (const std::size_t p : {2, 4, 7}) {
        CAPTURE(p);
        const Topology t = Topology::switch_star(p, kLink);
        std::vector<NodeProgram> programs(p);
        interconnect::all_to_all(programs, iota_ranks(p), n, 0, 0);
        const auto r = run_fresh(t, programs);
        const double alpha = 2.0 * kAlphaPs;  // node -> switch -> node
        CHECK(double(r.end_ps.count()) ==
              Approx(double(p - 1) * alpha + double(p - 1) / double(p) * double(n) * kPsPerByte));
        for (std::size_t c = 0; c < t.channel_count(); ++c) CHECK(r.channels[c].bytes == (p - 1) * n / p);
    }
}

TEST_CASE_METHOD(test::FreshSimContext, "run_cluster: a compute-send pipeline gives the hand-computed times",
                 "[interconnect]") {
    const Topology t = Topology::ring(2, kLink);
    std::vector<NodeProgram> programs(2);
    programs[0].ops = {Compute{ps(2'000'000), 1}, Send{NodeId(1), kMB, 7, 2}, Compute{ps(3'000'000), 1},
                       Recv{NodeId(1), 8, 2}};
    programs[1].ops = {Recv{NodeId(0), 7, 2}, Compute{ps(1'000'000), 3}, Send{NodeId(0), kMB, 8, 2}};
    const auto r = cluster::run_cluster(t, programs);
    const std::uint64_t hop = kAlphaPs + kMB * kPsPerByte;  // 10.5 us
    // Node 0 sends at 2 us; node 1 has it at 12.5 us, computes 1 us, answers; back at 24 us.
    CHECK(r.end_ps.count() == 2'000'000 + hop + 1'000'000 + hop);
    CHECK(r.nodes[0].compute_ps.count() == 5'000'000);
    CHECK(r.nodes[0].wait_ps.count() == r.end_ps.count() - 5'000'000);
    CHECK(r.nodes[0].finish_ps.count() == r.end_ps.count());
    CHECK(r.nodes[1].compute_ps.count() == 1'000'000);
    CHECK(r.nodes[1].wait_ps.count() == 2'000'000 + hop);
    CHECK(r.nodes[1].finish_ps.count() == 3'000'000 + hop);
    CHECK(r.nodes[0].send_count == 1);
    CHECK(r.nodes[0].bytes_sent == kMB);
    CHECK(r.nodes[0].bytes_received == kMB);
    CHECK(r.labels.size() == 3);
    CHECK(r.labels.at(1).first_start_ps.count() == 0);
    CHECK(r.labels.at(1).last_end_ps.count() == 5'000'000);
    CHECK(r.labels.at(1).compute_ps.count() == 5'000'000);
    CHECK(r.labels.at(2).first_start_ps.count() == 0);  // node 1's Recv is posted at 0
    CHECK(r.labels.at(2).last_end_ps.count() == r.end_ps.count());
    CHECK(r.labels.at(2).wait_ps.count() == r.nodes[0].wait_ps.count() + r.nodes[1].wait_ps.count());
    CHECK(r.labels.at(2).bytes_sent == 2 * kMB);
    CHECK(r.labels.at(3).first_start_ps.count() == 2'000'000 + hop);
    std::uint64_t channel_bytes = 0;
    for (const auto& c : r.channels) channel_bytes += c.bytes;
    CHECK(channel_bytes == 2 * kMB);
}

namespace {

struct RecordingCluster : cluster::ClusterRecorder {
    std::vector<cluster::OpSpan> ops;
    std::vector<cluster::ChannelSpan> channels;
    void op(const cluster::OpSpan& span) override { ops.push_back(span); }
    void channel(const cluster::ChannelSpan& span) override { channels.push_back(span); }
};

}  // namespace

TEST_CASE_METHOD(test::FreshSimContext, "run_cluster: a recorder sees every op and channel span of the pipeline",
                 "[interconnect][timeline]") {
    // The pipeline above: node 0 computes 2 us, sends, computes 3 us, waits for the answer;
    // node 1 waits, computes 1 us, answers. One hop is 0.5 us latency + 10 us occupancy.
    const Topology t = Topology::ring(2, kLink);
    std::vector<NodeProgram> programs(2);
    programs[0].ops = {Compute{ps(2'000'000), 1}, Send{NodeId(1), kMB, 7, 2}, Compute{ps(3'000'000), 1},
                       Recv{NodeId(1), 8, 2}};
    programs[1].ops = {Recv{NodeId(0), 7, 2}, Compute{ps(1'000'000), 3}, Send{NodeId(0), kMB, 8, 2}};
    RecordingCluster recorder;
    const auto r = cluster::run_cluster(t, programs, &recorder);
    const std::uint64_t occupancy = kMB * kPsPerByte, hop = kAlphaPs + occupancy;
    const std::uint64_t answer = 2'000'000 + hop + 1'000'000;  // node 1 sends back
    using K = cluster::OpKind;
    std::vector<cluster::OpSpan> node0, node1;
    for (const auto& op : recorder.ops) (op.node == NodeId(0) ? node0 : node1).push_back(op);
    // A Send is reported when its message arrives, after node 0's next Compute: in program order
    // otherwise.
    CHECK((node0.size() > 2 && node0[1].kind == K::compute && node0[2].kind == K::send));
    const auto by_index = [](const cluster::OpSpan& a, const cluster::OpSpan& b) { return a.op_index < b.op_index; };
    std::stable_sort(node0.begin(), node0.end(), by_index);
    std::stable_sort(node1.begin(), node1.end(), by_index);
    REQUIRE(node0.size() == 4);
    REQUIRE(node1.size() == 3);
    CHECK((node0[0].kind == K::compute && node0[0].label == 1 && node0[0].start_ps.count() == 0 &&
           node0[0].end_ps.count() == 2'000'000));
    CHECK((node0[1].kind == K::send && node0[1].peer == NodeId(1) && node0[1].bytes == kMB && node0[1].tag == 7));
    CHECK((node0[1].start_ps.count() == 2'000'000 && node0[1].end_ps.count() == 2'000'000 + hop));
    CHECK((node0[2].kind == K::compute && node0[2].start_ps.count() == 2'000'000 &&
           node0[2].end_ps.count() == 5'000'000));
    CHECK((node0[3].kind == K::recv && node0[3].op_index == 3 && node0[3].start_ps.count() == 5'000'000));
    CHECK(node0[3].end_ps.count() == r.end_ps.count());
    CHECK((node1[0].kind == K::recv && node1[0].peer == NodeId(0) && node1[0].start_ps.count() == 0 &&
           node1[0].end_ps.count() == 2'000'000 + hop));
    CHECK((node1[1].kind == K::compute && node1[1].label == 3 && node1[1].end_ps.count() == answer));
    CHECK((node1[2].kind == K::send && node1[2].start_ps.count() == answer && node1[2].end_ps.count() == answer + hop));
    REQUIRE(recorder.channels.size() == 2);
    const cluster::ChannelSpan& out = recorder.channels[0];
    CHECK((out.src == NodeId(0) && out.dst == NodeId(1) && out.bytes == kMB && out.label == 2));
    CHECK(t.channel(out.channel).from == 0);
    CHECK((out.start_ps.count() == 2'000'000 && out.end_ps.count() == 2'000'000 + occupancy));
    const cluster::ChannelSpan& back = recorder.channels[1];
    CHECK((back.src == NodeId(1) && back.dst == NodeId(0) && back.start_ps.count() == answer &&
           back.end_ps.count() == answer + occupancy));
    CHECK(t.channel(back.channel).from == 1);
}

TEST_CASE("run_cluster: the comm stream overlaps compute, and WaitFor resumes at the Signal", "[interconnect]") {
    // Node 0 computes 5 us, signals its comm stream, which exchanges 1 MB with node 1 (one hop:
    // 0.5 us + 10 us) while the main stream computes on; the main stream then waits for the
    // exchange. Node 1's comm stream sends at once and receives node 0's message at 15.5 us.
    using interconnect::Signal;
    using interconnect::WaitFor;
    const Topology t = Topology::ring(2, kLink);
    const std::uint64_t hop = kAlphaPs + kMB * kPsPerByte;
    for (const std::uint64_t second_compute : {std::uint64_t{10'000'000}, std::uint64_t{2'000'000}}) {
        std::vector<NodeProgram> programs(2);
        programs[0].ops = {Compute{ps(5'000'000), 1}, Signal{1, 1}, Compute{ps(second_compute), 1}, WaitFor{2, 2}};
        programs[0].comm_ops = {WaitFor{1, 2}, Send{NodeId(1), kMB, 7, 2}, Recv{NodeId(1), 8, 2}, Signal{2, 2}};
        programs[1].ops = {Compute{ps(1'000'000), 3}};
        programs[1].comm_ops = {Send{NodeId(0), kMB, 8, 2}, Recv{NodeId(0), 7, 2}};
        RecordingCluster recorder;
        fastsim::test::FreshSimContext fresh;
        const auto r = cluster::run_cluster(t, programs, &recorder);
        const std::uint64_t exchanged = hop;  // node 1's message, sent at 0, is there at 10.5 us
        const std::uint64_t main_done = 5'000'000 + second_compute;
        INFO("second compute " << second_compute << " ps");
        CHECK(r.nodes[0].compute_ps.count() == main_done);
        CHECK(r.nodes[0].wait_ps.count() == (main_done < exchanged ? exchanged - main_done : 0));
        CHECK(r.nodes[0].finish_ps.count() == std::max(main_done, exchanged));
        CHECK(r.nodes[1].wait_ps.count() == 0);  // the comm stream's blocking is not the node waiting
        CHECK(r.nodes[1].finish_ps.count() == 5'000'000 + hop);
        CHECK(r.end_ps.count() == 5'000'000 + hop);
        CHECK(r.labels.at(2).wait_ps.count() == r.nodes[0].wait_ps.count());
        std::size_t comm_spans = 0;
        for (const auto& op : recorder.ops) comm_spans += op.stream == 1;
        CHECK(comm_spans == 6);
    }
}

TEST_CASE("run_cluster: a Recv with no Send is a deadlock naming node, op and tag", "[interconnect]") {
    const Topology t = Topology::ring(3, kLink);
    std::vector<NodeProgram> programs(3);
    programs[0].ops = {Compute{ps(10), 0}};
    programs[1].ops = {Compute{ps(10), 0}, Recv{NodeId(2), 42, 0}};
    try {
        run_fresh(t, programs);
        FAIL("a Recv without a Send ran to the end");
    } catch (const std::runtime_error& e) {
        const std::string what = e.what();
        CAPTURE(what);
        CHECK(what.find("node 1 blocked at op 1") != std::string::npos);
        CHECK(what.find("from node 2, tag 42") != std::string::npos);
        CHECK(what.find("no matching Send") != std::string::npos);
    }
    // Two Recvs first, then the Sends: each waits for the other.
    programs[0].ops = {Recv{NodeId(1), 1, 0}, Send{NodeId(1), 8, 2, 0}};
    programs[1].ops = {Recv{NodeId(0), 2, 0}, Send{NodeId(0), 8, 1, 0}};
    programs[2].ops.clear();
    CHECK_THROWS_WITH(run_fresh(t, programs), Catch::Contains("deadlock") && Catch::Contains("never reached"));
}

TEST_CASE("run_cluster: an event signalled twice is refused, and a WaitFor never signalled is a deadlock",
          "[interconnect]") {
    // Its own test case, so its own process: under AddressSanitizer an exception after a run
    // that left SystemC coroutines blocked is misreported (docs/robustness.md, "Sanitizers").
    const Topology t = Topology::ring(3, kLink);
    std::vector<NodeProgram> programs(3);
    programs[0].ops = {Compute{ps(10), 0}};
    programs[0].comm_ops = {interconnect::Signal{5, 0}, interconnect::Signal{5, 0}};
    CHECK_THROWS_WITH(run_fresh(t, programs), Catch::Contains("signalled twice"));
    programs[0].comm_ops = {interconnect::WaitFor{5, 0}};
    CHECK_THROWS_WITH(run_fresh(t, programs),
                      Catch::Contains("node 0 (comm stream) blocked at op 0 (WaitFor event 5; no Signal)"));
}

TEST_CASE("run_cluster: unreceived messages and malformed programs are reported", "[interconnect]") {
    const Topology t = Topology::ring(2, kLink);
    std::vector<NodeProgram> programs(2);
    programs[0].ops = {Send{NodeId(1), 100, 5, 0}};
    CHECK_THROWS_WITH(run_fresh(t, programs), Catch::Contains("node 0 to node 1, tag 5 was never received"));
    programs[0].ops = {Send{NodeId(1), 100, 5, 0}, Send{NodeId(1), 100, 5, 0}};
    programs[1].ops = {Recv{NodeId(0), 5, 0}, Recv{NodeId(0), 5, 0}};
    CHECK_THROWS_AS(run_fresh(t, programs), std::invalid_argument);
    programs[0].ops = {Send{NodeId(2), 100, 5, 0}};
    CHECK_THROWS_AS(run_fresh(t, programs), std::invalid_argument);
    CHECK_THROWS_AS(run_fresh(t, std::vector<NodeProgram>(3)), std::invalid_argument);
    Topology split(2);
    programs[0].ops = {Send{NodeId(1), 100, 5, 0}};
    programs[1].ops = {Recv{NodeId(0), 5, 0}};
    CHECK_THROWS_WITH(run_fresh(split, programs), Catch::Contains("unreachable"));
}

TEST_CASE("run_cluster speed: 16 nodes x ~2000 ops of ring all-reduces and computes", "[.bench]") {
    const std::size_t p = 16;
    const Topology t = Topology::ring(p, kLink);
    std::vector<NodeProgram> programs(p);
    std::uint64_t tag = 0;
    for (std::uint32_t layer = 0; programs[0].ops.size() < 2000; ++layer) {
        for (auto& program : programs) program.ops.emplace_back(Compute{ps(1'000'000 + 1000 * layer), layer});
        tag = interconnect::ring_all_reduce(programs, iota_ranks(p), 4 * kMB, tag, layer);
    }
    std::size_t ops = 0;
    for (const auto& program : programs) ops += program.ops.size();
    double best = 1e9;
    for (int rep = 0; rep < 5; ++rep) {
        const auto t0 = std::chrono::steady_clock::now();
        const auto r = run_fresh(t, programs);
        best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        CHECK(r.end_ps.count() > 0);
    }
    std::printf("run_cluster: %zu nodes, %zu ops, best of 5: %.3f ms, %.1f ns/op\n", p, ops, best * 1e3,
                best * 1e9 / double(ops));
}

TEST_CASE("run_cluster speed: a 1 GiB ring all-reduce over a 32 x 32 torus, dimension by dimension", "[.bench]") {
    // 1,024 ranks: 4 phases of 32 lines of 32-rank rings, 127,000 messages, in SystemC.
    const Topology t = Topology::torus2d(32, 32, LinkParams{100.0, 500.0, 0.0});
    const std::size_t p = 1024;
    const std::uint64_t n = std::uint64_t{1} << 30;
    std::vector<NodeProgram> programs(p);
    interconnect::simulated_all_reduce(t, interconnect::AllReduceAlgorithm::ring, programs, iota_ranks(p), n, 0, 0);
    std::size_t ops = 0;
    for (const auto& program : programs) ops += program.ops.size();
    double best = 1e9, simulated_s = 0;
    for (int rep = 0; rep < 3; ++rep) {
        const auto t0 = std::chrono::steady_clock::now();
        const auto r = run_fresh(t, programs);
        best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        simulated_s = to_seconds(r.end_ps);
    }
    const double closed = 2 * 31 * (500e-9 + double(n) / (32 * 100e9)) + 2 * 31 * (500e-9 + double(n) / (1024 * 100e9));
    std::printf(
        "run_cluster: 32 x 32 torus ring all-reduce of 1 GiB: %zu ops, simulated %.6f s (closed form %.6f s), "
        "best of 3: %.3f s wall\n",
        ops, simulated_s, closed, best);
}

TEST_CASE("collectives: halving-doubling and direct all-reduce schedules", "[interconnect]") {
    // p = 6: ranks 4 and 5 fold into 0 and 1; 0..3 halve twice and double twice; then unfold.
    std::vector<NodeProgram> programs(6);
    const std::uint64_t n = 1001;
    CHECK(interconnect::halving_doubling_all_reduce(programs, iota_ranks(6), n, 10, 3) == 10 + 2 * 2 + 2);
    std::uint64_t core_sent = 0;
    for (std::size_t r = 0; r < 4; ++r)
        for (const auto& op : programs[r].ops)
            if (const auto* s = std::get_if<Send>(&op)) core_sent += s->bytes;
    // Each core rank sends all but its final quarter in the reduce-scatter and again in the
    // all-gather (4 ranks: 2 * 3n); ranks 0 and 1 also unfold n to ranks 4 and 5.
    CHECK(core_sent == 6 * n + 2 * n);
    for (std::size_t r : {4, 5}) CHECK(programs[r].ops.size() == 2);  // one Send (fold), one Recv (unfold)
    std::vector<NodeProgram> direct(4);
    CHECK(interconnect::direct_all_reduce(direct, iota_ranks(4), 4000, 0, 0) == 2);
    for (const auto& p : direct) CHECK(p.ops.size() == 2 * (3 + 3));
    CHECK(interconnect::all_reduce(interconnect::AllReduceAlgorithm::tree, programs, nodes({0, 1}), 8, 50, 0) == 52);
    CHECK(std::string(interconnect::to_string(interconnect::AllReduceAlgorithm::halving_doubling)) ==
          "halving_doubling");
}

TEST_CASE("collectives: halving-doubling on a fully connected network is 2 log2 p alpha + 2(p-1)/p n beta",
          "[interconnect]") {
    const std::uint64_t n = 8 * kMB;
    for (const std::size_t p : {2, 4, 8}) {
        CAPTURE(p);
        std::vector<NodeProgram> programs(p);
        interconnect::halving_doubling_all_reduce(programs, iota_ranks(p), n, 0, 0);
        const double expected =
            2 * std::log2(double(p)) * kAlphaPs + 2.0 * double(p - 1) / double(p) * double(n) * kPsPerByte;
        CHECK(double(run_fresh(Topology::fully_connected(p, kLink), programs).end_ps.count()) == Approx(expected));
    }
    // Direct on a fully connected network: 2 (alpha + n/p beta).
    for (const std::size_t p : {3, 4, 6}) {
        CAPTURE(p);
        std::vector<NodeProgram> programs(p);
        interconnect::direct_all_reduce(programs, iota_ranks(p), n, 0, 0);
        CHECK(double(run_fresh(Topology::fully_connected(p, kLink), programs).end_ps.count()) ==
              Approx(2.0 * (kAlphaPs + double(n) / double(p) * kPsPerByte)).epsilon(1e-6));
    }
}

TEST_CASE("collectives: the measured cost of every all-reduce against its simulated time", "[interconnect]") {
    const std::uint64_t n = 6 * kMB;
    struct Case {
        const char* name;
        Topology topology;
    };
    const std::vector<Case> cases{{"ring 8", Topology::ring(8, kLink)},
                                  {"ring 5", Topology::ring(5, kLink)},
                                  {"switch 6", Topology::switch_star(6, kLink)},
                                  {"fully connected 5", Topology::fully_connected(5, kLink)},
                                  {"torus 2x4", Topology::torus2d(2, 4, kLink)}};
    for (const Case& c : cases)
        for (const auto algorithm : interconnect::kAllReduceAlgorithms) {
            const std::size_t p = c.topology.node_count();
            std::vector<NodeProgram> programs(p);
            interconnect::simulated_all_reduce(c.topology, algorithm, programs, iota_ranks(p), n, 0, 0);
            const double simulated = double(run_fresh(c.topology, programs).end_ps.count()) * 1e-12;
            const double predicted =
                interconnect::all_reduce_cost(c.topology, iota_ranks(p), algorithm).seconds(double(n));
            INFO(c.name << ", " << interconnect::to_string(algorithm) << ": predicted " << predicted << " s, simulated "
                        << simulated << " s");
            // A flat ring on the 2 x 4 torus: its neighbours are one or more hops apart.
            const bool uneven_ring =
                algorithm == interconnect::AllReduceAlgorithm::flat_ring && std::string(c.name) == "torus 2x4";
            CHECK(predicted == Approx(simulated).epsilon(uneven_ring ? 0.05 : 0.02));
        }
    // Beyond kMaxReplayRanks the synchronous-step model: exact where no two messages of a step
    // share a channel (a ring on a ring, halving-doubling and tree on a fully connected network).
    const std::size_t p = interconnect::kMaxReplayRanks * 2;
    for (const auto& [topology, algorithm] :
         {std::pair{Topology::ring(p, kLink), interconnect::AllReduceAlgorithm::ring},
          std::pair{Topology::fully_connected(p, kLink), interconnect::AllReduceAlgorithm::halving_doubling},
          std::pair{Topology::fully_connected(p, kLink), interconnect::AllReduceAlgorithm::tree}}) {
        std::vector<NodeProgram> programs(p);
        interconnect::all_reduce(algorithm, programs, iota_ranks(p), n, 0, 0);
        const double simulated = double(run_fresh(topology, programs).end_ps.count()) * 1e-12;
        INFO(interconnect::to_string(algorithm) << " over " << p << " ranks");
        CHECK(interconnect::all_reduce_cost(topology, iota_ranks(p), algorithm).seconds(double(n)) ==
              Approx(simulated).epsilon(0.01));
    }
}

TEST_CASE("collectives: concurrent all-reduces share links and nodes as the cluster runs them", "[interconnect]") {
    // Two switch groups of 4 joined at their gateways by one slow link: the replica sets
    // {i, i + 4} all cross it, and {0, 1} x {1, 2} share node 1.
    const LinkParams inner{400.0, 100.0, 0.5}, upper{25.0, 1000.0, 5.0};
    const Topology t = Topology::hierarchical({Topology::switch_star(4, inner), Topology::switch_star(4, inner)},
                                              interconnect::UpperKind::switch_star, upper);
    interconnect::AllReduceChooser chooser(t, interconnect::AllReduceAlgorithm::ring);
    const std::uint64_t n = 4 * kMB;
    const auto simulated_ends = [&](const std::vector<std::vector<NodeId>>& sets) {
        std::vector<NodeProgram> programs(t.node_count());
        std::uint64_t tag = 0;
        for (const auto& set : sets)
            tag =
                interconnect::simulated_all_reduce(t, interconnect::AllReduceAlgorithm::ring, programs, set, n, tag, 0);
        const cluster::ClusterResult r = run_fresh(t, programs);
        std::vector<double> ends;
        for (const auto& set : sets) {
            double end = 0;
            for (const NodeId node : set) end = std::max(end, double(r.nodes[node.value()].finish_ps.count()) * 1e-12);
            ends.push_back(end);
        }
        return ends;
    };
    // The planner's prediction of a layer's sets: SchemeSync::finish_times (the default scheme is
    // the plain all-reduce), every node ready at 0.
    const auto predicted_ends = [&](const std::vector<std::vector<NodeId>>& sets) {
        planner::SchemeSync sync(chooser, {}, {});
        std::vector<planner::SyncJob> jobs;
        for (const auto& set : sets) jobs.push_back({set, n / 4, n, 0, 0});
        const auto ends = sync.finish_times(jobs, std::vector<double>(t.node_count(), 0.0));
        std::vector<double> out;
        for (const auto& e : ends) out.push_back(*std::max_element(e.begin(), e.end()));
        return out;
    };
    for (const std::vector<std::vector<NodeId>>& sets :
         {std::vector<std::vector<NodeId>>{nodes({0, 4}), nodes({1, 5}), nodes({2, 6}), nodes({3, 7})},
          std::vector<std::vector<NodeId>>{nodes({0, 1}), nodes({1, 2}), nodes({4, 5, 6})}}) {
        const std::vector<double> predicted = predicted_ends(sets);
        const std::vector<double> simulated = simulated_ends(sets);
        REQUIRE(predicted.size() == sets.size());
        for (std::size_t s = 0; s < sets.size(); ++s) {
            INFO("set " << s << ": predicted " << predicted[s] << " s, simulated " << simulated[s] << " s");
            CHECK(predicted[s] == Approx(simulated[s]).epsilon(1e-9));
        }
    }
    // Four sets over the one slow link take about four times one set alone.
    const std::vector<double> four = predicted_ends({nodes({0, 4}), nodes({1, 5}), nodes({2, 6}), nodes({3, 7})});
    const double alone = chooser.choose(nodes({0, 4}), double(n)).seconds;
    CHECK(*std::max_element(four.begin(), four.end()) == Approx(4 * alone).epsilon(0.05));
    // Sets sharing node 1: its stream reaches the second set's steps after the first's, so the
    // second ends well after its time alone.
    const std::vector<double> chained = predicted_ends({nodes({0, 1}), nodes({1, 2})});
    CHECK(chained[1] > 1.5 * chooser.choose(nodes({1, 2}), double(n)).seconds);
}

TEST_CASE("SchemeSync: a step's replays remembered give what replaying them gives", "[interconnect]") {
    // Steps that begin alike and then differ, a step repeated, and busiest_link_s after each:
    // one SchemeSync (with its memo of steps) against a new one per step (without).
    const LinkParams inner{400.0, 100.0, 0.5}, upper{25.0, 1000.0, 5.0};
    const Topology t = Topology::hierarchical({Topology::switch_star(4, inner), Topology::fully_connected(4, inner)},
                                              interconnect::UpperKind::switch_star, upper);
    interconnect::AllReduceChooser chooser(t, std::nullopt);
    using Layer = std::pair<std::vector<planner::SyncJob>, std::vector<double>>;
    const std::vector<double> at0(t.node_count(), 0.0);
    std::vector<double> later(t.node_count(), 2e-4);
    later[5] = 7e-4;
    const Layer a{{{nodes({0, 4}), 1000, 4000, 0, 0}, {nodes({1, 5}), 1000, 4000, 0, 0}}, at0};
    const Layer b{{{nodes({1, 2, 3}), 50'000, 200'000, 0, 0}}, later};
    const Layer c{{{nodes({4, 5, 6, 7}), 50'000, 200'000, 0, 0}}, later};
    const std::vector<std::vector<Layer>> steps{{a, b}, {a, c}, {a, b}, {a, b, c}, {b}, {a, c}};
    planner::SchemeSync remembering(chooser, {}, {});
    for (std::size_t s = 0; s < steps.size(); ++s) {
        planner::SchemeSync fresh(chooser, {}, {});
        fresh.begin_step();
        remembering.begin_step();
        for (const Layer& layer : steps[s]) {
            INFO("step " << s);
            CHECK(remembering.finish_times(layer.first, layer.second) == fresh.finish_times(layer.first, layer.second));
            CHECK(remembering.busiest_link_s() == fresh.busiest_link_s());
        }
    }
}

TEST_CASE("SchemeSync: a replay given up past a bound reports never and the step's later calls too", "[interconnect]") {
    // AccPar predicts its DP's plans only as far as the best candidate's step: a layer's replay
    // that would end past the bound stops there, its ranks and every later call of the step at
    // +infinity; a bound past the end changes nothing; the next step is exact again.
    const LinkParams inner{400.0, 100.0, 0.5}, upper{25.0, 1000.0, 5.0};
    const Topology t = Topology::hierarchical({Topology::switch_star(4, inner), Topology::ring(4, inner)},
                                              interconnect::UpperKind::switch_star, upper);
    interconnect::AllReduceChooser chooser(t, std::nullopt);
    const std::vector<double> at0(t.node_count(), 0.0);
    const std::vector<planner::SyncJob> first{{nodes({0, 4}), 100'000, 400'000, 0, 0},
                                              {nodes({1, 5}), 100'000, 400'000, 0, 0}};
    const std::vector<planner::SyncJob> second{{nodes({2, 3, 6, 7}), 50'000, 200'000, 0, 0}};
    planner::SchemeSync reference(chooser, {}, {});
    reference.begin_step();
    const auto exact_first = reference.finish_times(first, at0);
    const auto exact_second = reference.finish_times(second, at0);
    double first_end = 0;
    for (const auto& ends : exact_first) first_end = std::max(first_end, *std::max_element(ends.begin(), ends.end()));
    REQUIRE(first_end > 0);
    constexpr double kNever = std::numeric_limits<double>::infinity();
    planner::SchemeSync bounded(chooser, {}, {});
    // A bound past the end: the exact times.
    bounded.begin_step();
    CHECK(bounded.finish_times_until(first, at0, 2 * first_end) == exact_first);
    CHECK(bounded.finish_times_until(second, at0, 10.0) == exact_second);
    // A bound inside the first layer's replay (not remembered): its last ranks never finish, nor
    // does the next layer.
    planner::SchemeSync cut_short(chooser, {}, {});
    cut_short.begin_step();
    const auto cut = cut_short.finish_times_until(first, at0, 0.5 * first_end);
    std::size_t never = 0;
    for (std::size_t j = 0; j < first.size(); ++j)
        for (std::size_t r = 0; r < first[j].ranks.size(); ++r) {
            if (cut[j][r] == kNever) {
                ++never;
            } else {
                CHECK(cut[j][r] == exact_first[j][r]);
                CHECK(cut[j][r] <= 0.5 * first_end);
            }
        }
    CHECK(never > 0);
    for (const auto& ends : cut_short.finish_times_until(second, at0, 10.0))
        for (const double e : ends) CHECK(e == kNever);
    // The next step is exact again.
    cut_short.begin_step();
    CHECK(cut_short.finish_times(first, at0) == exact_first);
    CHECK(cut_short.finish_times(second, at0) == exact_second);
    // From the memo as from a replay: what ends past the bound is never.
    bounded.begin_step();
    const auto remembered = bounded.finish_times_until(first, at0, 0.5 * first_end);
    CHECK(remembered == cut);
}

TEST_CASE("AloneSync: each job its estimated all-reduce from when all its ranks are ready", "[interconnect]") {
    // alpa's block costs: the chooser's fluid estimate of a plain all-reduce (no replay), close
    // to the replayed time alone; a compressed scheme's exact time.
    const LinkParams inner{400.0, 100.0, 0.5}, upper{25.0, 1000.0, 5.0};
    const Topology t = Topology::hierarchical({Topology::switch_star(4, inner), Topology::torus2d(2, 3, inner)},
                                              interconnect::UpperKind::switch_star, upper);
    interconnect::AllReduceChooser chooser(t, std::nullopt);
    const std::vector<planner::SyncJob> jobs{{nodes({0, 1, 2}), 1000, 4000, 0, 0},
                                             {nodes({4, 5, 6, 7, 8, 9}), 2'000'000, 8'000'000, 0, 0},
                                             {nodes({1, 5, 9}), 300'000, 1'200'000, 0, 0}};
    planner::SchemeSync exact(chooser, {}, {});
    planner::AloneSync alone(exact);
    std::vector<double> ready(t.node_count(), 1e-4);
    ready[6] = 3e-4;
    const auto finish = alone.finish_times(jobs, ready);
    REQUIRE(finish.size() == jobs.size());
    for (std::size_t j = 0; j < jobs.size(); ++j) {
        CAPTURE(j);
        double start = 0;
        for (const NodeId n : jobs[j].ranks) start = std::max(start, ready[n.value()]);
        const double estimate = exact.estimated_seconds(jobs[j]);
        CHECK(estimate > 0);
        CHECK(estimate == Approx(exact.seconds(jobs[j])).epsilon(0.15));
        for (const double f : finish[j]) CHECK(f == Approx(start + estimate).epsilon(1e-12));
    }
    planner::SyncScheme topk;
    topk.compression.scheme = compression::Scheme::topk;
    planner::SchemeSync compressed(chooser, topk, {});
    for (const planner::SyncJob& job : jobs) CHECK(compressed.estimated_seconds(job) == compressed.seconds(job));
}

TEST_CASE("collectives: a coalesced ring takes the plain ring's time where nothing contends", "[interconnect]") {
    // On a ring of p nodes each step is one hop: 2(p-1) (alpha + n/p beta) either way, the
    // merged steps' latencies waited as comm-stream delays that do not count as computing.
    const std::size_t p = 40;
    const Topology t = Topology::ring(p, kLink);
    for (const std::uint64_t n : {8'000'000ull, 1'000'003ull}) {
        CAPTURE(n);
        std::vector<NodeProgram> plain(p), merged(p);
        interconnect::ring_all_reduce(plain, iota_ranks(p), n, 0, 1);
        const std::uint64_t next = interconnect::coalesced_ring_all_reduce(merged, iota_ranks(p), n, 0, 1, 30,
                                                                           std::vector<Picoseconds>(p, ps(kAlphaPs)));
        CHECK(next == 30);
        std::size_t messages = 0;
        std::uint64_t bytes_sent = 0;
        for (const NodeProgram& program : merged)
            for (const auto& op : program.ops)
                if (const auto* s = std::get_if<Send>(&op)) {
                    ++messages;
                    bytes_sent += s->bytes;
                }
        CHECK(messages == p * 30);
        // The plain ring's bytes, 2(p-1)/p n in all when p divides n.
        if (n % p == 0) CHECK(bytes_sent == 2 * (p - 1) * n);
        std::uint64_t plain_bytes = 0;
        for (const NodeProgram& program : plain)
            for (const auto& op : program.ops)
                if (const auto* s = std::get_if<Send>(&op)) plain_bytes += s->bytes;
        CHECK(bytes_sent == plain_bytes);
        for (NodeProgram& program : merged) program.comm_ops.swap(program.ops);  // as the schedule places it
        const auto a = run_fresh(t, plain), b = run_fresh(t, merged);
        if (n % p == 0) CHECK(b.end_ps.count() == a.end_ps.count());
        CHECK(double(b.end_ps.count()) == Approx(double(a.end_ps.count())).epsilon(0.001));
        CHECK(b.nodes[0].compute_ps.count() == 0);
    }
    // With as many rounds as steps it is the plain ring.
    std::vector<NodeProgram> plain(5), full(5);
    interconnect::ring_all_reduce(plain, iota_ranks(5), 1003, 0, 1);
    interconnect::coalesced_ring_all_reduce(full, iota_ranks(5), 1003, 0, 1, 100,
                                            std::vector<Picoseconds>(5, ps(kAlphaPs)));
    const Topology ring5 = Topology::ring(5, kLink);
    Network network(ring5);
    const std::uint64_t plain_ps = interconnect::replay_messages(network, plain, iota_ranks(5)).count();
    CHECK(interconnect::replay_messages(network, full, iota_ranks(5)).count() == plain_ps);
    CHECK_THROWS_AS(
        interconnect::coalesced_ring_all_reduce(full, iota_ranks(5), 1, 0, 1, 0, std::vector<Picoseconds>(5)),
        std::invalid_argument);
    CHECK_THROWS_AS(
        interconnect::coalesced_ring_all_reduce(full, iota_ranks(5), 1, 0, 1, 3, std::vector<Picoseconds>(4)),
        std::invalid_argument);
}

TEST_CASE("collectives: a coalesced ring's rounds sum its steps' chunks and latencies", "[interconnect]") {
    // Against the steps summed one by one (the definition): round r of rank i sends the chunks
    // of its steps [first, last) and first waits the latencies of the routes behind it.
    std::mt19937_64 rng(7);
    for (int trial = 0; trial < 60; ++trial) {
        const std::size_t p = 2 + rng() % 70, steps = 2 * (p - 1), rounds = 1 + rng() % (steps + 3);
        const std::uint64_t bytes = rng() % 5 == 0 ? rng() % (2 * p) : rng() % 10'000'000;
        std::vector<Picoseconds> latency(p);
        for (Picoseconds& l : latency) l = Picoseconds(rng() % 3000);
        CAPTURE(p, rounds, bytes);
        std::vector<NodeProgram> merged(p);
        interconnect::coalesced_ring_all_reduce(merged, iota_ranks(p), bytes, 0, 1, rounds, latency);
        const std::size_t used = std::min(rounds, steps);
        std::vector<std::size_t> at(p, 0);  // each rank's next op
        for (std::size_t r = 0; r < used; ++r) {
            const std::size_t first = r * steps / used, last = (r + 1) * steps / used;
            for (std::size_t i = 0; i < p; ++i) {
                std::uint64_t expected_bytes = 0;
                Picoseconds expected_delay{0};
                for (std::size_t s = first; s < last; ++s) {
                    const std::size_t offset = s < p - 1 ? 0 : 1, within = s < p - 1 ? s : s - (p - 1);
                    expected_bytes += interconnect::chunk_bytes(bytes, p, (i + offset + p - within) % p);
                    if (s > first) expected_delay += latency[(i + p - s % p) % p];  // t = s: rank i - t
                }
                const auto& ops = merged[i].ops;
                if (expected_delay > Picoseconds(0)) {
                    REQUIRE(at[i] < ops.size());
                    const auto* c = std::get_if<Compute>(&ops[at[i]++]);
                    REQUIRE(c);
                    CHECK(c->duration_ps == expected_delay);
                }
                REQUIRE(at[i] < ops.size());
                const auto* send = std::get_if<Send>(&ops[at[i]++]);
                REQUIRE(send);
                CHECK(send->bytes == expected_bytes);
                ++at[i];  // its receive
            }
        }
        for (std::size_t i = 0; i < p; ++i) CHECK(at[i] == merged[i].ops.size());
    }
}

TEST_CASE("collectives: the merged ring takes the plain ring's time on tori too, and the fluid model agrees",
          "[interconnect]") {
    // flat_ring, one ring in id order over a torus: the steps that wrap to the next row cross two hops,
    // the others one, so the route latencies differ; under dimension-order routing no two of the
    // ring's routes share a channel. Merged into 30 rounds, each round waits the latencies of the
    // routes behind it, which keeps the plain ring's time; the fluid model charges the ring's
    // critical path of latencies, not 2(p - 1) x the slowest route.
    for (const auto& [rows, cols] : {std::pair<std::size_t, std::size_t>{4, 8}, {8, 8}, {4, 16}}) {
        const std::size_t p = rows * cols;
        const std::uint64_t n = p * 100'000;  // p divides n: equal chunks
        CAPTURE(rows, cols);
        const Topology t = Topology::torus2d(rows, cols, kLink);
        std::vector<NodeProgram> plain(p), merged(p);
        interconnect::ring_all_reduce(plain, iota_ranks(p), n, 0, 1);
        interconnect::simulated_all_reduce(t, interconnect::AllReduceAlgorithm::flat_ring, merged, iota_ranks(p), n, 0,
                                           1);
        Network network(t);
        const double plain_s = to_seconds(interconnect::replay_messages(network, plain, iota_ranks(p)));
        const double merged_s = to_seconds(interconnect::replay_messages(network, merged, iota_ranks(p)));
        CHECK(merged_s == Approx(plain_s).epsilon(1e-9));
        // Uncontended: the critical path's latencies plus 2(p - 1) chunks: within 1% by hand.
        const double per_chunk = double(n / p) * kPsPerByte * 1e-12;
        CHECK(plain_s > 2.0 * double(p - 1) * (kAlphaPs * 1e-12 + per_chunk));
        CHECK(plain_s < 2.0 * double(p - 1) * (2 * kAlphaPs * 1e-12 + per_chunk));
        const double fluid_s =
            interconnect::all_reduce_cost(t, iota_ranks(p), interconnect::AllReduceAlgorithm::flat_ring)
                .seconds(double(n));
        CHECK(fluid_s == Approx(plain_s).epsilon(0.01));
    }
}

TEST_CASE("collectives: ring on a whole torus goes dimension by dimension, as its closed form says", "[interconnect]") {
    // An a x b torus (a columns, b rows), L = 500 ns, B = 100 GB/s: a ring reduce-scatter along
    // the rows, then along the columns on the chunk left, then the all-gathers back:
    // 2(a - 1)(L + n/(aB)) + 2(b - 1)(L + n/(abB)) (as ASTRA-sim computes it), replayed within 2%;
    // the SystemC executor gives the replay's time, and the cost the planner uses (a replay up
    // to 16 ranks, the fluid model beyond) is within 2% of it.
    const double L = kAlphaPs * 1e-12, B = 1e12 / double(kPsPerByte);
    for (const auto& [rows, cols] :
         {std::pair<std::size_t, std::size_t>{2, 2}, {4, 4}, {2, 8}, {4, 8}, {8, 8}, {16, 16}}) {
        const std::size_t p = rows * cols;
        const Topology t = Topology::torus2d(rows, cols, kLink);
        const double a = double(cols), b = double(rows);
        for (const std::uint64_t n : {std::uint64_t{1} << 10, std::uint64_t{1} << 20, std::uint64_t{1} << 26}) {
            CAPTURE(rows, cols, n);
            std::vector<NodeProgram> programs(p);
            interconnect::simulated_all_reduce(t, interconnect::AllReduceAlgorithm::ring, programs, iota_ranks(p), n, 0,
                                               0);
            Network network(t);
            const double replayed = to_seconds(interconnect::replay_messages(network, programs, iota_ranks(p)));
            const double closed = 2 * (a - 1) * (L + double(n) / (a * B)) + 2 * (b - 1) * (L + double(n) / (a * b * B));
            CHECK(replayed == Approx(closed).epsilon(0.02));
            if (p <= 64) CHECK(to_seconds(run_fresh(t, programs).end_ps) == replayed);
            const double cost = interconnect::all_reduce_cost(t, iota_ranks(p), interconnect::AllReduceAlgorithm::ring)
                                    .seconds(double(n));
            CHECK(cost == Approx(replayed).epsilon(0.02));
        }
    }
    // Not a whole torus (a row of it, or the ranks of two tori): one flat ring in the ranks' order.
    const Topology t = Topology::torus2d(4, 4, kLink);
    std::vector<NodeProgram> flat(16), row(16);
    interconnect::simulated_all_reduce(t, interconnect::AllReduceAlgorithm::ring, row, nodes({0, 1, 2, 3}), 4096, 0, 0);
    interconnect::ring_all_reduce(flat, nodes({0, 1, 2, 3}), 4096, 0, 0);
    for (std::size_t i = 0; i < 16; ++i) CHECK(row[i].ops.size() == flat[i].ops.size());
}

TEST_CASE("collectives: the simulated all-reduce stays within its op bound and the fluid cost", "[interconnect]") {
    // Beyond kMaxReplayRanks the ring is coalesced; its simulated time is the fluid model's
    // where ring neighbours are one hop apart, and no rank has more ops than the work estimate
    // counts.
    const std::uint64_t n = 6 * kMB;
    for (const std::size_t p : {std::size_t{9}, interconnect::kMaxReplayRanks * 3}) {
        const Topology t = Topology::ring(p, kLink);
        for (const auto algorithm : interconnect::kAllReduceAlgorithms) {
            CAPTURE(p, interconnect::to_string(algorithm));
            std::vector<NodeProgram> programs(p);
            interconnect::simulated_all_reduce(t, algorithm, programs, iota_ranks(p), n, 0, 0);
            for (const NodeProgram& program : programs)
                CHECK(program.ops.size() <= interconnect::simulated_all_reduce_ops_per_rank(algorithm, p));
            if (algorithm == interconnect::AllReduceAlgorithm::ring) {
                const double simulated = double(run_fresh(t, programs).end_ps.count()) * 1e-12;
                CHECK(interconnect::all_reduce_cost(t, iota_ranks(p), algorithm).seconds(double(n)) ==
                      Approx(simulated).epsilon(0.01));
            }
        }
    }
}

TEST_CASE("Every all-reduce algorithm has its descriptor row and declares its own steps", "[interconnect]") {
    using namespace fastsim::interconnect;
    const auto& rows = all_reduce_descriptors();
    REQUIRE(rows.size() == std::size(kAllReduceAlgorithms));
    // Each row's algorithm lowers to as many Sends as its fluid steps declare messages x repeats
    // over 8 ranks (a power of two, so halving-doubling has no fold), by hand per algorithm.
    const Topology ring8 = Topology::ring(8, kLink);
    struct Count final : FluidSteps {
        const Topology& on;
        std::vector<double> repeat;
        double messages = 0;
        explicit Count(const Topology& t) : on(t) {}
        std::size_t step(double r) override {
            repeat.push_back(r);
            return repeat.size() - 1;
        }
        void message(NodeId, NodeId, std::size_t s, double) override { messages += repeat[s]; }
        const Topology& topology() const override { return on; }
        Picoseconds route_latency(NodeId from, NodeId to) const override {
            Picoseconds l{0};
            for (const ChannelId c : on.route(from.value(), to.value())) l += on.channel(c).timing.latency_ps;
            return l;
        }
        void total_latency(std::size_t, Picoseconds) override {}
    };
    std::vector<NodeId> ranks;
    for (std::size_t i = 0; i < 8; ++i) ranks.emplace_back(i);
    for (std::size_t i = 0; i < rows.size(); ++i) {
        CAPTURE(rows[i].name);
        CHECK(rows[i].algorithm == kAllReduceAlgorithms[i]);
        CHECK(to_string(rows[i].algorithm) == rows[i].name);
        CHECK(&algorithm_of(rows[i].algorithm) == &rows[i].algorithm_impl());
        std::vector<NodeProgram> programs(8);
        all_reduce(rows[i].algorithm, programs, ranks, 1 << 20, 0, 0);
        std::size_t sends = 0, most_ops = 0;
        for (const NodeProgram& p : programs) {
            for (const auto& op : p.ops) sends += std::holds_alternative<Send>(op);
            most_ops = std::max(most_ops, p.ops.size());
        }
        Count count(ring8);
        algorithm_of(rows[i].algorithm).fluid_steps(ranks, count);
        // ring and flat_ring: 2 x 7 steps of 8 messages; tree: 3 rounds of 4, 2, 1 each way;
        // halving-doubling (either order): 3 steps of 8 each way; direct: 2 phases of 56.
        const double expected[] = {112, 14, 48, 112, 112, 48};
        static_assert(std::size(expected) == std::size(kAllReduceAlgorithms));
        CHECK(count.messages == Approx(expected[i]));
        CHECK(static_cast<double>(sends) == Approx(expected[i]));
        CHECK(most_ops <= simulated_all_reduce_ops_per_rank(rows[i].algorithm, 8));
    }
}

TEST_CASE("collectives: direct on a switch meets its one-link bound, whatever the program order", "[interconnect]") {
    // 100 GB/s, 500 ns links (kLink); through a switch a message crosses 2 hops. Each phase: every
    // rank's uplink carries its p - 1 chunks back to back, and each downlink receives one chunk a
    // slot because the ranks start their sends at different peers: 2L + (p - 1)/p n/B a phase.
    for (const std::size_t p : {4, 8, 16}) {
        for (const std::uint64_t n : {std::uint64_t{1} << 10, std::uint64_t{1} << 20, std::uint64_t{1} << 26}) {
            CAPTURE(p, n);
            const Topology t = Topology::switch_star(p, kLink);
            const double bound = 2 * (2.0 * kAlphaPs + double(p - 1) / double(p) * double(n) * kPsPerByte) * 1e-12;
            std::vector<std::vector<NodeId>> orders{iota_ranks(p), iota_ranks(p), iota_ranks(p)};
            std::reverse(orders[1].begin(), orders[1].end());
            for (std::size_t i = 0; i < p; ++i) std::swap(orders[2][i], orders[2][(i * 7 + 3) % p]);
            std::vector<double> replayed, simulated;
            for (const auto& ranks : orders) {
                std::vector<NodeProgram> programs(p);
                interconnect::direct_all_reduce(programs, ranks, n, 0, 0);
                Network network(t);
                replayed.push_back(to_seconds(interconnect::replay_messages(network, programs, iota_ranks(p))));
                simulated.push_back(to_seconds(run_fresh(t, programs).end_ps));
            }
            for (std::size_t o = 0; o < orders.size(); ++o) {
                CHECK(replayed[o] == Approx(bound).epsilon(0.02));
                CHECK(simulated[o] == replayed[o]);
                CHECK(simulated[o] == simulated[0]);
            }
        }
    }
}

TEST_CASE("network: a channel serves heads in the order they arrive, not the order they were posted",
          "[interconnect]") {
    // Ring 0-1-2-3-4: message A from 0 to 2 (hops 0->1, 1->2) is posted first at t = 0; message
    // B from 1 to 2 (hop 1->2) is posted next, also at t = 0. B's head reaches 1->2 at 0 and A's
    // at L, so B goes first and A's second hop waits for B's tail.
    const Topology t = Topology::ring(5, kLink);
    Network net(t);
    const std::uint64_t occupancy = kMB * kPsPerByte;
    net.post(0, 2, kMB, ps(0), {0, 0, 0}, 1);
    net.post(1, 2, kMB, ps(0), {1, 0, 0}, 2);
    std::vector<interconnect::Delivery> delivered;
    while (const auto next = net.next_head_ps()) net.advance(*next, delivered);
    REQUIRE(delivered.size() == 2);
    std::map<std::uint64_t, std::uint64_t> arrival;
    for (const auto& d : delivered) arrival[d.cookie] = d.arrival_ps.count();
    CHECK(arrival[2] == kAlphaPs + occupancy);
    // A: 0->1 during [0, O); its head at L waits for 1->2 until O, holds it [O, 2O).
    CHECK(arrival[1] == 2 * occupancy + kAlphaPs);
}

TEST_CASE("collectives: ring, halving-doubling and tree on a switch and ring on a ring meet their closed forms",
          "[interconnect]") {
    // L = 500 ns a link, B = 100 GB/s, h = 1 hop on a ring and 2 through a switch; replayed as
    // the cluster runs them (the merged ring above 16 ranks).
    const double L = kAlphaPs * 1e-12, B = 1e12 / double(kPsPerByte);
    using A = interconnect::AllReduceAlgorithm;
    for (const std::size_t p : {4, 16, 64}) {
        const double lg = std::log2(double(p));
        for (const std::uint64_t n : {std::uint64_t{1} << 10, std::uint64_t{1} << 20, std::uint64_t{1} << 26}) {
            CAPTURE(p, n);
            const auto replayed = [&](const Topology& t, A algorithm) {
                std::vector<NodeProgram> programs(p);
                interconnect::simulated_all_reduce(t, algorithm, programs, iota_ranks(p), n, 0, 0);
                Network network(t);
                return to_seconds(interconnect::replay_messages(network, programs, iota_ranks(p)));
            };
            const Topology ring = Topology::ring(p, kLink), star = Topology::switch_star(p, kLink);
            const double nd = double(n), pd = double(p);
            CHECK(replayed(ring, A::ring) == Approx(2 * (pd - 1) * (L + nd / (pd * B))).epsilon(0.01));
            CHECK(replayed(star, A::ring) == Approx(2 * (pd - 1) * (2 * L + nd / (pd * B))).epsilon(0.01));
            CHECK(replayed(star, A::halving_doubling) == Approx(4 * L * lg + 2 * (pd - 1) / pd * nd / B).epsilon(0.01));
            CHECK(replayed(star, A::tree) == Approx(2 * lg * (2 * L + nd / B)).epsilon(0.01));
        }
    }
}

TEST_CASE("collectives: best is never more than 1% slower than the best of the algorithms", "[interconnect]") {
    // The algorithm AllReduceChooser picks from its measured costs, replayed as the cluster runs
    // it, against every algorithm replayed the same way.
    struct Case {
        const char* name;
        Topology topology;
    };
    const std::vector<Case> cases{
        {"ring 16", Topology::ring(16, kLink)},          {"switch 16", Topology::switch_star(16, kLink)},
        {"torus 4x4", Topology::torus2d(4, 4, kLink)},   {"ring 64", Topology::ring(64, kLink)},
        {"switch 64", Topology::switch_star(64, kLink)}, {"torus 8x8", Topology::torus2d(8, 8, kLink)}};
    for (const Case& c : cases) {
        const std::size_t p = c.topology.node_count();
        interconnect::AllReduceChooser chooser(c.topology, std::nullopt);
        for (const std::uint64_t n : {std::uint64_t{1} << 10, std::uint64_t{1} << 16, std::uint64_t{1} << 20,
                                      std::uint64_t{1} << 26, std::uint64_t{1} << 30}) {
            const auto replayed = [&](const interconnect::AlgorithmPerDimension& algorithms) {
                std::vector<NodeProgram> programs(p);
                interconnect::simulated_all_reduce(c.topology, algorithms, programs, iota_ranks(p), n, 0, 0);
                Network network(c.topology);
                return to_seconds(interconnect::replay_messages(network, programs, iota_ranks(p)));
            };
            double fastest = -1;
            for (const auto algorithm : interconnect::kAllReduceAlgorithms) {
                if (algorithm == interconnect::AllReduceAlgorithm::direct && p > interconnect::kMaxDirectRanks)
                    continue;
                const double s = replayed({algorithm});
                if (fastest < 0 || s < fastest) fastest = s;
            }
            const auto chosen = chooser.choose(iota_ranks(p), double(n)).algorithms;
            INFO(c.name << ", " << n << " bytes: best chose " << interconnect::describe(chosen));
            CHECK(replayed(chosen) <= 1.01 * fastest);
        }
    }
}

TEST_CASE("network: store-and-forward receives a message whole before each next hop", "[interconnect]") {
    // One 1 MB message through a switch (2 hops of 100 GB/s, 500 ns): cut-through 2L + O,
    // store-and-forward 2L + 2O (ASTRA-sim's congestion-aware convention).
    LinkParams store = kLink;
    store.switching = interconnect::Switching::store_and_forward;
    const std::uint64_t occupancy = kMB * kPsPerByte;
    const Topology pipelined = Topology::switch_star(2, kLink);
    Network cut(pipelined);
    CHECK(cut.transfer(0, 1, kMB, ps(0)).count() == 2 * kAlphaPs + occupancy);
    const Topology star = Topology::switch_star(2, store);
    Network whole(star);
    CHECK(whole.transfer(0, 1, kMB, ps(0)).count() == 2 * kAlphaPs + 2 * occupancy);
    CHECK(std::string(fastsim::name_of(interconnect::Switching::store_and_forward)) == "store_and_forward");
}

TEST_CASE("collectives: ring on a 3-D torus goes dimension by dimension too", "[interconnect]") {
    // depth x rows x cols = c x b x a: links 3 per node for sides >= 3; dimension-order hops;
    // the all-reduce 2(a-1)(L + n/aB) + 2(b-1)(L + n/abB) + 2(c-1)(L + n/abcB), within 2%.
    const Topology t = Topology::torus3d(4, 4, 4, kLink);
    CHECK(t.node_count() == 64);
    CHECK(t.link_count() == 3 * 64);
    CHECK(t.hops(0, 63) == 3);  // (0,0,0) to (3,3,3): one step down each dimension
    CHECK(t.hops(0, 42) == 6);  // (2,2,2): two each way round, ties by parity
    CHECK(Topology::torus3d(2, 1, 3, kLink).link_count() == 3 * 2 + 3);  // a side of 2 has one link a line
    const double L = kAlphaPs * 1e-12, B = 1e12 / double(kPsPerByte);
    for (const std::uint64_t n : {std::uint64_t{1} << 10, std::uint64_t{1} << 24}) {
        CAPTURE(n);
        std::vector<NodeProgram> programs(64);
        interconnect::simulated_all_reduce(t, interconnect::AllReduceAlgorithm::ring, programs, iota_ranks(64), n, 0,
                                           0);
        Network network(t);
        const double replayed = to_seconds(interconnect::replay_messages(network, programs, iota_ranks(64)));
        const double nd = double(n);
        const double closed = 2 * 3 * (L + nd / (4 * B)) + 2 * 3 * (L + nd / (16 * B)) + 2 * 3 * (L + nd / (64 * B));
        CHECK(replayed == Approx(closed).epsilon(0.02));
        CHECK(interconnect::all_reduce_cost(t, iota_ranks(64), interconnect::AllReduceAlgorithm::ring).seconds(nd) ==
              Approx(replayed).epsilon(0.02));
    }
}

TEST_CASE("FlowCollective: every member goes on its duration after the last arrives, replayed and simulated",
          "[interconnect]") {
    // Three nodes reach the collective on their comm streams at 2, 7 and 4 us; it takes 5 us,
    // so every member is done at 12 us. Node 0's main stream waits for it (WaitFor), node 2's
    // main stream computes 20 us. Two collectives in a row chain: the second starts at 12 us.
    using interconnect::FlowCollective;
    using interconnect::Signal;
    using interconnect::WaitFor;
    const Topology t = Topology::ring(3, kLink);
    const FlowCollective first{1, 3, ps(5'000'000), 4};
    const FlowCollective second{2, 3, ps(1'000'000), 4};
    std::vector<NodeProgram> programs(3);
    programs[0].ops = {WaitFor{9, 0}};
    programs[0].comm_ops = {Compute{ps(2'000'000), 4}, first, Signal{9, 4}};
    programs[1].comm_ops = {Compute{ps(7'000'000), 4}, first, second};
    programs[1].ops = {Send{NodeId(2), kMB, 77, 1}};  // a message beside the collectives: 10.5 us
    programs[2].ops = {Compute{ps(20'000'000), 1}, Recv{NodeId(1), 77, 1}};
    programs[2].comm_ops = {Compute{ps(4'000'000), 4}, first, second};
    programs[0].comm_ops.push_back(second);
    const std::vector<NodeId> node_of{NodeId(0), NodeId(1), NodeId(2)};
    Network network(t);
    std::vector<Picoseconds> ends;
    const Picoseconds replayed = interconnect::replay_messages(network, programs, node_of, &ends);
    const cluster::ClusterResult simulated = run_fresh(t, programs);
    CHECK(replayed.count() == 20'000'000);  // node 2's compute is the longest
    CHECK(ends[0].count() == 13'000'000);
    CHECK(ends[1].count() == 13'000'000);
    CHECK(simulated.end_ps == replayed);
    for (std::size_t n = 0; n < 3; ++n) CHECK(simulated.nodes[n].finish_ps == ends[n]);
    CHECK(simulated.nodes[0].wait_ps.count() == 12'000'000);  // the main stream's WaitFor on the first
    std::uint64_t channel_bytes = 0;
    for (const auto& c : simulated.channels) channel_bytes += c.bytes;
    CHECK(channel_bytes == kMB);  // the message alone: no link carries a flow-level collective
}

TEST_CASE("FlowCollective: members that disagree or exceed its ranks are refused by the executor and the replay",
          "[interconnect]") {
    using interconnect::FlowCollective;
    const Topology t = Topology::ring(3, kLink);
    const std::vector<NodeId> node_of{NodeId(0), NodeId(1), NodeId(2)};
    Network network(t);
    std::vector<NodeProgram> programs(3);
    programs[0].comm_ops = {FlowCollective{1, 2, ps(10), 0}};
    programs[1].comm_ops = {FlowCollective{1, 3, ps(10), 0}};
    CHECK_THROWS_WITH(run_fresh(t, programs), Catch::Contains("another member of this collective gives 2 ranks"));
    CHECK_THROWS_WITH(interconnect::replay_messages(network, programs, node_of),
                      Catch::Contains("disagree on ranks or duration"));
    programs[1].comm_ops = {FlowCollective{1, 2, ps(10), 0}};
    programs[2].comm_ops = {FlowCollective{1, 2, ps(10), 0}};
    CHECK_THROWS_WITH(run_fresh(t, programs), Catch::Contains("more members than its 2 ranks"));
    CHECK_THROWS_WITH(interconnect::replay_messages(network, programs, node_of), Catch::Contains("exceed ranks"));
    // Members that give different durations: the two would time them differently.
    programs[1].comm_ops = {FlowCollective{1, 2, ps(20), 0}};
    programs[2].comm_ops.clear();
    CHECK_THROWS_WITH(run_fresh(t, programs), Catch::Contains("gives another duration"));
    CHECK_THROWS_WITH(interconnect::replay_messages(network, programs, node_of),
                      Catch::Contains("disagree on ranks or duration"));
}

TEST_CASE("FlowCollective: a member missing is a deadlock naming the collective", "[interconnect]") {
    // Its own test case, the deadlocked run last: under AddressSanitizer an exception after a
    // run that left SystemC coroutines blocked is misreported (docs/robustness.md, "Sanitizers").
    using interconnect::FlowCollective;
    const Topology t = Topology::ring(3, kLink);
    std::vector<NodeProgram> programs(3);
    programs[0].comm_ops = {FlowCollective{1, 2, ps(10), 0}};
    Network network(t);
    CHECK_THROWS_WITH(interconnect::replay_messages(network, programs, {NodeId(0), NodeId(1), NodeId(2)}),
                      Catch::Contains("never completes"));
    CHECK_THROWS_WITH(run_fresh(t, programs),
                      Catch::Contains("node 0 (comm stream) blocked at op 0 (FlowCollective tag 1 of 2 ranks; 1 of "
                                      "them in the programs, 1 reached it)"));
}

TEST_CASE("replay_messages: a replay that gives up ends at kNeverPs, even with its last op completed",
          "[interconnect]") {
    // Node 1's only op, a Recv, completes at 10.5 us by the delivery; past a bound of 1 us the
    // replay gives up before node 1's lane is run again, and must not report node 0's end (0).
    const Topology t = Topology::ring(2, kLink);
    std::vector<NodeProgram> programs(2);
    programs[0].ops = {Send{NodeId(1), kMB, 7, 0}};
    programs[1].ops = {Recv{NodeId(0), 7, 0}};
    Network network(t);
    const std::vector<NodeId> node_of{NodeId(0), NodeId(1)};
    CHECK(interconnect::replay_messages(network, programs, node_of).count() == kAlphaPs + kMB * kPsPerByte);
    CHECK(interconnect::replay_messages(network, programs, node_of, nullptr, true, ps(1'000'000)) ==
          interconnect::kNeverPs);
}

TEST_CASE("SchemeSync: above message_level_max_ranks, a FlowCollective per rank at the chooser's cost",
          "[interconnect]") {
    const Topology t = Topology::ring(8, kLink);
    interconnect::AllReduceChooser chooser(t, std::nullopt);
    std::vector<NodeId> ranks;
    for (std::size_t n = 0; n < 8; ++n) ranks.emplace_back(n);
    const std::uint64_t bytes = 1 << 20;
    const planner::SyncJob job{ranks, bytes / 4, bytes, 0, 0};
    for (const std::size_t max_ranks : {std::size_t{8}, std::size_t{7}}) {
        planner::SyncScheme scheme;
        scheme.message_level_max_ranks = max_ranks;
        planner::SchemeSync sync(chooser, scheme, {});
        std::vector<NodeProgram> programs(8);
        const std::uint64_t next_tag = sync.lower(programs, job, 100, 3);
        std::size_t flows = 0, sends = 0;
        for (const NodeProgram& p : programs)
            for (const interconnect::Op& op : p.ops) {
                sends += std::holds_alternative<Send>(op);
                if (const auto* f = std::get_if<interconnect::FlowCollective>(&op)) {
                    ++flows;
                    CHECK((f->tag == 100 && f->ranks == 8 && f->label == 3));
                    CHECK(f->duration_ps.count() == static_cast<std::uint64_t>(std::llround(
                                                        chooser.choose(ranks, double(bytes)).seconds * 1e12)));
                }
            }
        INFO("message_level_max_ranks " << max_ranks);
        CHECK(flows == (max_ranks < 8 ? 8 : 0));
        CHECK((max_ranks < 8) == (sends == 0));
        if (max_ranks < 8) CHECK(next_tag == 101);
        // The planner's time of the job alone is the same program's replay.
        CHECK(sync.seconds(job) > 0);
        if (max_ranks < 8)
            CHECK(sync.seconds(job) == Approx(chooser.choose(ranks, double(bytes)).seconds).margin(1e-12));
    }
}
