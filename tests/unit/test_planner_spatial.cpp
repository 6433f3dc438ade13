// SPDX-License-Identifier: MIT
// Type IV (spatial) partitions: the lowering of a share of a convolution's output rows, the
// halo each side reads, the image-row layouts against an element-by-element count, and the
// planners that pick it.
#include <catch2/catch.hpp>

#include <random>

#include "planner/layer_graph.h"
#include "planner/ownership.h"
#include "planner/planner.h"
#include "planner/replicas.h"
#include "planner/strategy.h"
#include "support/plan_helpers.h"

using namespace fastsim;
using planner::PartitionType;
using test::flat_exchange;
using test::linear_compute;
using test::uniform_cluster;

namespace {

workload::Layer conv_layer(const std::string& name, int height, int width, int c_in, int filters, int kernel,
                           int stride, int padding, std::vector<std::string> inputs = {}) {
    workload::Layer l;
    l.name = name;
    l.kind = workload::LayerKind::conv;
    l.in_height = height;
    l.in_width = width;
    l.in_channels = c_in;
    l.filters = filters;
    l.kernel_height = l.kernel_width = kernel;
    l.stride = stride;
    l.padding = padding;
    l.inputs = std::move(inputs);
    return l;
}

planner::PlanLayer plan_layer(const workload::Layer& l, std::uint64_t batch) {
    workload::Workload w;
    w.layers = {l};
    return planner::build_layer_graph(w, batch).layers.front();
}

std::uint64_t macs(const planner::PlanLayer& pl, const planner::LayerDims& d) {
    return workload::lower(pl.with_dims(d), d.batch).forward_macs();
}

}  // namespace

TEST_CASE("Type IV shares of a convolution's output rows sum to its MACs exactly", "[planner][spatial]") {
    // Same padding, stride 2 with padding, a large stride without padding, 1x1, and a width
    // that the stride does not divide.
    const std::vector<workload::Layer> layers{
        conv_layer("k3s1p1", 16, 12, 3, 8, 3, 1, 1), conv_layer("k7s2p3", 224, 224, 3, 64, 7, 2, 3),
        conv_layer("k11s4p0", 227, 227, 3, 96, 11, 4, 0), conv_layer("k1s1", 14, 14, 32, 16, 1, 1, 0),
        conv_layer("k3s2p1", 15, 9, 4, 4, 3, 2, 1)};
    for (const workload::Layer& l : layers) {
        INFO(l.name);
        const planner::PlanLayer pl = plan_layer(l, 2);
        REQUIRE(pl.dims.out_rows == static_cast<std::uint64_t>(l.out_height()));
        REQUIRE(pl.spatial_splittable());
        const std::uint64_t whole = macs(pl, pl.dims);
        CHECK(whole == workload::lower(l, 2).forward_macs());
        for (std::uint64_t a = 1; a < pl.dims.out_rows; ++a) {
            planner::LayerDims da = pl.dims, db = pl.dims;
            da.out_rows = a;
            db.out_rows = pl.dims.out_rows - a;
            const workload::Layer share = pl.with_dims(da);
            REQUIRE(static_cast<std::uint64_t>(share.out_height()) == a);
            REQUIRE(share.out_width() == l.out_width());
            REQUIRE(macs(pl, da) + macs(pl, db) == whole);
            // A second cut of side B (a deeper level), together with channel splits.
            if (db.out_rows >= 2) {
                planner::LayerDims b1 = db, b2 = db;
                b1.out_rows = db.out_rows / 2;
                b2.out_rows = db.out_rows - b1.out_rows;
                REQUIRE(macs(pl, da) + macs(pl, b1) + macs(pl, b2) == whole);
            }
        }
    }
    // A 1-row output cannot be split; an fc has no image rows.
    CHECK_FALSE(plan_layer(conv_layer("one_row", 3, 8, 4, 4, 3, 1, 0), 1).spatial_splittable());
    CHECK_FALSE(plan_layer(test::fc("fc", 8, 8), 1).spatial_splittable());
}

