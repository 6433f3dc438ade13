// SPDX-License-Identifier: MIT
// Weight-gradient replica sets against a per-element reference, and the schedule's gradient
// all-reduces on the comm stream, overlapping the backward pass.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <random>
#include <set>
#include <tuple>

#include "cluster/cluster.h"
#include "interconnect/topology.h"
#include "interconnect/replay.h"
#include "planner/gradient_sync.h"
#include "planner/hierarchy.h"
#include "planner/prediction.h"
#include "planner/replicas.h"
#include "planner/strategy.h"
#include "planner/schedule.h"
#include "support/plan_helpers.h"
#include "support/systemc_fixture.h"

using namespace fastsim;
using planner::PartitionType;

namespace {

/// A plan over `nodes` nodes for one layer of `dims`: each group (bisect's order) takes the
/// choice `choose` makes for the layer's extent at that group.
template <typename Choose>
planner::Plan plan_by(std::size_t nodes, const planner::LayerDims& dims, Choose choose) {
    planner::Plan plan;
    plan.groups = planner::bisect(test::uniform_cluster(nodes), test::flat_exchange(0, 1));
    plan.choices.resize(plan.groups.size());
    std::vector<planner::LayerDims> at(plan.groups.size());
    at[0] = dims;
    for (std::size_t g = 0; g < plan.groups.size(); ++g) {
        if (plan.groups[g].leaf()) continue;
        planner::LayerChoice c;
        std::tie(c.type, c.split_a) = choose(at[g]);
        c.dims = at[g];
        plan.choices[g] = {c};
        auto a = at[g], b = at[g];
        a.along(c.type) = c.split_a;
        b.along(c.type) = at[g].along(c.type) - c.split_a;
        at[static_cast<std::size_t>(plan.groups[g].side_a)] = a;
        at[static_cast<std::size_t>(plan.groups[g].side_b)] = b;
    }
    return plan;
}

/// A plan over `nodes` nodes with the choices given per group (bisect's order) for one layer.
planner::Plan hand_plan(std::size_t nodes, const std::vector<std::pair<PartitionType, std::uint64_t>>& choices,
                        const planner::LayerDims& dims) {
    std::size_t next = 0;
    return plan_by(nodes, dims, [&](const planner::LayerDims&) { return choices.at(next++); });
}

planner::LayerGraph one_fc(int in, int out, std::uint64_t batch) {
    workload::Workload w;
    w.layers = {test::fc("fc", in, out)};
    return planner::build_layer_graph(w, batch);
}

/// Per weight element: the nodes holding it, by descending the groups from the root (Type I:
/// both sides; II: the side whose rows contain i; III: the side whose columns contain o).
std::map<std::set<std::size_t>, std::uint64_t> reference_sets(const planner::Plan& plan, std::uint64_t in,
                                                              std::uint64_t out) {
    std::map<std::set<std::size_t>, std::uint64_t> sets;
    for (std::uint64_t i = 0; i < in; ++i)
        for (std::uint64_t o = 0; o < out; ++o) {
            std::set<std::size_t> holders;
            std::vector<std::tuple<std::size_t, std::uint64_t, std::uint64_t>> stack{
                {0, i, o}};  // group, i, o relative
            while (!stack.empty()) {
                const auto [g, ri, ro] = stack.back();
                stack.pop_back();
                const planner::Group& group = plan.groups[g];
                if (group.leaf()) {
                    holders.insert(group.nodes.front());
                    continue;
                }
                const auto& c = plan.choices[g][0];
                const auto a = static_cast<std::size_t>(group.side_a), b = static_cast<std::size_t>(group.side_b);
                if (c.type == PartitionType::batch) {
                    stack.emplace_back(a, ri, ro);
                    stack.emplace_back(b, ri, ro);
                } else if (c.type == PartitionType::in_channels) {
                    ri < c.split_a ? stack.emplace_back(a, ri, ro) : stack.emplace_back(b, ri - c.split_a, ro);
                } else {
                    ro < c.split_a ? stack.emplace_back(a, ri, ro) : stack.emplace_back(b, ri, ro - c.split_a);
                }
            }
            if (holders.size() > 1) ++sets[holders];
        }
    return sets;
}

std::map<std::set<std::size_t>, std::uint64_t> as_map(const std::vector<planner::ReplicaSet>& sets) {
    std::map<std::set<std::size_t>, std::uint64_t> m;
    for (const auto& s : sets) {
        std::set<std::size_t> nodes;
        for (const NodeId n : s.nodes) nodes.insert(n.value());
        m[nodes] += s.elements;
    }
    return m;
}

}  // namespace

