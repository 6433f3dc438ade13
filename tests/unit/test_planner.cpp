// SPDX-License-Identifier: MIT
// The planner's exact DP against brute force, AccPar's transfer tables by hand, split
// balancing and the comm-only accounting of data parallelism and OWT.
#include <catch2/catch.hpp>

#include <random>

#include "planner/assignment.h"
#include "planner/layer_graph.h"
#include "planner/planner.h"
#include "planner/ownership.h"
#include "planner/strategy.h"
#include "support/plan_helpers.h"
#include "workload/vector_work.h"

using namespace fastsim;
using planner::PartitionType;
using test::conv;
using test::fc;
using test::flat_exchange;
using test::linear_compute;
using test::uniform_cluster;

namespace {

/// A ResNet-like graph: a stem, blocks of two layers with a shortcut from the block input.
workload::Workload residual_net(int blocks) {
    workload::Workload w;
    w.layers.push_back(fc("stem", 8, 8));
    std::string block_in = "stem", shortcut_from = "stem";
    for (int b = 0; b < blocks; ++b) {
        const std::string a = "b" + std::to_string(b) + "a", c = "b" + std::to_string(b) + "b";
        std::vector<std::string> in_a{block_in};
        if (b > 0) in_a.push_back(shortcut_from);
        w.layers.push_back(fc(a, 8, 8, in_a));
        w.layers.push_back(fc(c, 8, 8, {a}));
        shortcut_from = block_in;
        block_in = c;
    }
    w.layers.push_back(fc("head", 8, 4, {block_in, shortcut_from}));
    return w;
}

/// A graph where three earlier outputs are live at once (a DenseNet-like join).
workload::Workload dense_net() {
    workload::Workload w;
    w.layers.push_back(fc("l0", 8, 8));
    w.layers.push_back(fc("l1", 8, 8, {"l0"}));
    w.layers.push_back(fc("l2", 8, 8, {"l1", "l0"}));
    w.layers.push_back(fc("l3", 8, 8, {"l2", "l1", "l0"}));
    w.layers.push_back(fc("l4", 8, 8, {"l3", "l1"}));
    w.layers.push_back(fc("l5", 8, 8, {"l4"}));
    w.layers.push_back(fc("l6", 8, 8, {"l5", "l3", "l2"}));
    w.layers.push_back(fc("l7", 8, 8, {"l6"}));
    return w;
}

/// Random costs with 1 to 4 options per layer (a type at one or two shares).
planner::AssignmentCosts random_costs(const planner::LayerGraph& g, std::mt19937_64& rng) {
    std::uniform_real_distribution<double> u(0.0, 10.0);
    std::uniform_int_distribution<std::size_t> option_count(1, 4);  // 4^10 assignments at most
    std::bernoulli_distribution forbid(0.1);
    planner::AssignmentCosts c;
    for (std::size_t l = 0; l < g.layers.size(); ++l) {
        std::vector<double> options(option_count(rng));
        for (auto& v : options) v = forbid(rng) ? std::numeric_limits<double>::infinity() : u(rng);
        options[0] = u(rng);  // keep one option feasible
        c.layer.push_back(options);
    }
    for (std::size_t l = 0; l < g.layers.size(); ++l) {
        std::vector<planner::AssignmentCosts::EdgeCosts> edges;
        for (const auto& e : g.layers[l].producers) {
            planner::AssignmentCosts::EdgeCosts edge;
            edge.to_options = c.layer[l].size();
            edge.cost.resize(c.layer[e.from].size() * edge.to_options);
            for (auto& v : edge.cost) v = u(rng);
            edges.push_back(edge);
        }
        c.edge.push_back(edges);
    }
    return c;
}

}  // namespace

TEST_CASE("Exact DP equals brute force on chain, residual and dense graphs", "[planner]") {
    std::mt19937_64 rng(7);
    const std::vector<std::pair<std::string, workload::Workload>> nets{
        {"chain",
         [] {
             workload::Workload w;
             for (int i = 0; i < 9; ++i) w.layers.push_back(fc("l" + std::to_string(i), 8, 8));
             return w;
         }()},
        {"residual", residual_net(4)},
        {"dense", dense_net()}};
    for (const auto& [name, net] : nets) {
        const auto graph = planner::build_layer_graph(net, 8);
        for (int trial = 0; trial < 30; ++trial) {
            const auto costs = random_costs(graph, rng);
            const auto dp = planner::solve_exact(graph, costs);
            const auto brute = planner::solve_brute_force(graph, costs);
            INFO(name << " trial " << trial);
            REQUIRE(dp.cost == Approx(brute.cost).epsilon(1e-12));
            REQUIRE(planner::assignment_cost(graph, costs, dp.options) == Approx(dp.cost).epsilon(1e-12));
        }
    }
}

TEST_CASE("A shortcut edge sees its producer's chosen type, not a back-pointer's guess", "[planner]") {
    // stem -> a -> b -> head, and stem -> head. Along the chain, stem II is cheapest on
    // arriving at b (1 < 0 + 2); AccPar's code would read that back-pointer for the shortcut
    // and pay 1 + 3 for head II. The exact optimum keeps stem I for the shortcut: 0 + 2 + 0.
    workload::Workload w;
    w.layers = {fc("stem", 8, 8), fc("a", 8, 8, {"stem"}), fc("b", 8, 8, {"a"}), fc("head", 8, 8, {"b", "stem"})};
    const auto graph = planner::build_layer_graph(w, 8);
    planner::AssignmentCosts c;
    const double inf = std::numeric_limits<double>::infinity();
    c.layer = {{0, 1, inf}, {5, 0, inf}, {5, 0, inf}, {0, 3, inf}};
    const auto edge = [](std::vector<double> cost) { return planner::AssignmentCosts::EdgeCosts{3, std::move(cost)}; };
    const auto zero = edge(std::vector<double>(9, 0.0));
    auto i_to_ii = zero, agree = zero;
    i_to_ii.cost[0 * 3 + 1] = 2;
    for (std::size_t f = 0; f < 3; ++f)
        for (std::size_t t = 0; t < 3; ++t) agree.cost[f * 3 + t] = f == t ? 0 : 10;
    c.edge = {{}, {i_to_ii}, {zero}, {zero, agree}};
    const auto dp = planner::solve_exact(graph, c);
    CHECK(dp.cost == 2.0);
    CHECK(dp.options == std::vector<std::size_t>{0, 1, 1, 0});
    CHECK(planner::solve_brute_force(graph, c).cost == dp.cost);
}