TEST_CASE("Type IV halo: the input rows both sides read", "[planner][spatial]") {
    // 3x3, stride 1, padding 1 on 8 rows, split 4 | 4: A's outputs read rows -1..4, B's 3..8.
    auto pl = plan_layer(conv_layer("k3s1p1", 8, 5, 3, 4, 3, 1, 1), 2);
    auto rows = pl.spatial_input_rows(pl.dims, 4);
    CHECK(rows.height == 8);
    CHECK(rows.a_end == 5);
    CHECK(rows.b_begin == 3);
    CHECK(rows.halo() == 2);                                                   // k_h - stride
    CHECK(planner::spatial_halo_elements(pl, pl.dims, 4) == 2.0 * 3 * 2 * 5);  // batch x C_in x halo x W_in
    // The padding clips at the image's edges: split 1 | 7, A reads rows 0..1, B 0..7.
    rows = pl.spatial_input_rows(pl.dims, 1);
    CHECK(rows.a_end == 2);
    CHECK(rows.b_begin == 0);
    // 1x1, stride 1: no halo.
    pl = plan_layer(conv_layer("k1s1", 56, 56, 64, 64, 1, 1, 0), 1);
    for (const std::uint64_t split : {1, 17, 28, 55}) {
        CHECK(pl.spatial_input_rows(pl.dims, split).halo() == 0);
        CHECK(planner::spatial_halo_elements(pl, pl.dims, split) == 0);
    }
    // 3x3, stride 2, padding 1 on 224 rows (112 out), split 56: A reads up to row 112, B from 111.
    pl = plan_layer(conv_layer("k3s2p1", 224, 224, 3, 64, 3, 2, 1), 1);
    rows = pl.spatial_input_rows(pl.dims, 56);
    CHECK(rows.a_end == 112);
    CHECK(rows.b_begin == 111);
    CHECK(rows.halo() == 1);
    // Stride >= kernel: no row is read twice.
    pl = plan_layer(conv_layer("k2s2", 16, 16, 3, 8, 2, 2, 0), 1);
    CHECK(pl.spatial_input_rows(pl.dims, 3).halo() == 0);
    CHECK(pl.spatial_input_rows(pl.dims, 3).a_end == 6);
    CHECK(pl.spatial_input_rows(pl.dims, 3).b_begin == 6);
    // Below a Type IV cut the layer's input is the window its rows read: 5 output rows of the
    // 3x3 stride 1 layer read 7 rows, without padding inside the window.
    pl = plan_layer(conv_layer("k3s1p1", 32, 4, 2, 2, 3, 1, 1), 1);
    planner::LayerDims part = pl.dims;
    part.out_rows = 5;
    CHECK(pl.input_rows(5) == 7);
    CHECK(pl.input_elements(part) == 1 * 2 * 7 * 4);
    CHECK(pl.output_elements(part) == 1 * 2 * 5 * 4);
    rows = pl.spatial_input_rows(part, 2);
    CHECK(rows.a_end == 4);
    CHECK(rows.b_begin == 2);
}

namespace {

/// Element-by-element reference for a tensor of samples x (channels x height x width),
/// channel-major: does side A (or B) of a layer choosing `c` hold element (r, col) of its
/// input (or output)? Written out from docs/planner.md, "Ownership", independently of
/// models/planner/ownership.cpp.
bool holds(const planner::SplitChoice& c, bool input, bool side_a, std::uint64_t r, std::uint64_t col,
           const planner::TensorShape& s) {
    const auto first = [](double share, std::uint64_t i, std::uint64_t extent) {
        return static_cast<double>(i) < std::round(share * static_cast<double>(extent));
    };
    const std::uint64_t image_row = col % (s.height * s.width) / s.width;
    switch (c.type) {
    case PartitionType::batch: return first(c.alpha, r, s.samples) == side_a;
    case PartitionType::in_channels: return input ? first(c.alpha, col, s.columns()) == side_a : true;
    case PartitionType::out_channels: return input ? true : first(c.alpha, col, s.columns()) == side_a;
    case PartitionType::spatial: {
        const double a_end = input && c.input_a_end >= 0 ? c.input_a_end : c.alpha;
        const double b_begin = input && c.input_b_begin >= 0 ? c.input_b_begin : c.alpha;
        return side_a ? first(a_end, image_row, s.height) : !first(b_begin, image_row, s.height);
    }
    }
    return false;
}

}  // namespace