TEST_CASE("Replica sets: data parallelism, aligned halves and unequal sub-splits by hand", "[planner][schedule]") {
    const auto graph = one_fc(4, 8, 16);
    const planner::LayerDims dims{16, 4, 8};
    using P = PartitionType;
    // Data parallelism over 4 nodes: one all-reduce of all 32 weights.
    auto sets = planner::weight_replica_sets(graph, hand_plan(4, {{P::batch, 8}, {P::batch, 4}, {P::batch, 4}}, dims),
                                             LayerId(0));
    REQUIRE(sets.size() == 1);
    CHECK(sets[0].nodes == test::node_ids({0, 1, 2, 3}));
    CHECK(sets[0].elements == 32);
    // Type I at the root, Type III below with equal halves: {0, 2} and {1, 3}, 16 weights each.
    sets = planner::weight_replica_sets(
        graph, hand_plan(4, {{P::batch, 8}, {P::out_channels, 4}, {P::out_channels, 4}}, dims), LayerId(0));
    REQUIRE(sets.size() == 2);
    CHECK(sets[0].nodes == test::node_ids({0, 2}));
    CHECK(sets[1].nodes == test::node_ids({1, 3}));
    CHECK(sets[0].elements == 16);
    // Unequal sub-splits: side A cuts the columns at 4, side B at 3. Columns 0-2 are on {0, 2},
    // column 3 on {0, 3}, columns 4-7 on {1, 3}: three all-reduces, node 0 and 3 in two each.
    sets = planner::weight_replica_sets(
        graph, hand_plan(4, {{P::batch, 8}, {P::out_channels, 4}, {P::out_channels, 3}}, dims), LayerId(0));
    CHECK(as_map(sets) == std::map<std::set<std::size_t>, std::uint64_t>{{{0, 2}, 12}, {{0, 3}, 4}, {{1, 3}, 16}});
    // Fully split (II then III): nothing is held twice.
    CHECK(planner::weight_replica_sets(
              graph, hand_plan(4, {{P::in_channels, 2}, {P::out_channels, 4}, {P::out_channels, 4}}, dims), LayerId(0))
              .empty());
}

TEST_CASE("Gradient buckets fill per replica set in backward order and close at the cap", "[planner][schedule]") {
    const std::vector<NodeId> a = test::node_ids({0, 1}), b = test::node_ids({2, 3});
    planner::GradientBuckets buckets(100, 2.0);  // 100 bytes: 50 elements
    CHECK(buckets.add({{a, 30, 3, 4}}).empty());
    CHECK(buckets.add({{b, 10, 1, 1}}).empty());
    // a reaches 60 elements (120 bytes >= 100): its bucket goes, both gradients in one message.
    const auto full = buckets.add({{a, 30, 5, 6}, {b, 5, 1, 1}});
    REQUIRE(full.size() == 1);
    CHECK(full[0].nodes == a);
    CHECK(full[0].elements == 60);
    CHECK(full[0].factor_rows == 8);
    CHECK(full[0].factor_cols == 10);
    // One element short of the cap stays open; the next gradient of a opens a new bucket.
    CHECK(buckets.add({{a, 49, 1, 1}}).empty());
    const auto rest = buckets.flush();
    REQUIRE(rest.size() == 2);  // in the order they were opened
    CHECK(rest[0].nodes == b);
    CHECK(rest[0].elements == 15);
    CHECK(rest[1].nodes == a);
    CHECK(rest[1].elements == 49);
    CHECK(buckets.flush().empty());
    // A cap of 0: every gradient on its own, as given.
    planner::GradientBuckets none(0, 2.0);
    const auto alone = none.add({{a, 1, 0, 0}, {b, 2, 0, 0}});
    REQUIRE(alone.size() == 2);
    CHECK(alone[1].elements == 2);
    CHECK(none.flush().empty());
}