TEST_CASE("Ownership at equal halves gives AccPar's chain and block tables", "[planner][ownership]") {
    const std::uint64_t rows = 8, columns = 12;  // the boundary tensor: F = 96 elements
    using P = PartitionType;
    const P I = P::batch, II = P::in_channels, III = P::out_channels;
    struct Row {
        P from, to;
        double forward, backward;  // each side, at 1/2
    };
    // Com_Cost_Inter_Layer: I->II 0.25(F+E), I->III 0.5F, II->I 0.5E, II->II 0.5E, III->I 0.25(F+E), III->III 0.5F.
    const std::vector<Row> chain{{I, I, 0, 0},    {I, II, 24, 24},  {I, III, 48, 0}, {II, I, 0, 48},   {II, II, 0, 48},
                                 {II, III, 0, 0}, {III, I, 24, 24}, {III, II, 0, 0}, {III, III, 48, 0}};
    // Com_Cost_Inter_Layer_Block: I->II 0.5F, I->III 0.25(F+E), II->I 0.25(F+E), II->II 0.5F, III->I 0.5E, III->III 0.5E.
    const std::vector<Row> block{{I, I, 0, 0},    {I, II, 48, 0},  {I, III, 24, 24}, {II, I, 24, 24},  {II, II, 48, 0},
                                 {II, III, 0, 0}, {III, I, 0, 48}, {III, II, 0, 0},  {III, III, 0, 48}};
    for (const auto& [table, kind] :
         {std::pair{chain, planner::EdgeKind::producer_output}, std::pair{block, planner::EdgeKind::accpar_block}})
        for (const Row& r : table) {
            const auto x = planner::edge_transfer(kind, {r.from, 0.5}, {r.to, 0.5}, rows, columns);
            INFO(planner::to_string(r.from) << " -> " << planner::to_string(r.to)
                                            << (kind == planner::EdgeKind::accpar_block ? " block" : " chain"));
            CHECK(x.forward.to_a == r.forward);
            CHECK(x.forward.to_b == r.forward);
            CHECK(x.backward.to_a == r.backward);
            CHECK(x.backward.to_b == r.backward);
        }
}

TEST_CASE("Ownership with unequal shares: every same-type pair by hand", "[planner][ownership]") {
    // 8 rows x 12 columns; the producer's side A holds 1/4, the consumer's side A takes 3/4
    // (rows 0-1 then 0-5; columns 0-2 then 0-8).
    const std::uint64_t rows = 8, columns = 12;
    using P = PartitionType;
    const auto x = [&](planner::EdgeKind kind, P type) {
        return planner::edge_transfer(kind, {type, 0.25}, {type, 0.75}, rows, columns);
    };
    const auto chain = planner::EdgeKind::producer_output, block = planner::EdgeKind::accpar_block;
    // I -> I: F's rows 2-5 move to A (4 rows x 12); E flows back, rows 2-5 to B.
    auto t = x(chain, P::batch);
    CHECK(t.forward.to_a == 48);
    CHECK(t.forward.to_b == 0);
    CHECK(t.backward.to_a == 0);
    CHECK(t.backward.to_b == 48);
    // II -> II: the producer's output is whole after its partial sums, so F moves nothing; the
    // consumer's E is split by columns (A 0-8, B 9-11) and the producer needs all of it.
    t = x(chain, P::in_channels);
    CHECK(t.forward.to_a == 0);
    CHECK(t.forward.to_b == 0);
    CHECK(t.backward.to_a == 3 * 8);
    CHECK(t.backward.to_b == 9 * 8);
    // III -> III: the producer's output columns 0-2 | 3-11, the consumer needs all of F; E is
    // whole after the consumer's partial sums.
    t = x(chain, P::out_channels);
    CHECK(t.forward.to_a == 9 * 8);
    CHECK(t.forward.to_b == 3 * 8);
    CHECK(t.backward.to_a == 0);
    CHECK(t.backward.to_b == 0);
    // Block, I -> I: held by rows at 1/4, needed by rows at 3/4, as the chain.
    t = x(block, P::batch);
    CHECK(t.forward.to_a == 48);
    CHECK(t.backward.to_b == 48);
    // Block, II -> II: held by columns (0-2 | 3-11), needed whole; E the other way is free.
    t = x(block, P::in_channels);
    CHECK(t.forward.to_a == 9 * 8);
    CHECK(t.forward.to_b == 3 * 8);
    CHECK(t.backward.to_a + t.backward.to_b == 0);
    // Block, III -> III: F held whole; E held by the consumer's columns (0-8 | 9-11), needed whole.
    t = x(block, P::out_channels);
    CHECK(t.forward.to_a + t.forward.to_b == 0);
    CHECK(t.backward.to_a == 3 * 8);
    CHECK(t.backward.to_b == 9 * 8);
    // Equal shares of one type move nothing forward, on either kind of edge.
    for (const auto kind : {chain, block})
        CHECK(planner::edge_transfer(kind, {P::batch, 0.3}, {P::batch, 0.3}, rows, columns).forward.max() == 0);
}