TEST_CASE("Image-row ownership equals an element-by-element count on random cases", "[planner][ownership][spatial]") {
    std::mt19937_64 rng(23);
    std::uniform_int_distribution<std::uint64_t> small(1, 4), height(2, 7);
    std::uniform_real_distribution<double> share(0.05, 0.95);
    std::uniform_int_distribution<int> type(0, 3);
    for (int trial = 0; trial < 600; ++trial) {
        const planner::TensorShape shape{small(rng) + 1, small(rng), height(rng), small(rng)};
        const auto choice = [&] {
            planner::SplitChoice c{PartitionType(type(rng)), share(rng)};
            if (c.type == PartitionType::spatial && trial % 3 != 0) {  // a halo: B's rows begin before A's end
                c.input_a_end = std::min(1.0, c.alpha + 0.3 * share(rng));
                c.input_b_begin = std::max(0.0, c.alpha - 0.3 * share(rng));
            }
            return c;
        };
        const planner::SplitChoice from = choice(), to = choice();
        const bool block = trial % 2 == 1;
        const auto x = planner::edge_transfer(
            block ? planner::EdgeKind::accpar_block : planner::EdgeKind::producer_output, from, to, shape);
        const bool from_input = block, to_input = !block;
        double f_a = 0, f_b = 0, e_a = 0, e_b = 0;
        for (std::uint64_t r = 0; r < shape.samples; ++r)
            for (std::uint64_t col = 0; col < shape.columns(); ++col)
                for (const bool a : {true, false}) {
                    const bool from_has = holds(from, from_input, a, r, col, shape);
                    const bool to_has = holds(to, to_input, a, r, col, shape);
                    (a ? f_a : f_b) += to_has && !from_has;
                    (a ? e_a : e_b) += from_has && !to_has;
                }
        INFO("trial " << trial << ": " << planner::to_string(from.type) << "@" << from.alpha << " -> "
                      << planner::to_string(to.type) << "@" << to.alpha << (block ? " block " : " chain ")
                      << shape.samples << "x" << shape.channels << "x" << shape.height << "x" << shape.width);
        REQUIRE(x.forward.to_a == f_a);
        REQUIRE(x.forward.to_b == f_b);
        REQUIRE(x.backward.to_a == e_a);
        REQUIRE(x.backward.to_b == e_b);
    }
}

TEST_CASE("Image rows by hand: a channel split against a row split", "[planner][ownership][spatial]") {
    // 1 sample, 2 channels of 4 rows x 3 columns = 24 columns. Type III at 1/2 leaves channel 0
    // on A, channel 1 on B; Type IV at 1/2 (no halo) needs rows 0-1 of both channels on A.
    const planner::TensorShape shape{1, 2, 4, 3};
    const auto x = planner::edge_transfer(planner::EdgeKind::producer_output, {PartitionType::out_channels, 0.5},
                                          {PartitionType::spatial, 0.5}, shape);
    CHECK(x.forward.to_a == 6);  // rows 0-1 of channel 1
    CHECK(x.forward.to_b == 6);  // rows 2-3 of channel 0
    CHECK(x.backward.to_a == 6);
    CHECK(x.backward.to_b == 6);
    // With a halo of one row each way (A reads rows 0-2, B rows 1-3), from a Type IV producer at 1/2.
    const planner::SplitChoice halo{PartitionType::spatial, 0.5, 0.75, 0.25};
    const auto h =
        planner::edge_transfer(planner::EdgeKind::producer_output, {PartitionType::spatial, 0.5}, halo, shape);
    CHECK(h.forward.to_a == 2 * 3);  // row 2 of both channels
    CHECK(h.forward.to_b == 2 * 3);  // row 1 of both channels
    CHECK(h.backward.to_a == 0);     // E held with the halo (after its partial sums) covers the producer's rows
    CHECK(h.backward.to_b == 0);
}

namespace {

/// An early high-resolution stage: two 3x3 convolutions on 224 x 224 with few channels.
workload::Workload high_resolution_stem() {
    workload::Workload w;
    w.layers = {conv_layer("conv1", 224, 224, 3, 16, 3, 1, 1),
                conv_layer("conv2", 224, 224, 16, 16, 3, 1, 1, {"conv1"})};
    return w;
}

}  // namespace