TEST_CASE("Replica sets equal a per-element count on random plans", "[planner][schedule]") {
    std::mt19937_64 rng(5);
    std::uniform_int_distribution<int> type(0, 2);
    for (int trial = 0; trial < 200; ++trial) {
        const std::size_t nodes = 2 + static_cast<std::size_t>(trial % 6);
        const std::uint64_t in = 3 + static_cast<std::uint64_t>(trial % 7),
                            out = 4 + static_cast<std::uint64_t>(trial % 5);
        const planner::LayerDims dims{64, in, out};
        // Random choices, each split drawn within the group's extent.
        const planner::Plan plan = plan_by(nodes, dims, [&](const planner::LayerDims& extent) {
            PartitionType t;
            do t = PartitionType(type(rng));
            while (extent.along(t) < 2);
            return std::pair{t, std::uniform_int_distribution<std::uint64_t>(1, extent.along(t) - 1)(rng)};
        });
        INFO("trial " << trial << ", " << nodes << " nodes, " << in << " x " << out);
        REQUIRE(as_map(planner::weight_replica_sets(one_fc(int(in), int(out), 64), plan, LayerId(0))) ==
                reference_sets(plan, in, out));
    }
}

TEST_CASE_METHOD(test::FreshSimContext, "Gradient all-reduces run on the comm stream and overlap the backward pass",
                 "[planner][schedule]") {
    // Data parallelism over 4 nodes on a 25 GB/s ring: two fc layers of 1024 x 1024 weights
    // (4 MiB of fp32 gradients each); every phase 1 ms.
    workload::Workload w;
    w.layers = {test::fc("fc0", 1024, 1024), test::fc("fc1", 1024, 1024, {"fc0"})};
    const auto graph = planner::build_layer_graph(w, 64);
    const auto view = test::uniform_cluster(4);
    const auto groups = planner::bisect(view, test::flat_exchange(1e-6, 25e9));
    planner::PlannerOptions options;
    options.kind = planner::PlannerKind::data_parallel;
    planner::ElementBytes bytes;
    bytes.weight_gradients = 4;
    const auto plan = test::plan_with(graph, view, groups, test::linear_compute(graph, {1.0}), bytes, options);
    const Picoseconds phase_ps(1'000'000'000);
    const auto compute_ps = [&](NodeId, LayerId) { return planner::PhasePicoseconds{phase_ps, phase_ps, phase_ps}; };
    const interconnect::Topology ring = interconnect::Topology::ring(4, {25.0, 500.0, 1.0});
    interconnect::AllReduceChooser ring_only(ring, interconnect::AllReduceAlgorithm::ring);
    planner::SchemeSync sync(ring_only, {}, {});
    const auto programs = planner::build_schedule(graph, plan, 4, compute_ps, sync);
    const std::uint64_t gradient_bytes = 1024 * 1024 * 4;
    for (const auto& p : programs) {
        // Main stream: 6 computes, 2 Signals, 2 final WaitFors; comm stream: per layer a WaitFor,
        // a ring all-reduce (6 steps of a Send and a Recv) and a Signal.
        CHECK(p.ops.size() == 10);
        CHECK(p.comm_ops.size() == 2 * (1 + 12 + 1));
        std::uint64_t sent = 0;
        for (const auto& op : p.comm_ops)
            if (const auto* s = std::get_if<interconnect::Send>(&op)) sent += s->bytes;
        CHECK(sent == 2 * 2 * 3 * gradient_bytes / 4);  // two layers, 2(p-1)/p of the gradient each
    }
    const auto r = cluster::run_cluster(ring, programs);
    // The plain C++ replay of both streams times the same programs as the SystemC executor.
    interconnect::Network network(ring);
    std::vector<NodeId> identity;
    for (std::size_t n = 0; n < 4; ++n) identity.emplace_back(n);
    std::vector<Picoseconds> ends;
    CHECK(interconnect::replay_messages(network, programs, identity, &ends) == r.end_ps);
    for (std::size_t n = 0; n < 4; ++n) CHECK(ends[n] == r.nodes[n].finish_ps);
    // fc1's all-reduce (ready at 4 ms) overlaps fc0's backward (4-6 ms); fc0's (ready at 6 ms)
    // is exposed. A ring all-reduce of 4 MiB over 4 nodes: 6 steps of 1 MiB at 25 GB/s + 0.5 us.
    const double all_reduce_s = 6 * (0.5e-6 + double(gradient_bytes / 4) / 25e9);
    CHECK(double(r.end_ps.count()) * 1e-12 == Approx(6e-3 + all_reduce_s).epsilon(1e-3));
    for (const auto& node : r.nodes) CHECK(double(node.wait_ps.count()) * 1e-12 == Approx(all_reduce_s).epsilon(1e-3));
}

TEST_CASE("A prediction given up past a bound is infinite and one past the step is exact", "[planner][schedule]") {
    // AccPar predicts its DP's plans only as far as the best candidate it has: predict_step and
    // plan_hierarchy with a bound below the step report +infinity; with one above, the same
    // plan and step as without.
    workload::Workload w;
    w.layers = {test::fc("fc0", 1024, 1024), test::fc("fc1", 1024, 1024, {"fc0"}), test::fc("fc2", 1024, 512, {"fc1"})};
    const auto graph = planner::build_layer_graph(w, 64);
    const auto view = test::uniform_cluster(8);
    const auto groups = planner::bisect(view, test::flat_exchange(1e-6, 25e9));
    const interconnect::Topology ring = interconnect::Topology::ring(8, {25.0, 500.0, 1.0});
    interconnect::AllReduceChooser chooser(ring, std::nullopt);
    planner::SchemeSync sync(chooser, {}, {});
    planner::ElementBytes bytes;
    bytes.weight_gradients = 4;
    const planner::ComputeModel compute = test::linear_compute(graph, {1e10});  // 1e10 MAC/s
    const planner::PlanningInputs in{graph, view, groups, compute, bytes, &sync, {}, {}, {}, {}, {}};
    planner::PlannerOptions options;
    options.kind = planner::PlannerKind::data_parallel_balanced;  // balanced: with calibration rounds
    const planner::PartitionRules rules = planner::strategy_of(options.kind).rules(options);
    const planner::Plan unbounded = planner::plan_hierarchy(in, rules, options);
    REQUIRE(unbounded.step_s > 0);
    REQUIRE(unbounded.step_s < std::numeric_limits<double>::infinity());
    // The synchronisations must matter for the bound to cut them short.
    REQUIRE(*std::max_element(unbounded.sync_comm_s.begin(), unbounded.sync_comm_s.end()) > 0);
    // Above the step: the same plan (on a SchemeSync that has not replayed these steps whole).
    planner::SchemeSync fresh_above(chooser, {}, {});
    planner::PlanningInputs above_in = in;
    above_in.gradient_sync = &fresh_above;
    const planner::Plan above =
        planner::plan_hierarchy(above_in, rules, options, 0, planner::kRefinementRounds, 1.01 * unbounded.step_s);
    CHECK(planner::same_partition(above, unbounded));
    CHECK(above.step_s == unbounded.step_s);
    // Below the step (on a SchemeSync that has not replayed these steps whole before): never.
    planner::SchemeSync fresh(chooser, {}, {});
    planner::PlanningInputs fresh_in = in;
    fresh_in.gradient_sync = &fresh;
    const planner::Plan below =
        planner::plan_hierarchy(fresh_in, rules, options, 0, planner::kRefinementRounds, 0.5 * unbounded.step_s);
    CHECK(below.step_s == std::numeric_limits<double>::infinity());
    // predict_step alike, and the step after a given-up one is exact again.
    planner::SchemeSync fresh_again(chooser, {}, {});
    CHECK(planner::predict_step(graph, unbounded, view.node_type, compute, fresh_again, {}, 0.5 * unbounded.step_s)
              .step_s == std::numeric_limits<double>::infinity());
    CHECK(planner::predict_step(graph, unbounded, view.node_type, compute, fresh_again).step_s == unbounded.step_s);
    // Under a delayed update the step may end before its synchronisations: no bound applies.
    planner::SyncScheme delayed;
    delayed.staleness = 1;
    planner::SchemeSync stale(chooser, delayed, {});
    planner::SchemeSync stale_bounded(chooser, delayed, {});
    const double stale_step = planner::predict_step(graph, unbounded, view.node_type, compute, stale).step_s;
    CHECK(
        planner::predict_step(graph, unbounded, view.node_type, compute, stale_bounded, {}, 0.5 * stale_step).step_s ==
        stale_step);
}

TEST_CASE("An unwalked hierarchy plan is the DP's plan with its footprint and no step", "[planner][schedule]") {
    // alpa's block costs take the DP's choices and footprint and walk a micro-batch themselves:
    // plan_hierarchy_unwalked must make the plan plan_hierarchy makes without calibration rounds,
    // with the same communication and memory, and leave the step unwalked (NaN, no layer times).
    workload::Workload w;
    w.layers = {test::fc("fc0", 2048, 1024), test::fc("fc1", 1024, 4096, {"fc0"}), test::fc("fc2", 4096, 512, {"fc1"})};
    const auto graph = planner::build_layer_graph(w, 64);
    const auto view = test::uniform_cluster(8);
    const auto groups = planner::bisect(view, test::flat_exchange(1e-6, 25e9));
    const interconnect::Topology ring = interconnect::Topology::ring(8, {25.0, 500.0, 1.0});
    interconnect::AllReduceChooser chooser(ring, std::nullopt);
    planner::SchemeSync sync(chooser, {}, {});
    planner::ElementBytes bytes;
    bytes.weight_gradients = bytes.activations = bytes.gradients = bytes.partial_sums = 4;
    const planner::ComputeModel compute = test::linear_compute(graph, {1e10});
    const planner::PlanningInputs in{graph, view, groups, compute, bytes, &sync, {}, {}, {}, {}, {}};
    for (const planner::PlannerKind kind : {planner::PlannerKind::accpar, planner::PlannerKind::owt}) {
        planner::PlannerOptions options;
        options.kind = kind;
        const planner::PartitionRules rules = planner::strategy_of(kind).rules(options);
        const planner::Plan walked = planner::plan_hierarchy(in, rules, options, 0, /*calibration_rounds=*/0);
        const planner::Plan unwalked = planner::plan_hierarchy_unwalked(in, rules, options);
        CHECK(planner::same_partition(unwalked, walked));
        REQUIRE(walked.comm_bytes > 0);
        CHECK(unwalked.comm_bytes == walked.comm_bytes);
        CHECK(unwalked.forward_comm_s == walked.forward_comm_s);
        CHECK(unwalked.backward_comm_s == walked.backward_comm_s);
        REQUIRE(unwalked.footprint.size() == walked.footprint.size());
        for (std::size_t n = 0; n < walked.footprint.size(); ++n)
            CHECK(unwalked.footprint[n].total() == walked.footprint[n].total());
        CHECK(walked.step_s > 0);
        CHECK(std::isnan(unwalked.step_s));
        CHECK(unwalked.layer_step_s.empty());
        // Walking the unwalked plan gives the walked plan's step.
        CHECK(planner::predict_step(graph, unwalked, view.node_type, compute, sync).step_s == walked.step_s);
    }
}

TEST_CASE_METHOD(test::FreshSimContext,
                 "A boundary tensor received in another format is converted after its receives, planned and simulated",
                 "[planner][schedule]") {
    // Two nodes, model parallelism: fc0 and fc1 (1024 x 1024) split by output channels, so fc1
    // gathers fc0's output halves (F) forward and fc0's input error (E) comes back as partial
    // sums. Node 1 (side B) keeps another format: every value it receives of F costs its
    // converter 2 ns, plus 100 ns a message; node 0 receives in its own format.
    workload::Workload w;
    w.layers = {test::fc("fc0", 1024, 1024), test::fc("fc1", 1024, 1024, {"fc0"})};
    const auto graph = planner::build_layer_graph(w, 64);
    const auto view = test::uniform_cluster(2);
    const auto flat = test::flat_exchange(1e-6, 25e9);
    // Node 0 keeps 4-bit tensors, node 1 6-bit ones; both directions carry 4 bits, 0.5 bytes a value.
    const auto nodes = std::make_shared<const std::vector<planner::NodeFormat>>(
        std::vector<planner::NodeFormat>{{{4, 4}, 1e-9, 1e-8}, {{6, 6}, 2e-9, 1e-7}});
    const auto groups =
        planner::bisect(view, [&](const std::vector<std::size_t>& a, const std::vector<std::size_t>& b) {
            planner::ExchangeCost x = flat(a, b);
            for (std::size_t k = 0; k < 2; ++k) x.into_a[k] = x.into_b[k] = {0.5, 4, k, nodes};
            return x;
        });
    planner::ElementBytes bytes;
    const auto compute = test::linear_compute(graph, {1e10});
    const interconnect::Topology link = interconnect::Topology::ring(2, {25.0, 1000.0, 1.0});
    interconnect::AllReduceChooser chooser(link, std::nullopt);
    planner::SchemeSync sync(chooser, {}, {});
    planner::HierarchyDecisions given;  // both layers: Type III, halves
    given.groups = {
        {{PartitionType::out_channels, 512, {}, {}, {}}, {PartitionType::out_channels, 512, {}, {}, {}}}, {}, {}};
    const planner::PlanningInputs in{graph, view, groups, compute, bytes, &sync, {}, {}, {}, {}, {}};
    const planner::Plan plan = planner::evaluate_hierarchy(in, given, {});
    const planner::SideVolumes& f = plan.choices[0][1].forward_in.at(0);
    REQUIRE(f.to_b > 0);
    CHECK(f.to_b == Approx(512.0 * 64 * 0.5));  // fc0's other half of the output, 0.5 bytes a value
    const double convert_s = 1e-7 + 2e-9 * (f.to_b / 0.5);
    // The schedule: node 1 computes the conversion after fc1's receives; node 0 does not.
    const auto compute_ps = [&](NodeId n, LayerId l) {
        const planner::PhaseSeconds s = compute(0, l, plan.node_dims[n.value()][l.value()]);
        planner::PhasePicoseconds ps{};
        for (std::size_t p = 0; p < ps.size(); ++p) ps[p] = Picoseconds(std::llround(s[p] * 1e12));
        return ps;
    };
    const auto programs = planner::build_schedule(graph, plan, 2, compute_ps, sync);
    const std::uint32_t fc1_forward = planner::step_label(LayerId(1), planner::StepPart::forward);
    const auto conversions = [&](std::size_t node) {
        std::vector<double> after_receive;
        bool received = false;
        for (const auto& op : programs[node].ops) {
            if (const auto* r = std::get_if<interconnect::Recv>(&op); r && r->label == fc1_forward) received = true;
            if (const auto* c = std::get_if<interconnect::Compute>(&op); c && c->label == fc1_forward && received) {
                after_receive.push_back(to_seconds(c->duration_ps));
                received = false;
            }
        }
        return after_receive;
    };
    // Node 1: the conversion, then fc1's forward compute; node 0: the forward compute alone.
    REQUIRE(conversions(1).size() == 1);
    CHECK(conversions(1)[0] == Approx(convert_s).epsilon(1e-9));
    const double fc1_forward_s = compute(0, LayerId(1), plan.node_dims[0][1])[0];
    REQUIRE(conversions(0).size() == 1);
    CHECK(conversions(0)[0] == Approx(fc1_forward_s).epsilon(1e-9));
    // The prediction walks the same conversion.
    const auto r = cluster::run_cluster(link, programs);
    const planner::StepPrediction predicted = planner::predict_step(graph, plan, view.node_type, compute, sync);
    CHECK(predicted.step_s == Approx(to_seconds(r.end_ps)).epsilon(1e-9));
}