namespace {

/// Element-by-element reference: does side A (or B) hold element (r, c) when a layer of
/// `type` at share `alpha` holds its input (or output) tensor? From the table in
/// docs/planner.md, "Ownership", written out independently of models/planner/ownership.cpp.
bool holds(PartitionType type, bool input, double alpha, bool side_a, std::uint64_t r, std::uint64_t c,
           std::uint64_t rows, std::uint64_t columns) {
    const auto first = [&](std::uint64_t i, std::uint64_t extent) {
        return static_cast<double>(i) < std::round(alpha * static_cast<double>(extent));
    };
    switch (type) {
    case PartitionType::batch: return first(r, rows) == side_a;
    case PartitionType::in_channels: return input ? first(c, columns) == side_a : true;
    case PartitionType::out_channels: return input ? true : first(c, columns) == side_a;
    case PartitionType::spatial: break;  // not drawn here: test_planner_spatial.cpp
    }
    return false;
}

}  // namespace

TEST_CASE("Ownership equals an element-by-element count on random unequal cases", "[planner][ownership]") {
    std::mt19937_64 rng(11);
    std::uniform_int_distribution<std::uint64_t> extent(2, 17);
    std::uniform_real_distribution<double> share(0.05, 0.95);
    std::uniform_int_distribution<int> type(0, 2);
    for (int trial = 0; trial < 400; ++trial) {
        const std::uint64_t rows = extent(rng), columns = extent(rng);
        const planner::SplitChoice from{PartitionType(type(rng)), share(rng)}, to{PartitionType(type(rng)), share(rng)};
        const bool block = trial % 2 == 1;
        const auto x = planner::edge_transfer(
            block ? planner::EdgeKind::accpar_block : planner::EdgeKind::producer_output, from, to, rows, columns);
        // Chain: F held as `from`'s output, needed as `to`'s input. Block: held as `from`'s
        // input, needed as `to`'s output. E: the reverse of each.
        const bool from_input = block, to_input = !block;
        double f_a = 0, f_b = 0, e_a = 0, e_b = 0;
        for (std::uint64_t r = 0; r < rows; ++r)
            for (std::uint64_t c = 0; c < columns; ++c)
                for (const bool a : {true, false}) {
                    const bool from_has = holds(from.type, from_input, from.alpha, a, r, c, rows, columns);
                    const bool to_has = holds(to.type, to_input, to.alpha, a, r, c, rows, columns);
                    (a ? f_a : f_b) += to_has && !from_has;
                    (a ? e_a : e_b) += from_has && !to_has;
                }
        INFO("trial " << trial << ": " << planner::to_string(from.type) << "@" << from.alpha << " -> "
                      << planner::to_string(to.type) << "@" << to.alpha << (block ? " block " : " chain ") << rows
                      << "x" << columns);
        REQUIRE(x.forward.to_a == f_a);
        REQUIRE(x.forward.to_b == f_b);
        REQUIRE(x.backward.to_a == e_a);
        REQUIRE(x.backward.to_b == e_b);
    }
}

TEST_CASE("Two nodes: every type pair of a two-layer net costs what the tables say", "[planner]") {
    // fc0 (B=8, 4 -> 6), fc1 (6 -> 10). A(W0) = 24, A(F0 out) = 48 = A(F1 in), A(W1) = 60, A(F1 out) = 80.
    workload::Workload w;
    w.layers = {fc("fc0", 4, 6), fc("fc1", 6, 10)};
    const auto graph = planner::build_layer_graph(w, 8);
    const auto groups = planner::bisect(uniform_cluster(2), flat_exchange(0, 1));
    const auto compute = linear_compute(graph, {1.0});
    // Intra per type: fc0 {I: 24, II: 48, III: 0 (no backward-data)}, fc1 {I: 60, II: 80, III: 48};
    // the edge at 1/2 is 24 for I->II, I->III, II->I, II->II, III->I, III->III, else 0.
    const double intra0[3] = {24, 48, 0}, intra1[3] = {60, 80, 48};
    const double edge[3][3] = {{0, 24, 24}, {24, 24, 0}, {24, 0, 24}};  // F part + E part, each side
    double best = 1e30;
    for (std::size_t a = 0; a < 3; ++a)
        for (std::size_t b = 0; b < 3; ++b) best = std::min(best, intra0[a] + intra1[b] + edge[a][b]);
    planner::PlannerOptions options;
    options.kind = planner::PlannerKind::accpar;
    options.comm_only = true;
    options.equal_split = true;
    const planner::ElementBytes one{1, 1, 1, 1};
    const auto plan = test::plan_with(graph, uniform_cluster(2), groups, compute, one, options);
    for (std::size_t a = 0; a < 3; ++a)
        for (std::size_t b = 0; b < 3; ++b) {
            const auto x = planner::edge_transfer(planner::EdgeKind::producer_output, {PartitionType(a), 0.5},
                                                  {PartitionType(b), 0.5}, 8, 6);
            CHECK(x.forward.max() + x.backward.max() == edge[a][b]);
        }
    CHECK(best == 72);  // fc0 III (its input error is never needed) + fc1 III (48) + III->III (24)
    CHECK(plan.comm_bytes == best);
    CHECK(plan.choices[0][0].type == PartitionType::out_channels);
    CHECK(plan.choices[0][1].type == PartitionType::out_channels);
    // Data parallelism pays both weight-gradient sums: 24 + 60.
    options.kind = planner::PlannerKind::data_parallel;
    CHECK(test::plan_with(graph, uniform_cluster(2), groups, compute, one, options).comm_bytes == 84);
}