TEST_CASE("AccPar and Tofu split an early high-resolution conv by rows at batch 1", "[planner][spatial]") {
    // Batch 1 on 4 nodes: Type I cannot split; Type II sums conv2's 16 x 224 x 224 outputs,
    // Type III its inputs' errors; Type IV moves one image row of each channel per side and
    // sums the halo rows' input errors and the (small) weight gradients.
    const auto graph = planner::build_layer_graph(high_resolution_stem(), 1);
    const auto cluster = uniform_cluster(4);
    const auto groups = planner::bisect(cluster, flat_exchange(1e-6, 1e9));
    const auto compute = linear_compute(graph, {1e12});
    const planner::ElementBytes one{1, 1, 1, 1};
    for (const planner::PlannerKind kind : {planner::PlannerKind::accpar, planner::PlannerKind::tofu}) {
        INFO(planner::to_string(kind));
        planner::PlannerOptions options;
        options.kind = kind;
        const planner::Plan plan = test::plan_with(graph, cluster, groups, compute, one, options);
        for (std::size_t g = 0; g < plan.groups.size(); ++g)
            if (!plan.groups[g].leaf())
                for (const auto& c : plan.choices[g]) CHECK(c.type == PartitionType::spatial);
        // The root cuts 112 | 112 rows. conv2's input: A reads rows 0-112, B 111-223 (a halo of
        // 2 rows), from conv1's output rows 0-111 | 112-223: one row of 224 x 16 each way.
        const planner::LayerChoice& conv1 = plan.choices[0][0];
        const planner::LayerChoice& conv2 = plan.choices[0][1];
        CHECK(conv1.split_a == 112);
        CHECK(conv2.split_a == 112);
        REQUIRE(conv2.forward_in.size() == 1);
        CHECK(conv2.forward_in[0].to_a == 224 * 16);
        CHECK(conv2.forward_in[0].to_b == 224 * 16);
        CHECK(conv2.backward_out.to_a == 2 * 224 * 16);  // the halo's input-error partial sums
        CHECK(conv2.weight_sync.to_a == 16 * 16 * 9);
        CHECK(conv1.backward_out.empty());  // conv1 reads the network input: no backward-data
        CHECK(conv1.weight_sync.to_a == 3 * 16 * 9);
        CHECK(conv2.forward_out.empty());
        // Every node holds all of each layer's weights: one replica set of the 4 nodes each.
        for (std::size_t l = 0; l < 2; ++l) {
            const auto sets = planner::weight_replica_sets(graph, plan, LayerId(l));
            REQUIRE(sets.size() == 1);
            CHECK(sets[0].nodes == test::node_ids({0, 1, 2, 3}));
            CHECK(sets[0].elements == graph.layers[l].weight_elements(graph.layers[l].dims));
        }
        // Each node computes a quarter of the rows (56), at the layer's full width.
        for (std::size_t n = 0; n < 4; ++n) CHECK(plan.node_dims[n][1].out_rows == 56);
    }
    // Only AccPar and Tofu may choose Type IV (and the pipeline planners, through their intra planner).
    for (const planner::PlannerKind kind : planner::kAllPlanners) {
        if (planner::is_pipeline(kind)) continue;
        INFO(planner::to_string(kind));
        const bool spatial = kind == planner::PlannerKind::accpar || kind == planner::PlannerKind::tofu;
        planner::PlannerOptions options;
        options.kind = kind;
        const auto allowed = planner::strategy_of(kind).rules(options).allowed;
        CHECK(allowed(graph.layers[1])[static_cast<std::size_t>(PartitionType::spatial)] == spatial);
    }
}

TEST_CASE("AccPar keeps batch splits where the batch covers the nodes", "[planner][spatial]") {
    // Batch 64: Type I computes the same per-node GEMMs as Type IV without its halo, so AccPar's
    // plan has no Type IV on this 1x1 + 3x3 pair.
    workload::Workload w;
    w.layers = {conv_layer("c1", 56, 56, 64, 64, 1, 1, 0), conv_layer("c2", 56, 56, 64, 64, 3, 1, 1, {"c1"})};
    const auto graph = planner::build_layer_graph(w, 64);
    const auto cluster = uniform_cluster(4);
    const auto groups = planner::bisect(cluster, flat_exchange(1e-6, 1e9));
    planner::PlannerOptions options;
    options.kind = planner::PlannerKind::accpar;
    const planner::Plan plan =
        test::plan_with(graph, cluster, groups, linear_compute(graph, {1e12}), planner::ElementBytes{}, options);
    CHECK(plan.choices[0][1].type == PartitionType::batch);
}