TEST_CASE("Balanced split: alpha gives each side the same compute time", "[planner]") {
    // Node type 1 is three times as fast as type 0: it takes 3/4 of every split dimension.
    workload::Workload w;
    w.layers = {fc("fc0", 64, 64), fc("fc1", 64, 64)};
    const auto graph = planner::build_layer_graph(w, 64);
    planner::ClusterView cluster = uniform_cluster(2);
    cluster.node_type = {0, 1};
    const auto groups = planner::bisect(cluster, flat_exchange(1e-6, 1e9));
    const auto compute = linear_compute(graph, {1e9, 3e9});
    const auto plan = test::plan_with(graph, cluster, groups, compute, {}, {});
    for (const auto& c : plan.choices[0]) {
        CHECK(c.alpha == 0.25);
        CHECK(c.compute_a_s == Approx(c.compute_b_s).epsilon(1e-12));
    }
    // Equal halves leave the fast node idle half the time.
    planner::PlannerOptions equal;
    equal.equal_split = true;
    const auto halves = test::plan_with(graph, cluster, groups, compute, {}, equal);
    CHECK(halves.choices[0][0].alpha == 0.5);
    CHECK(halves.choices[0][0].compute_a_s == Approx(3 * halves.choices[0][0].compute_b_s));
    CHECK(halves.step_s > plan.step_s);
}

TEST_CASE("Comm-only, equal halves, 4 nodes: DP and OWT volumes by hand", "[planner]") {
    // conv (8x8, 4 -> 8, 3x3), conv (8x8, 8 -> 8, 3x3), fc (512 -> 10), batch 16.
    workload::Workload w;
    w.layers = {conv("c0", 8, 4, 8, 3), conv("c1", 8, 8, 8, 3), fc("fc", 512, 10)};
    w.layers[1].inputs = {"c0"};
    w.layers[2].inputs = {"c1"};
    const auto graph = planner::build_layer_graph(w, 16);
    const auto groups = planner::bisect(uniform_cluster(4), flat_exchange(0, 1));
    REQUIRE(groups.size() == 7);  // 4 nodes -> 2 + 2 -> leaves
    const auto compute = linear_compute(graph, {1.0});
    planner::PlannerOptions options;
    options.comm_only = options.equal_split = true;
    const planner::ElementBytes two{2, 2, 2, 2};
    // Data parallel: every group sums every weight gradient; weights are never split.
    // A(W) = 4*8*9 + 8*8*9 + 512*10 = 288 + 576 + 5120 = 5984; 3 groups -> 3 * 5984 * 2 bytes.
    options.kind = planner::PlannerKind::data_parallel;
    CHECK(test::plan_with(graph, uniform_cluster(4), groups, compute, two, options).comm_bytes == 3 * 5984 * 2);
    // OWT: convs I, fc II. Root: conv dW 864; fc partial sums A(F out) = 16 * 10 = 160;
    // c1 (I) -> fc (II): 0.25 (F + E) with F = 16 * 512 = 8192 -> 4096. Sum 5120.
    // Depth 1 (two groups): batch halved for the convs (dW unchanged, 864), fc D_i halved:
    // fc partial sums 160, edge F = 16 * 256 = 4096 -> 0.25 * 8192 = 2048. Each group 3072.
    options.kind = planner::PlannerKind::owt;
    const auto owt = test::plan_with(graph, uniform_cluster(4), groups, compute, two, options);
    CHECK(owt.comm_bytes == (5120 + 2 * 3072) * 2);
    CHECK(owt.choices[0][2].type == PartitionType::in_channels);
    CHECK(owt.node_dims[3][2].in_channels == 128);
    CHECK(owt.node_dims[3][0].batch == 4);
}

TEST_CASE("A grouped convolution keeps its groups whole and syncs only its own weights", "[planner]") {
    // Depthwise conv (8x8, 8 -> 8 channels, 3x3, groups 8), then fc (512 -> 10), batch 16.
    workload::Workload w;
    w.layers = {conv("dw", 8, 8, 8, 3), fc("fc", 512, 10)};
    w.layers[0].groups = 8;
    const auto graph = planner::build_layer_graph(w, 16);
    // A(W) = (C_in / groups) * filters * k_h * k_w = 1 * 8 * 9 = 72, not 8 * 8 * 9.
    CHECK(graph.layers[0].weight_elements(graph.layers[0].dims) == 72);
    const auto groups = planner::bisect(uniform_cluster(4), flat_exchange(0, 1));
    const auto compute = linear_compute(graph, {1.0});
    planner::PlannerOptions options;
    options.comm_only = options.equal_split = true;
    const planner::ElementBytes two{2, 2, 2, 2};
    options.kind = planner::PlannerKind::data_parallel;
    CHECK(test::plan_with(graph, uniform_cluster(4), groups, compute, two, options).comm_bytes == 3 * (72 + 5120) * 2);
    // No planner splits its channels, though every planner below may split the fc's.
    for (const auto kind : {planner::PlannerKind::hypar, planner::PlannerKind::tofu, planner::PlannerKind::accpar}) {
        options.kind = kind;
        const auto plan = test::plan_with(graph, uniform_cluster(4), groups, compute, two, options);
        for (const auto& group : plan.choices) {
            if (group.empty()) continue;
            INFO(planner::to_string(kind));
            CHECK((group[0].type == PartitionType::batch || group[0].type == PartitionType::spatial));
        }
    }
}

TEST_CASE("A grouped convolution's channel share lowers to whole groups at the layer's density", "[planner]") {
    // with_dims once kept the layer's groups while cutting its channels, so a depthwise share
    // lowered to C_in / groups = 0 and a cluster run divided by zero (MobileNetV2 on 4 nodes).
    workload::Workload w;
    w.layers = {conv("dw", 8, 32, 32, 3), conv("g2", 8, 64, 64, 3)};
    w.layers[0].groups = 32;
    w.layers[1].groups = 2;
    const auto graph = planner::build_layer_graph(w, 4);
    const auto macs = [](const workload::Layer& l) { return workload::lower(l, 4).forward_macs(); };
    struct Case {
        std::size_t layer;
        std::uint64_t in, out;
        planner::GroupedShare share;
    };
    for (const Case& c : {Case{0, 8, 32, {8, 1, 1}},     // depthwise, a quarter of its inputs: 8 channels
                          Case{0, 8, 8, {2, 1, 1}},      // 8 x 8 of a diagonal 32 x 32: 2 channels' worth
                          Case{0, 1, 1, {1, 1, 1}},      // never fewer than one group
                          Case{1, 64, 16, {1, 32, 16}},  // 16 filters lie in one group of 32 channels
                          Case{1, 16, 64, {1, 16, 32}}, Case{1, 32, 32, {1, 32, 32}}, Case{1, 64, 64, {2, 32, 32}}}) {
        const planner::PlanLayer& layer = graph.layers[c.layer];
        planner::LayerDims d = layer.dims;
        d.in_channels = c.in;
        d.out_channels = c.out;
        INFO(layer.name << " at " << c.in << " x " << c.out);
        const planner::GroupedShare s = layer.grouped_share(d);
        CHECK(s.groups == c.share.groups);
        CHECK(s.in_per_group == c.share.in_per_group);
        CHECK(s.out_per_group == c.share.out_per_group);
        const workload::Layer lowered = layer.with_dims(d);
        CHECK(lowered.groups == static_cast<int>(s.groups));
        CHECK(macs(lowered) ==
              macs(layer.layer) * s.groups * s.in_per_group * s.out_per_group /
                  (static_cast<std::uint64_t>(layer.layer.groups) * (layer.dims.in_channels / layer.layer.groups) *
                   (layer.dims.out_channels / layer.layer.groups)));
    }
    // A depthwise quarter computes a quarter of the layer's MACs.
    planner::LayerDims quarter = graph.layers[0].dims;
    quarter.in_channels = 8;
    CHECK(4 * macs(graph.layers[0].with_dims(quarter)) == macs(graph.layers[0].layer));
}

TEST_CASE("Bisection cuts at preferred cuts first, then into halves", "[planner]") {
    planner::ClusterView c = uniform_cluster(8);
    c.preferred_cuts = {2};
    const auto groups = planner::bisect(c, flat_exchange(0, 1));
    CHECK(groups[0].nodes.size() == 8);
    CHECK(groups[static_cast<std::size_t>(groups[0].side_a)].nodes == std::vector<std::size_t>{0, 1});
    CHECK(groups[static_cast<std::size_t>(groups[0].side_b)].nodes.size() == 6);
    const auto five = planner::bisect(uniform_cluster(5), flat_exchange(0, 1));
    CHECK(five[static_cast<std::size_t>(five[0].side_a)].nodes.size() == 3);
    CHECK(five.size() == 9);  // 2n - 1 groups for n leaves
}

TEST_CASE("Data parallelism with fewer samples than nodes is a clear error", "[planner]") {
    workload::Workload w;
    w.layers = {fc("fc0", 64, 64)};
    const auto graph = planner::build_layer_graph(w, 2);
    const auto groups = planner::bisect(uniform_cluster(4), flat_exchange(0, 1));
    planner::PlannerOptions options;
    options.kind = planner::PlannerKind::data_parallel;
    for (const auto kind : {planner::PlannerKind::data_parallel, planner::PlannerKind::data_parallel_balanced}) {
        options.kind = kind;
        REQUIRE_THROWS_WITH(
            test::plan_with(graph, uniform_cluster(4), groups, linear_compute(graph, {1.0}), {}, options),
            Catch::Contains("splits the batch of layer 'fc0' over every node: batch 2 is smaller than the 4 nodes"));
    }
    // AccPar splits channels instead.
    options.kind = planner::PlannerKind::accpar;
    CHECK_NOTHROW(test::plan_with(graph, uniform_cluster(4), groups, linear_compute(graph, {1.0}), {}, options));
}

TEST_CASE("Shortcut edges follow the trace's convention", "[planner]") {
    workload::Workload w;
    w.layers = {fc("a", 8, 8), fc("b", 8, 8, {"a"}), fc("c", 8, 8, {"b"}), fc("d", 8, 8, {"c", "b"})};
    auto graph = planner::build_layer_graph(w, 4);
    REQUIRE(graph.layers[3].producers.size() == 2);
    CHECK(graph.layers[3].producers[0].kind == planner::EdgeKind::producer_output);
    CHECK(graph.layers[3].producers[1].kind == planner::EdgeKind::producer_output);
    w.shortcuts = workload::ShortcutConvention::accpar;
    graph = planner::build_layer_graph(w, 4);
    CHECK(graph.layers[3].producers[0].kind == planner::EdgeKind::producer_output);  // the chain edge stays
    CHECK(graph.layers[3].producers[1].kind == planner::EdgeKind::accpar_block);
    CHECK(graph.layers[3].producers[1].from == 1);
}

TEST_CASE("data_parallel_balanced splits the batch by node speed, data_parallel equally", "[planner]") {
    // Node 1 is three times as fast as node 0 on every layer: it takes 3/4 of the batch.
    workload::Workload w;
    w.layers = {fc("fc0", 64, 64), fc("fc1", 64, 64, {"fc0"})};
    const auto graph = planner::build_layer_graph(w, 64);
    planner::ClusterView cluster = uniform_cluster(2);
    cluster.node_type = {0, 1};
    const auto groups = planner::bisect(cluster, flat_exchange(1e-6, 1e9));
    const auto compute = linear_compute(graph, {1e9, 3e9});
    planner::PlannerOptions options;
    options.kind = planner::PlannerKind::data_parallel_balanced;
    const auto balanced = test::plan_with(graph, cluster, groups, compute, {}, options);
    for (const auto& c : balanced.choices[0]) {
        CHECK(c.type == PartitionType::batch);
        CHECK(c.split_a == 16);
    }
    CHECK(balanced.node_dims[1][0].batch == 48);
    options.kind = planner::PlannerKind::data_parallel;
    const auto equal = test::plan_with(graph, cluster, groups, compute, {}, options);
    CHECK(equal.choices[0][0].split_a == 32);
    // Equal halves leave the fast node waiting: 32 samples on the slow node take twice as long as 16.
    CHECK(equal.compute_s[0][0] == Approx(2 * balanced.compute_s[0][0]));
    // --equal-split makes the balanced planner the plain one.
    options.kind = planner::PlannerKind::data_parallel_balanced;
    options.equal_split = true;
    CHECK(test::plan_with(graph, cluster, groups, compute, {}, options).choices[0][0].split_a == 32);
    CHECK(planner::equal_split_matters(planner::PlannerKind::data_parallel_balanced));
    CHECK(!planner::equal_split_matters(planner::PlannerKind::hypar));
}

TEST_CASE("data_parallel_balanced plans whenever the batch has a sample for every node", "[planner]") {
    // One node 20x as fast as seven slow ones: by speed alone the slow side would get 8 x 7/27
    // ~ 2 of 8 samples for its 7 nodes. Each side keeps at least one sample per node instead.
    workload::Workload w;
    w.layers = {fc("fc0", 64, 64), fc("fc1", 64, 64, {"fc0"})};
    for (const std::uint64_t batch : {8u, 9u, 13u, 64u}) {
        INFO("batch " << batch);
        const auto graph = planner::build_layer_graph(w, batch);
        planner::ClusterView cluster = uniform_cluster(8);
        cluster.node_type = {1, 0, 0, 0, 0, 0, 0, 0};
        cluster.preferred_cuts = {1};
        const auto groups = planner::bisect(cluster, flat_exchange(1e-6, 1e9));
        const auto compute = linear_compute(graph, {1e9, 20e9});
        planner::PlannerOptions options;
        options.kind = planner::PlannerKind::data_parallel_balanced;
        const auto plan = test::plan_with(graph, cluster, groups, compute, {}, options);
        std::uint64_t samples = 0;
        for (std::size_t n = 0; n < 8; ++n) {
            CHECK(plan.node_dims[n][0].batch >= 1);
            samples += plan.node_dims[n][0].batch;
        }
        CHECK(samples == batch);
        // The fast node still takes more than an equal share where the batch leaves room.
        if (batch == 64) CHECK(plan.node_dims[0][0].batch > 8);
    }
}

TEST_CASE("Shares stay constant where moving samples costs more than the imbalance", "[planner]") {
    // One feature in and out, so only Type I is feasible. Node 1 is 3x as fast on fc0 and as
    // fast on fc1: node 0's balanced shares are 16 and 32 of the 64 samples; the network's common
    // share is (64/3e9 + 64/1e9) / (2 * 64/1e9 + 64/3e9 + 64/1e9) = 0.4, 26 samples.
    workload::Workload w;
    w.layers = {fc("fc0", 1, 1), fc("fc1", 1, 1, {"fc0"})};
    const auto graph = planner::build_layer_graph(w, 64);
    planner::ClusterView cluster = uniform_cluster(2);
    cluster.node_type = {0, 1};
    const planner::ComputeModel compute = [](std::size_t type, LayerId l, const planner::LayerDims& d) {
        const double speed = type == 1 && l == LayerId(0) ? 3e9 : 1e9;
        const double s = static_cast<double>(d.batch * d.in_channels * d.out_channels) / speed;
        return planner::PhaseSeconds{s, s, s};
    };
    const planner::PlannerOptions accpar;
    // Free links: each layer takes its own balanced share and 16 samples move to node 0.
    auto plan = test::plan_with(graph, cluster, planner::bisect(cluster, flat_exchange(0, 1e30)), compute, {}, accpar);
    CHECK(plan.choices[0][0].split_a == 16);
    CHECK(plan.choices[0][1].split_a == 32);
    CHECK(plan.choices[0][1].forward_in[0].to_a == 16 * 2);  // 16 samples x 1 feature x 2 bytes
    CHECK(plan.choices[0][1].forward_in[0].to_b == 0);
    CHECK(plan.choices[0][0].backward_in[0].to_b == 16 * 2);  // and their errors back
    // Slow links: both layers keep the common share, and nothing moves between them.
    plan = test::plan_with(graph, cluster, planner::bisect(cluster, flat_exchange(0, 1e3)), compute, {}, accpar);
    CHECK(plan.choices[0][0].split_a == 26);
    CHECK(plan.choices[0][1].split_a == 26);
    CHECK(plan.choices[0][1].forward_in[0].empty());
    CHECK(plan.choices[0][0].backward_in[0].empty());
    // data_parallel_balanced always keeps one share per node for the whole network.
    planner::PlannerOptions balanced_dp;
    balanced_dp.kind = planner::PlannerKind::data_parallel_balanced;
    plan = test::plan_with(graph, cluster, planner::bisect(cluster, flat_exchange(0, 1e30)), compute, {}, balanced_dp);
    CHECK(plan.choices[0][0].split_a == 26);
    CHECK(plan.choices[0][1].split_a == 26);
}

namespace {

/// 1 byte per weight, 4 per weight gradient and optimiser value, 2 per activation or gradient.
planner::MemoryModel simple_memory(double capacity_bytes) {
    planner::MemoryModel m;
    m.capacity_bytes = {capacity_bytes};
    m.optimizer_copies = 1;
    m.bytes = [](std::size_t, planner::Stored what, std::uint64_t elements) {
        const double e = static_cast<double>(elements);
        switch (what) {
        case planner::Stored::weights: return e;
        case planner::Stored::weight_gradients:
        case planner::Stored::optimizer_state: return 4 * e;
        case planner::Stored::activations:
        case planner::Stored::gradients: return 2 * e;
        }
        return 0.0;
    };
    return m;
}

}  // namespace

TEST_CASE("Memory: each node's footprint term by term", "[planner][memory]") {
    // Data parallelism over 2 nodes, batch 8: fc0 (4 -> 6), fc1 (6 -> 10). Each node holds all
    // 24 + 60 weights and 4 samples: inputs 4x4 and 4x6, outputs 4x6 and 4x10.
    workload::Workload w;
    w.layers = {fc("fc0", 4, 6), fc("fc1", 6, 10, {"fc0"})};
    const auto graph = planner::build_layer_graph(w, 8);
    const auto cluster = uniform_cluster(2);
    const auto groups = planner::bisect(cluster, flat_exchange(0, 1));
    planner::PlannerOptions options;
    options.kind = planner::PlannerKind::data_parallel;
    const planner::MemoryModel memory = simple_memory(0);
    const auto plan = planner::make_plan(
        {graph, cluster, groups, linear_compute(graph, {1.0}), {}, test::free_all_reduce(), memory, {}, {}, {}, {}},
        options);
    REQUIRE(plan.footprint.size() == 2);
    const planner::Footprint& f = plan.footprint[0];
    CHECK(f.weights == 84);
    CHECK(f.weight_gradients == 4 * 84);
    CHECK(f.optimizer_state == 4 * 84);
    CHECK(f.stashed_activations == 2 * (16 + 24));
    CHECK(f.buffers == 2 * 40 + 2 * 40 + 2 * 24);  // fc1: output, its error, and the input error
    CHECK(f.total() == 84 + 336 + 336 + 80 + 208);
    CHECK(plan.memory_shortfalls.empty());  // capacity 0: not checked
}

TEST_CASE("Memory: a plan that does not fit is refused, and capacity changes AccPar's plan", "[planner][memory]") {
    // One wide fc layer over 4 nodes: data parallelism holds all 256 x 256 weights everywhere.
    workload::Workload w;
    w.layers = {fc("fc0", 256, 256), fc("fc1", 256, 256, {"fc0"})};
    const auto graph = planner::build_layer_graph(w, 16);
    const auto cluster = uniform_cluster(4);
    const auto groups = planner::bisect(cluster, flat_exchange(1e-6, 1e9));
    const auto compute = linear_compute(graph, {1e9});
    planner::PlannerOptions options;
    const auto unconstrained = planner::make_plan(
        {graph, cluster, groups, compute, {}, test::free_all_reduce(), simple_memory(0), {}, {}, {}, {}}, options);
    double fullest = 0;
    for (const auto& f : unconstrained.footprint) fullest = std::max(fullest, f.total());
    // Data parallelism needs 2 x 65536 x (1 + 4 + 4) bytes of weights alone on every node.
    options.kind = planner::PlannerKind::data_parallel;
    const double capacity = 0.6 * 2 * 65536 * 9;
    REQUIRE_THROWS_WITH(
        planner::make_plan(
            {graph, cluster, groups, compute, {}, test::free_all_reduce(), simple_memory(capacity), {"n"}, {}, {}, {}},
            options),
        Catch::Contains("no plan of data_parallel fits in memory: node 0 (n) needs") &&
            Catch::Contains("GiB short (4 nodes over capacity)"));
    // AccPar splits the weights instead, and the plan it returns fits.
    options.kind = planner::PlannerKind::accpar;
    const auto constrained = planner::make_plan(
        {graph, cluster, groups, compute, {}, test::free_all_reduce(), simple_memory(capacity), {"n"}, {}, {}, {}},
        options);
    for (const auto& f : constrained.footprint) CHECK(f.total() <= capacity);
    REQUIRE(fullest > capacity);  // AccPar's plan without a capacity does not fit it
    CHECK(!planner::same_partition(unconstrained, constrained));
    bool splits_weights = false;
    for (const auto& g : constrained.choices)
        for (const auto& c : g) splits_weights |= c.type != PartitionType::batch;
    CHECK(splits_weights);
}

TEST_CASE("Every planner has one descriptor row: its name, its strategy, its kind", "[planner]") {
    std::vector<std::string_view> names;
    for (const planner::PlannerKind kind : planner::kAllPlanners) {
        const planner::PlannerDescriptor& row = planner::descriptor_of(kind);
        INFO(row.name);
        CHECK(row.kind == kind);
        CHECK(row.strategy().kind() == kind);
        CHECK(&planner::strategy_of(kind) == &row.strategy());
        CHECK(planner::to_string(kind) == row.name);
        CHECK(planner::parse_planner(row.name) == kind);
        CHECK(std::find(names.begin(), names.end(), row.name) == names.end());
        names.push_back(row.name);
    }
    CHECK(planner::planner_descriptors().size() == planner::kAllPlanners.size());
    CHECK(planner::enum_names(planner::PlannerKind{}).size() == planner::kAllPlanners.size());
}

TEST_CASE("A carried vector-unit layer's share follows its host's output, or its input before any GEMM",
          "[planner][vector]") {
    workload::Workload w;
    w.layers.push_back(test::conv("c", 8, 4, 6, 3));  // 8 x 8 x 4 -> 6, padding 1
    const planner::PlanLayer p = planner::build_layer_graph(w, 10).layers[0];
    using Share = std::pair<std::uint64_t, std::uint64_t>;
    planner::LayerDims d = p.dims;  // 10 x 4 -> 6, 8 output rows
    CHECK(p.vector_share(d, false) == Share{6 * 8, 6 * 8});
    d.batch = 3;  // Type I: the batch is the share's own (vector_work at d.batch)
    CHECK(p.vector_share(d, false) == Share{6 * 8, 6 * 8});
    d.out_channels = 2;  // Type III: 2 of 6 output channels
    CHECK(p.vector_share(d, false) == Share{2 * 8, 6 * 8});
    CHECK(p.vector_share(d, true) == Share{4 * 8, 4 * 8});  // its whole input
    d = p.dims;
    d.in_channels = 1;  // Type II: the whole output (after the partial sums), a quarter of the input
    CHECK(p.vector_share(d, false) == Share{6 * 8, 6 * 8});
    CHECK(p.vector_share(d, true) == Share{1 * 8, 4 * 8});
    d = p.dims;
    d.out_rows = 3;  // Type IV: 3 output rows read input rows 0..3 (the 3 x 3 window, padding 1)
    CHECK(p.vector_share(d, false) == Share{6 * 3, 6 * 8});
    CHECK(p.vector_share(d, true) == Share{4 * p.input_rows(3), 4 * 8});
}

TEST_CASE("Carried normalisations reduce their statistics where a cut splits them", "[planner][vector]") {
    // fc (tokens 5, 8 -> 6) carrying a layernorm and a softmax on its output; a conv carrying
    // a batchnorm: elements each side receives, by hand.
    workload::Workload w;
    w.layers.push_back(test::fc("fc", 8, 6));
    w.layers.back().tokens = 5;
    workload::Layer ln;
    ln.name = "ln";
    ln.kind = workload::LayerKind::layernorm;
    ln.in_height = 1;
    ln.in_width = 5;
    ln.in_channels = 6;
    workload::Layer sm = ln;
    sm.name = "sm";
    sm.kind = workload::LayerKind::softmax;
    w.hosted = {{ln, 0, false, true, false}, {sm, 0, false, true, false}};
    const planner::PlanLayer p = planner::build_layer_graph(w, 4).layers[0];
    planner::LayerDims half = p.dims;
    half.out_channels = 3;
    using T = planner::PartitionType;
    // Type III splits the rows' channels: 4 samples x 5 rows; 2 + 2 per row forward, 2 + 1 backward.
    CHECK(planner::statistics_elements(p, T::out_channels, half, false) == 4 * 5 * (2 + 2));
    CHECK(planner::statistics_elements(p, T::out_channels, half, true) == 4 * 5 * (2 + 1));
    CHECK(planner::statistics_elements(p, T::batch, p.dims, false) == 0);        // rows stay whole
    CHECK(planner::statistics_elements(p, T::in_channels, p.dims, false) == 0);  // the output is whole

    workload::Workload cw;
    cw.layers.push_back(test::conv("c", 8, 4, 6, 1));
    workload::Layer bn;
    bn.name = "bn";
    bn.kind = workload::LayerKind::batchnorm;
    bn.in_height = bn.in_width = 8;
    bn.in_channels = 6;
    cw.hosted = {{bn, 0, false, true, false}};
    const planner::PlanLayer local = planner::build_layer_graph(cw, 4).layers[0];
    CHECK(planner::statistics_elements(local, T::batch, local.dims, false) == 0);  // each node's own
    cw.hosted[0].synchronised_statistics = true;
    const planner::PlanLayer synced = planner::build_layer_graph(cw, 4).layers[0];
    planner::LayerDims d = synced.dims;
    d.out_channels = 2;  // below a Type III cut, 2 of 6 channels
    CHECK(planner::statistics_elements(synced, T::batch, d, false) == 2 * 2);
    CHECK(planner::statistics_elements(synced, T::spatial, synced.dims, true) == 2 * 6);
    CHECK(planner::statistics_elements(synced, T::out_channels, synced.dims, false) == 0);
}

TEST_CASE("A concatenation's operands reach the consumer as their share of its input", "[planner][vector]") {
    // fc reads cat(a: 8 channels, b: 16), so its edges from a and b are a third and two thirds
    // of its input (a residual add's operands stay whole: test_workload.cpp).
    workload::Workload w;
    for (const auto& [name, filters] : std::vector<std::pair<std::string, int>>{{"a", 8}, {"b", 16}}) {
        w.layers.push_back(test::conv(name, 4, 3, filters, 1));
        w.layers.back().inputs = {workload::kNetworkInput};
    }
    workload::Layer cat;
    cat.name = "cat";
    cat.kind = workload::LayerKind::concat;
    cat.in_height = cat.in_width = 4;
    cat.in_channels = 24;
    cat.inputs = {"a", "b"};
    w.layers.push_back(cat);
    w.layers.push_back(test::fc("fc", 24, 10));
    w.layers.back().tokens = 16;
    const planner::LayerGraph graph = planner::build_layer_graph(workload::without_vector_layers(w), 2);
    REQUIRE(graph.layers.size() == 3);
    const auto& edges = graph.layers[2].producers;
    REQUIRE(edges.size() == 2);
    CHECK(edges[0].from == 0);
    CHECK(edges[0].share == Approx(8.0 / 24));
    CHECK(edges[1].from == 1);
    CHECK(edges[1].share == Approx(16.0 / 24));
}
