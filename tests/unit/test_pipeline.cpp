// SPDX-License-Identifier: MIT
// Pipeline planners (docs/pipeline.md): schedules, the uniform-stage formula on the predictor
// and the SystemC cluster, Alpa's DP against brute force, and memory.
#include <catch2/catch.hpp>

#include <map>
#include <numeric>
#include <random>
#include <tuple>

#include "cluster/cluster.h"
#include "interconnect/collective_cost.h"
#include "interconnect/topology.h"
#include "config/trace_reader.h"
#include "planner/pipeline.h"
#include "planner/strategy.h"
#include "planner/stage_level.h"
#include "run/cluster_step.h"
#include "run/stage_level_run.h"
#include "support/plan_helpers.h"
#include "support/systemc_fixture.h"
#include "workload/vector_work.h"

using namespace fastsim;
using planner::PipelineSchedule;

namespace {

/// `layers` identical fc layers in a chain.
workload::Workload chain(std::size_t layers, int width) {
    workload::Workload w;
    for (std::size_t l = 0; l < layers; ++l) {
        const std::string name = "fc" + std::to_string(l);
        w.layers.push_back(
            test::fc(name, width, width,
                     l == 0 ? std::vector<std::string>{} : std::vector<std::string>{"fc" + std::to_string(l - 1)}));
    }
    return w;
}

/// The `pipeline` planner's plan of `stages` identical fc layers at batch 16 x `m` over `nodes`
/// identical nodes, `stages` stages of `m` micro-batches, data parallelism inside, free links,
/// every phase 1 ms.
struct UniformPipeline {
    planner::LayerGraph graph;
    planner::Plan plan;
};
UniformPipeline uniform_pipeline(std::size_t stages, std::size_t nodes, std::size_t m, PipelineSchedule schedule) {
    UniformPipeline out{planner::build_layer_graph(chain(stages, 64), 16 * m), {}};
    const auto view = test::uniform_cluster(nodes);
    const auto exchange = test::flat_exchange(0, 1e18);
    const auto groups = planner::bisect(view, exchange);
    const planner::ComputeModel compute = [](std::size_t, LayerId, const planner::LayerDims&) {
        return planner::PhaseSeconds{1e-3, 1e-3, 1e-3};
    };
    planner::PlannerOptions options;
    options.kind = planner::PlannerKind::pipeline;
    options.pipeline.stages = stages;
    options.pipeline.microbatches = m;
    options.pipeline.schedule = schedule;
    options.pipeline.intra = planner::PlannerKind::data_parallel;
    const planner::PlanningInputs in{out.graph, view, groups, compute,  {}, test::free_all_reduce(),
                                     {},        {},   {},     exchange, {}};
    out.plan = planner::make_plan(in, options);
    return out;
}

}  // namespace

TEST_CASE("Stage orders: GPipe stashes every micro-batch, 1F1B at most the stages after it", "[pipeline]") {
    for (const std::size_t p : {1u, 2u, 4u, 7u})
        for (const std::size_t m : {1u, 3u, 8u, 16u})
            for (std::size_t s = 0; s < p; ++s) {
                INFO("P " << p << ", M " << m << ", stage " << s);
                const auto gpipe = planner::stage_order(PipelineSchedule::gpipe, p, s, m);
                const auto one = planner::stage_order(PipelineSchedule::one_f_one_b, p, s, m);
                CHECK(gpipe.size() == 2 * m);
                CHECK(one.size() == 2 * m);
                CHECK(planner::peak_in_flight(gpipe) == m);
                CHECK(planner::peak_in_flight(one) == std::min(m, p - s));
                // Every micro-batch once each way, its forward first.
                std::vector<int> seen(m, 0);
                for (const auto& t : one) {
                    if (t.forward)
                        CHECK(seen[t.microbatch]++ == 0);
                    else
                        CHECK(seen[t.microbatch]++ == 1);
                }
            }
    // 1F1B on stage 0 of 4 with 6 micro-batches: 3 warm-up forwards, then F3 B0 F4 B1 F5 B2, then B3 B4 B5.
    const auto order = planner::stage_order(PipelineSchedule::one_f_one_b, 4, 0, 6);
    std::string text;
    for (const auto& t : order) text += (t.forward ? "F" : "B") + std::to_string(t.microbatch) + " ";
    CHECK(text == "F0 F1 F2 F3 B0 F4 B1 F5 B2 B3 B4 B5 ");
}

TEST_CASE("Uniform stages: the step is (M + P - 1) x the stage time, planned and simulated", "[pipeline]") {
    // P identical fc layers on P identical nodes (one stage each), free links: every stage takes
    // F = 1 ms forward and B = 2 ms backward per micro-batch.
    const std::size_t p = 4;
    for (const std::size_t m : {4u, 8u}) {
        for (const PipelineSchedule schedule : {PipelineSchedule::gpipe, PipelineSchedule::one_f_one_b}) {
            INFO("M " << m << (schedule == PipelineSchedule::gpipe ? ", gpipe" : ", 1f1b"));
            const UniformPipeline uniform = uniform_pipeline(p, p, m, schedule);
            const planner::LayerGraph& graph = uniform.graph;
            const planner::Plan& plan = uniform.plan;
            REQUIRE(plan.pipeline);
            const double stage_s = 3e-3, steps = static_cast<double>(m + p - 1);
            CHECK(plan.step_s == Approx(steps * stage_s).epsilon(1e-9));
            CHECK(plan.pipeline->bubble_fraction == Approx(double(p - 1) / steps).epsilon(0.01));
            for (std::size_t s = 0; s < p; ++s)
                CHECK(plan.pipeline->stages[s].in_flight ==
                      (schedule == PipelineSchedule::gpipe ? m : std::min(m, p - s)));
            // The same schedule on the SystemC cluster, every phase 1 ms, links of 1e9 GB/s.
            const Picoseconds ms(1'000'000'000);
            const auto compute_ps = [&](NodeId, LayerId) { return planner::PhasePicoseconds{ms, ms, ms}; };
            const interconnect::Topology ring = interconnect::Topology::ring(p, {1e9, 0.0, 1.0});
            const auto programs = planner::build_schedule(graph, plan, p, compute_ps, *test::free_all_reduce());
            const test::FreshSimContext context;  // one elaboration per kernel
            const auto r = cluster::run_cluster(ring, programs);
            CHECK(double(r.end_ps.count()) * 1e-12 == Approx(steps * stage_s).epsilon(1e-6));
            double busy = 0;
            for (const auto& node : r.nodes) busy += double(node.compute_ps.count()) * 1e-12;
            CHECK(1 - busy / (double(p) * double(r.end_ps.count()) * 1e-12) ==
                  Approx(double(p - 1) / steps).epsilon(0.01));
            // Its timeline (layer l is stage l): each micro-batch's forward takes 1 ms and its
            // backward 2 ms, each after the stage before (after) it, never two at once on a stage,
            // and the last ends the step. GPipe exactly: forward j on stage s over [s + j, s + j + 1]
            // ms; backward j (M - 1 first) from M + P - 1 + 2 (M - 1 - j) + 2 (P - 1 - s) ms.
            std::vector<std::size_t> part_of(p);
            std::iota(part_of.begin(), part_of.end(), 0);
            const auto spans = run::stage_spans(r, planner::StepLabels{p}, part_of, p);
            REQUIRE(spans.size() == p);
            std::map<std::tuple<std::size_t, bool, std::size_t>, run::StageSpan> at;
            double last = 0;
            for (std::size_t s = 0; s < p; ++s) {
                double free_from = 0;
                for (const run::StageSpan& span : spans[s]) {
                    if (span.part == planner::StepPart::weight_update) continue;
                    const bool forward = span.part == planner::StepPart::forward;
                    CHECK(span.end_s - span.start_s == Approx(forward ? 1e-3 : 2e-3).epsilon(1e-9));
                    CHECK(span.start_s >= free_from - 1e-15);
                    free_from = span.end_s;
                    last = std::max(last, span.end_s);
                    at[{s, forward, span.microbatch}] = span;
                }
            }
            REQUIRE(at.size() == 2 * p * m);
            CHECK(last == Approx(steps * stage_s).epsilon(1e-9));
            for (std::size_t s = 0; s < p; ++s)
                for (std::size_t j = 0; j < m; ++j) {
                    if (s > 0) CHECK(at[{s, true, j}].start_s >= at[{s - 1, true, j}].end_s - 1e-15);
                    if (s + 1 < p) CHECK(at[{s, false, j}].start_s >= at[{s + 1, false, j}].end_s - 1e-15);
                    if (schedule != PipelineSchedule::gpipe) continue;
                    CHECK(at[{s, true, j}].start_s == Approx(double(s + j) * 1e-3).margin(1e-12));
                    CHECK(at[{s, false, j}].start_s ==
                          Approx(double(m + p - 1 + 2 * (m - 1 - j) + 2 * (p - 1 - s)) * 1e-3).margin(1e-12));
                }
        }
    }
}

TEST_CASE("Block boundaries: a cut only where every crossing tensor comes from the block it closes", "[pipeline]") {
    const auto bounds_of = [](const workload::Workload& w) {
        return planner::block_boundaries(planner::build_layer_graph(workload::without_vector_layers(w), 8));
    };
    // A chain: a block per layer.
    CHECK(bounds_of(chain(4, 64)) == std::vector<std::size_t>{0, 1, 2, 3, 4});
    // A GEMM-only residual block: b reads [a, x] and c reads [b, a]; the cut before c has a and b
    // crossing (both of the block it closes), the cut before b has x and a (x from the block before).
    workload::Workload residual;
    residual.layers = {test::fc("x", 64, 64, {}), test::fc("a", 64, 64, {"x"}), test::fc("b", 64, 64, {"a", "x"}),
                       test::fc("c", 64, 64, {"b", "a"}), test::fc("d", 64, 64, {"c"})};
    CHECK(bounds_of(residual) == std::vector<std::size_t>{0, 1, 3, 4, 5});
    // GPT-3 175B with every layer: its residual stream crosses as the two summands' tensors, and
    // still no edge spans two boundaries; at least a block per decoder block.
    const workload::Workload gpt = config::read_trace(std::string(FASTSIM_SOURCE_DIR) + "/traces/gpt3_175b.yaml");
    const auto graph = planner::build_layer_graph(workload::without_vector_layers(gpt), 1);
    const std::vector<std::size_t> bounds = planner::block_boundaries(graph);
    REQUIRE(graph.layers.size() == 96 * 8 + 1);
    CHECK(bounds.size() >= 96 + 1);
    CHECK(bounds.front() == 0);
    CHECK(bounds.back() == graph.layers.size());
    for (std::size_t k = 1; k + 1 < bounds.size(); ++k)
        for (std::size_t to = bounds[k]; to < graph.layers.size(); ++to)
            for (const planner::Edge& e : graph.layers[to].producers)
                if (e.from < bounds[k]) {
                    INFO("cut " << bounds[k] << ": " << graph.layers[e.from].name << " -> " << graph.layers[to].name);
                    CHECK(e.from >= bounds[k - 1]);
                }
}

TEST_CASE("Alpa's inter-operator DP equals brute force on small cases", "[pipeline]") {
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> latency(0.5, 3.0);
    std::uniform_int_distribution<std::size_t> room(0, 6);
    const std::vector<planner::MeshRange> meshes{{0, 1}, {1, 2}, {2, 3}, {3, 4}, {0, 2}, {2, 4}, {0, 4}, {1, 3}};
    for (int trial = 0; trial < 60; ++trial) {
        const std::size_t blocks = 2 + static_cast<std::size_t>(trial % 4);
        const std::size_t m = 1 + static_cast<std::size_t>(trial % 5);
        std::map<std::tuple<std::size_t, std::size_t, std::size_t>, planner::AlpaStageCost> table;
        const auto cost = [&](std::size_t i, std::size_t j, std::size_t mesh) {
            auto& c = table[{i, j, mesh}];
            if (c.latency_s == std::numeric_limits<double>::infinity()) {
                const double width = double(meshes[mesh].end - meshes[mesh].first);
                c.latency_s = double(j - i) * latency(rng) / width;
                c.max_in_flight = room(rng);
            }
            return c;
        };
        for (const std::size_t stages : {0u, 1u, 2u, 3u})
            for (const auto schedule : {PipelineSchedule::gpipe, PipelineSchedule::one_f_one_b}) {
                INFO("trial " << trial << ", stages " << stages);
                const auto dp = planner::alpa_inter_op(blocks, meshes, 4, m, stages, schedule, cost);
                const auto brute = planner::alpa_brute_force(blocks, meshes, 4, m, stages, schedule, cost);
                if (brute.stages.empty()) {
                    CHECK(dp.stages.empty());
                    continue;
                }
                CHECK(dp.objective_s == Approx(brute.objective_s).epsilon(1e-12));
            }
        // Meshes of one width costing alike (their first's cost): one class per width gives the
        // DP over every mesh's answer, cut for cut.
        std::vector<std::size_t> width_class, first_of_width;
        for (std::size_t k = 0; k < meshes.size(); ++k) {
            const std::size_t width = meshes[k].end - meshes[k].first;
            const std::size_t c = width == 1 ? 0 : width == 2 ? 1 : 2;
            width_class.push_back(c);
            if (first_of_width.size() <= c) first_of_width.resize(c + 1, meshes.size());
            if (first_of_width[c] == meshes.size()) first_of_width[c] = k;
        }
        std::size_t asked = 0;
        const auto by_width = [&](std::size_t i, std::size_t j, std::size_t mesh) {
            ++asked;
            return cost(i, j, first_of_width[width_class[mesh]]);
        };
        for (const std::size_t stages : {0u, 2u}) {
            INFO("trial " << trial << ", stages " << stages << ", classes by width");
            const auto every =
                planner::alpa_inter_op(blocks, meshes, 4, m, stages, PipelineSchedule::one_f_one_b, by_width);
            asked = 0;
            const auto classes = planner::alpa_inter_op(blocks, meshes, 4, m, stages, PipelineSchedule::one_f_one_b,
                                                        by_width, width_class);
            CHECK(asked == 3 * blocks * (blocks + 1) / 2);  // each (block range, class) once
            CHECK(classes.objective_s == every.objective_s);
            CHECK(classes.stages == every.stages);
        }
    }
}

namespace {

/// Four nodes of two types in two groups ({0, 1} and {2, 3}, the second type twice as fast).
planner::ClusterView two_type_cluster() {
    planner::ClusterView view = test::uniform_cluster(4);
    view.node_type = {0, 0, 1, 1};
    view.preferred_cuts = {2};
    return view;
}

/// Weights and gradients 4 bytes an element, 220 MB a node: about a third of chain(8, 2048).
planner::MemoryModel memory_for_a_third() {
    planner::MemoryModel memory;
    memory.bytes = [](std::size_t, planner::Stored, std::uint64_t elements) { return 4.0 * double(elements); };
    memory.capacity_bytes = {220e6, 220e6};
    return memory;
}

}  // namespace

TEST_CASE(
    "Alpa never loses to data parallelism, AccPar or the pipeline planner, and fits where data parallelism does not",
    "[pipeline]") {
    // Eight 2048-wide fc layers (4 Mi weights each) on 4 nodes of 2 types; memory: weights and
    // gradients 4 bytes an element, capacity for about a third of the model per node.
    const auto graph = planner::build_layer_graph(chain(8, 2048), 64);
    const planner::ClusterView view = two_type_cluster();
    const auto exchange = test::flat_exchange(1e-6, 25e9);
    const auto groups = planner::bisect(view, exchange);
    const auto compute = test::linear_compute(graph, {1e12, 2e12});
    planner::ElementBytes bytes;
    for (const bool tight : {false, true}) {
        INFO((tight ? "memory checked" : "memory not checked"));
        const planner::MemoryModel memory = tight ? memory_for_a_third() : planner::MemoryModel{};
        const planner::PlanningInputs in{graph,  view, groups, compute,  bytes, test::free_all_reduce(),
                                         memory, {},   {},     exchange, {}};
        planner::PlannerOptions options;
        options.kind = planner::PlannerKind::alpa;
        options.pipeline.intra = planner::PlannerKind::accpar;
        const planner::Plan alpa = planner::make_plan(in, options);
        CHECK(alpa.memory_shortfalls.empty());
        CHECK(alpa.pipeline->objective_s == alpa.step_s);  // the objective it reports is its prediction
        for (const auto kind :
             {planner::PlannerKind::data_parallel, planner::PlannerKind::accpar, planner::PlannerKind::pipeline}) {
            options.kind = kind;
            if (tight && kind == planner::PlannerKind::data_parallel) {
                CHECK_THROWS_WITH(planner::make_plan(in, options),
                                  Catch::Contains("no plan of data_parallel fits in memory"));
                continue;
            }
            try {
                const planner::Plan other = planner::make_plan(in, options);
                if (other.memory_shortfalls.empty()) CHECK(alpa.step_s <= other.step_s * (1 + 1e-12));
            } catch (const planner::PlanError&) {
                // AccPar cannot fit either: nothing to lose to
            }
        }
    }
}

TEST_CASE("Alpa leaves out the whole cluster as one stage only when no such plan can fit", "[pipeline]") {
    // Eight 2048-wide fc layers at batch 64, 4 bytes a value: weights, gradients and momentum
    // 3 x 4 x 8 x 2048^2 = 402,653,184 bytes, stashed inputs 4 x 64 x 2048 x 8 = 4,194,304: the
    // whole model needs 406,847,488 bytes over the 4 nodes together.
    // The bound reads the graph, the nodes and the memory model only.
    const auto graph = planner::build_layer_graph(chain(8, 2048), 64);
    const planner::ClusterView view = two_type_cluster();
    const auto cannot_fit = [&](std::vector<double> capacity) {
        planner::MemoryModel memory = memory_for_a_third();
        memory.capacity_bytes = std::move(capacity);
        const planner::PlanningInputs in{graph, view, {}, {}, {}, test::free_all_reduce(), memory, {}, {}, {}, {}};
        return planner::whole_model_cannot_fit(in);
    };
    CHECK_FALSE(cannot_fit({101.72e6, 101.72e6}));  // 406.88 MB together
    CHECK(cannot_fit({101.70e6, 101.70e6}));        // 406.80 MB together
    CHECK_FALSE(cannot_fit({101.70e6, 0}));         // a type's capacity not checked: nothing proven
    CHECK_FALSE(cannot_fit({}));
    // Any cut into stages at micro-batches of 32 stashes at least one: inputs 2,097,152 bytes,
    // 404,750,336 in all.
    const auto cannot_fit_at_32 = [&](std::vector<double> capacity) {
        planner::MemoryModel memory = memory_for_a_third();
        memory.capacity_bytes = std::move(capacity);
        const planner::PlanningInputs in{graph, view, {}, {}, {}, test::free_all_reduce(), memory, {}, {}, {}, {}};
        return planner::model_cannot_fit(in, 32);
    };
    CHECK_FALSE(cannot_fit_at_32({101.19e6, 101.19e6}));  // 404.76 MB together
    CHECK(cannot_fit_at_32({101.18e6, 101.18e6}));        // 404.72 MB together
}

TEST_CASE("alpa_search_size counts alpa's blocks, sub-mesh classes and micro-batch counts", "[pipeline]") {
    // chain(8, 2048): eight one-layer blocks, two distinct (the first has no producer). The
    // sub-meshes of two groups of 2 nodes, by node type and group boundary inside (the exchange
    // not given): width 1 at positions 0 and 1 (one class), 2 and 3 (one: a mesh starting at a
    // group boundary has it outside), the groups (widths 2 and 2) and both (4): 5 classes of 10
    // nodes in all.
    const auto graph = planner::build_layer_graph(chain(8, 2048), 64);
    const planner::ClusterView view = two_type_cluster();
    const auto size_with = [&](std::vector<double> capacity, std::size_t microbatches) {
        planner::MemoryModel memory = memory_for_a_third();
        memory.capacity_bytes = std::move(capacity);
        const planner::PlanningInputs in{graph, view, {}, {}, {}, test::free_all_reduce(), memory, {}, {}, {}, {}};
        planner::PipelineOptions options;
        options.microbatches = microbatches;
        return planner::alpa_search_size(in, options);
    };
    // Batch 64: 1, 2, 4, … 64 micro-batches, all of them able to fit.
    planner::AlpaSearchSize size = size_with({220e6, 220e6}, 0);
    CHECK(size.blocks == 8);
    CHECK(size.mesh_classes == 5);
    CHECK(size.microbatch_counts == 7);
    CHECK(size.most_microbatches == 64);
    CHECK(size.block_node_layers == 7 * 2 * 10);
    CHECK(size.stage_costs == 7 * (8 * 9 / 2) * 5);
    CHECK(size.whole_fits);
    // Micro-batches of 64 and of 32 samples cannot fit (the bound of the test above): 5 counts.
    size = size_with({101.18e6, 101.18e6}, 0);
    CHECK(size.microbatch_counts == 5);
    CHECK(size.block_node_layers == 5 * 2 * 10);
    CHECK_FALSE(size.whole_fits);
    // A given count is the only one.
    size = size_with({220e6, 220e6}, 8);
    CHECK(size.microbatch_counts == 1);
    CHECK(size.most_microbatches == 8);
    CHECK(size.stage_costs == (8 * 9 / 2) * 5);
    // Three equal groups of 2 nodes: a sub-mesh's class does not depend on where it starts. Width
    // 1 (one class), runs of 1, 2 and 3 groups (three): 4 classes, not 7.
    planner::ClusterView three = test::uniform_cluster(6);
    three.preferred_cuts = {2, 4};
    planner::MemoryModel memory = memory_for_a_third();
    memory.capacity_bytes = {220e6};
    const planner::PlanningInputs in{graph, three, {}, {}, {}, test::free_all_reduce(), memory, {}, {}, {}, {}};
    planner::PipelineOptions options;
    options.microbatches = 8;
    CHECK(planner::alpa_search_size(in, options).mesh_classes == 4);
}

TEST_CASE("Alpa searches more than 64 micro-batches while no cut fits in memory", "[pipeline]") {
    // The memory-bound cluster above at a batch whose stashes fill a node at 64 micro-batches.
    const auto graph = planner::build_layer_graph(chain(8, 2048), 1u << 18);
    const planner::ClusterView view = two_type_cluster();
    const auto exchange = test::flat_exchange(1e-6, 25e9);
    const auto groups = planner::bisect(view, exchange);
    const auto compute = test::linear_compute(graph, {1e12, 2e12});
    const planner::PlanningInputs in{graph, view, groups,   compute, {}, test::free_all_reduce(), memory_for_a_third(),
                                     {},    {},   exchange, {}};
    planner::PlannerOptions options;
    options.kind = planner::PlannerKind::alpa;
    options.pipeline.intra = planner::PlannerKind::accpar;
    options.pipeline.microbatches = 64;
    CHECK_THROWS_WITH(planner::make_plan(in, options),
                      Catch::Contains("finds no cut") && !Catch::Contains("with up to"));
    options.pipeline.microbatches = 0;
    const planner::Plan plan = planner::make_plan(in, options);
    CHECK(plan.memory_shortfalls.empty());
    CHECK(plan.pipeline->microbatches > 64);
    // The fewest that fit: half as many do not.
    options.pipeline.microbatches = plan.pipeline->microbatches / 2;
    CHECK_THROWS_WITH(planner::make_plan(in, options), Catch::Contains("finds no cut"));
}

TEST_CASE("AccPar weighs alpa's plan, and a memo makes alpa's plan once", "[pipeline]") {
    // The memory-bound cluster of the test above.
    const auto graph = planner::build_layer_graph(chain(8, 2048), 64);
    const planner::ClusterView view = two_type_cluster();
    const auto exchange = test::flat_exchange(1e-6, 25e9);
    const auto groups = planner::bisect(view, exchange);
    const auto compute = test::linear_compute(graph, {1e12, 2e12});
    const planner::MemoryModel memory = memory_for_a_third();
    planner::PlanMemo memo;
    planner::PlanningInputs in{graph, view, groups, compute, {}, test::free_all_reduce(), memory, {}, {}, exchange, {}};
    in.plans = &memo;
    planner::PlannerOptions options;  // accpar
    planner::PlannerOptions own = options;
    own.weigh_pipelines = false;
    const planner::Plan intra = planner::plan_once(in, own);
    const planner::Plan accpar = planner::make_plan(in, options);
    planner::PlannerOptions alpa_options = options;
    alpa_options.kind = planner::PlannerKind::alpa;
    const planner::Plan* alpa = memo.find(alpa_options);
    REQUIRE(alpa != nullptr);  // made while planning accpar, kept for the alpa row
    REQUIRE(alpa->memory_shortfalls.empty());
    CHECK(accpar.step_s <= alpa->step_s);
    CHECK(accpar.step_s <= intra.step_s);
    CHECK((accpar.chosen_from == planner::PlannerKind::alpa) == (alpa->step_s < intra.step_s));
    CHECK(planner::make_plan(in, alpa_options).step_s == alpa->step_s);
    // Without groups to pipeline over there is no alpa candidate.
    planner::PlanMemo flat_memo;
    planner::ClusterView flat = view;
    flat.preferred_cuts.clear();
    const auto flat_groups = planner::bisect(flat, exchange);
    planner::PlanningInputs flat_in{graph, flat, flat_groups, compute,  {}, test::free_all_reduce(),
                                    {},    {},   {},          exchange, {}};
    flat_in.plans = &flat_memo;
    CHECK(planner::make_plan(flat_in, options).chosen_from != planner::PlannerKind::alpa);
    CHECK(flat_memo.find(alpa_options) == nullptr);
}

TEST_CASE("Pipeline stages sit on the cluster's groups, sized by their nodes' speed", "[pipeline]") {
    // Groups of 4, 4 and 8 nodes; the last group's type is 3x as fast. Twelve identical layers.
    const auto graph = planner::build_layer_graph(chain(12, 512), 64);
    planner::ClusterView view = test::uniform_cluster(16);
    view.node_type.assign(16, 0);
    for (std::size_t n = 8; n < 16; ++n) view.node_type[n] = 1;
    view.preferred_cuts = {4, 8};
    const auto exchange = test::flat_exchange(1e-6, 25e9);
    const auto groups = planner::bisect(view, exchange);
    const auto compute = test::linear_compute(graph, {1e12, 3e12});
    planner::ElementBytes bytes;
    const planner::PlanningInputs in{graph, view, groups, compute,  bytes, test::free_all_reduce(),
                                     {},    {},   {},     exchange, {}};
    planner::PlannerOptions options;
    options.kind = planner::PlannerKind::pipeline;
    options.pipeline.intra = planner::PlannerKind::data_parallel;
    const auto ranges = [&](std::size_t stages) {
        options.pipeline.stages = stages;
        const planner::Plan plan = planner::make_plan(in, options);
        std::vector<std::pair<std::size_t, std::size_t>> out;  // (first node, nodes) per stage
        for (const auto& st : plan.pipeline->stages) out.emplace_back(st.nodes.front(), st.nodes.size());
        return std::pair{out, plan};
    };
    using Ranges = std::vector<std::pair<std::size_t, std::size_t>>;
    // stages 0: one stage per group; the fast group's stage takes most layers: its 8 nodes are 6x
    // as fast as either 4-node group, so the slowest stage is least with 1, 1 and 10 layers
    // (10/24 of a layer-time unit against 2/4 with 1, 2 and 9).
    const auto [per_group, plan] = ranges(0);
    CHECK(per_group == Ranges{{0, 4}, {4, 4}, {8, 8}});
    const auto& st = plan.pipeline->stages;
    CHECK(st[0].end_layer - st[0].first_layer == 1);
    CHECK(st[1].end_layer - st[1].first_layer == 1);
    CHECK(st[2].end_layer - st[2].first_layer == 10);
    // Fewer stages than groups: whole groups, cut nearest equal speed (the fast group is 3/4 of it).
    CHECK(ranges(2).first == Ranges{{0, 8}, {8, 8}});
    // More: the fastest group per stage gets the extra stages first.
    CHECK(ranges(4).first == Ranges{{0, 4}, {4, 4}, {8, 4}, {12, 4}});
    CHECK(ranges(6).first == Ranges{{0, 4}, {4, 4}, {8, 2}, {10, 2}, {12, 2}, {14, 2}});
    // AccPar weighs the pipeline planner's plan (stages split by AccPar) and never loses to it;
    // where it keeps it, it says so.
    options.kind = planner::PlannerKind::accpar;
    options.pipeline = {};
    const planner::Plan accpar = planner::make_plan(in, options);
    options.kind = planner::PlannerKind::pipeline;
    const planner::Plan pipelined = planner::make_plan(in, options);
    CHECK(accpar.step_s <= pipelined.step_s * (1 + 1e-12));
    CHECK((accpar.pipeline != nullptr) == (accpar.chosen_from == planner::PlannerKind::pipeline));
}

TEST_CASE("A replayed pipeline plan's bubble is its replayed step's", "[pipeline]") {
    // A replay that finds the step twice the walk's: the plan reports that step, and the bubble
    // it leaves (the stages' busy time unchanged).
    const auto graph = planner::build_layer_graph(chain(8, 256), 16);
    const auto view = test::uniform_cluster(4);
    const auto exchange = test::flat_exchange(1e-6, 25e9);
    const auto groups = planner::bisect(view, exchange);
    const auto compute = test::linear_compute(graph, {1e12});
    planner::PlanningInputs in{graph, view, groups, compute, {}, test::free_all_reduce(), {}, {}, {}, exchange, {}};
    planner::PlannerOptions options;
    options.kind = planner::PlannerKind::pipeline;
    options.pipeline.intra = planner::PlannerKind::data_parallel;
    options.pipeline.stages = 2;
    options.pipeline.microbatches = 4;
    const planner::Plan walked = planner::make_plan(in, options);
    in.replay = [](const planner::Plan& plan, double) { return planner::ReplayedStep{2 * plan.step_s, 123}; };
    const planner::Plan replayed = planner::make_plan(in, options);
    REQUIRE(walked.pipeline);
    REQUIRE(replayed.pipeline);
    CHECK(replayed.step_s == Approx(2 * walked.step_s));
    CHECK(replayed.pipeline->step_s == replayed.step_s);
    CHECK(replayed.replayed_ops == 123);
    double busy = 0;
    for (const planner::PipelineStage& st : replayed.pipeline->stages) busy += st.busy_s;
    CHECK(replayed.pipeline->bubble_fraction == Approx(1 - busy / (2 * replayed.step_s)));
    CHECK(walked.pipeline->bubble_fraction == Approx(1 - busy / (2 * walked.step_s)));
    CHECK(replayed.pipeline->bubble_fraction > walked.pipeline->bubble_fraction + 0.2);
}

TEST_CASE("Pipeline stages given by layer names, and the errors of a bad list", "[pipeline]") {
    const auto graph = planner::build_layer_graph(chain(4, 64), 8);
    const auto view = test::uniform_cluster(2);
    const auto exchange = test::flat_exchange(1e-6, 25e9);
    const auto groups = planner::bisect(view, exchange);
    const planner::PlanningInputs in{
        graph, view,     groups, test::linear_compute(graph, {1e12}), {}, test::free_all_reduce(), {}, {},
        {},    exchange, {}};
    planner::PlannerOptions options;
    options.kind = planner::PlannerKind::pipeline;
    options.pipeline.microbatches = 4;
    options.pipeline.stage_layers = {{"fc0"}, {"fc1", "fc2", "fc3"}};
    const planner::Plan plan = planner::make_plan(in, options);
    REQUIRE(plan.pipeline->stages.size() == 2);
    CHECK(plan.pipeline->stages[0].end_layer == 1);
    CHECK(plan.pipeline->stages[1].nodes == std::vector<std::size_t>{1});
    CHECK(plan.pipeline->microbatch_size == 2);
    CHECK(plan.pipeline->transfers.size() == 1);
    CHECK(plan.pipeline->transfers[0].forward_bytes == Approx(2 * 64 * 2.0));  // 2 samples x 64 x 2 bytes
    options.pipeline.stage_layers = {{"fc0", "fc2"}, {"fc1", "fc3"}};
    CHECK_THROWS_WITH(planner::make_plan(in, options),
                      Catch::Contains("lists 'fc2' where the network's next layer is 'fc1'"));
    options.pipeline.stage_layers = {{"fc0"}, {"fc1"}};
    CHECK_THROWS_WITH(planner::make_plan(in, options), Catch::Contains("the first one missing is 'fc2'"));
    options.pipeline.stage_layers = {};
    options.pipeline.stages = 3;
    CHECK_THROWS_WITH(planner::make_plan(in, options), Catch::Contains("3 stages but the cluster has 2 nodes"));
    options.pipeline.stages = 2;
    options.pipeline.microbatches = 3;
    CHECK_THROWS_WITH(planner::make_plan(in, options), Catch::Contains("does not divide the batch of 8"));
}

TEST_CASE("Stage-level simulation: uniform stages compose as the message level runs them, ops and bytes alike",
          "[pipeline]") {
    // 4 stages of 2 nodes (data parallel inside), every phase 1 ms, links of 1e9 GB/s: every
    // piece takes the same time wherever it runs, so composing the pieces is exact.
    const std::size_t p = 4, nodes = 8;
    for (const std::size_t m : {1u, 4u, 8u})
        for (const PipelineSchedule schedule : {PipelineSchedule::gpipe, PipelineSchedule::one_f_one_b}) {
            INFO("M " << m << (schedule == PipelineSchedule::gpipe ? ", gpipe" : ", 1f1b"));
            const UniformPipeline uniform = uniform_pipeline(p, nodes, m, schedule);
            const planner::LayerGraph& graph = uniform.graph;
            const planner::Plan& plan = uniform.plan;
            REQUIRE(plan.pipeline);
            const Picoseconds ms(1'000'000'000);
            const auto compute_ps = [&](NodeId, LayerId) { return planner::PhasePicoseconds{ms, ms, ms, ms}; };
            const interconnect::Topology ring = interconnect::Topology::ring(nodes, {1e9, 0.0, 1.0});
            const auto programs = planner::build_schedule(graph, plan, nodes, compute_ps, *test::free_all_reduce());
            const run::StagePieces pieces = run::build_stage_pieces(plan, nodes, compute_ps, *test::free_all_reduce());
            std::uint64_t ops = 0;
            for (const auto& program : programs) ops += program.ops.size() + program.comm_ops.size();
            CHECK(pieces.step_ops == ops);
            const test::FreshSimContext context;
            const cluster::ClusterResult message = cluster::run_cluster(ring, programs);
            const cluster::ClusterResult stage = run::simulate_by_stage_on_systemc(ring, plan, pieces);
            // Pieces dropped after counting and built again where they run run the same.
            const run::StagePieces rebuilt =
                run::build_stage_pieces(plan, nodes, compute_ps, *test::free_all_reduce(), /*keep_ops=*/0);
            CHECK(rebuilt.piece_ops == pieces.piece_ops);
            CHECK(pieces.held_ops == pieces.piece_ops);   // all kept
            CHECK(rebuilt.held_ops < rebuilt.piece_ops);  // one piece at a time
            CHECK(rebuilt.step_ops == pieces.step_ops);
            CHECK(std::all_of(rebuilt.kept.begin(), rebuilt.kept.end(), [](const auto& k) { return k.empty(); }));
            CHECK(std::none_of(pieces.kept.begin(), pieces.kept.end(), [](const auto& k) { return k.empty(); }));
            const cluster::ClusterResult again = run::simulate_by_stage_on_systemc(ring, plan, rebuilt);
            CHECK(again.end_ps == stage.end_ps);
            for (std::size_t n = 0; n < nodes; ++n) {
                CHECK(again.nodes[n].finish_ps == stage.nodes[n].finish_ps);
                CHECK(again.nodes[n].wait_ps == stage.nodes[n].wait_ps);
            }
            CHECK(std::abs(double(stage.end_ps.count()) - double(message.end_ps.count())) <= 100);
            // Each node computes, sends and receives the same; each link carries the same bytes.
            // Times agree to 100 ps (the transfers' few picoseconds of serialisation queue a
            // little differently).
            for (std::size_t n = 0; n < nodes; ++n) {
                CHECK(stage.nodes[n].compute_ps == message.nodes[n].compute_ps);
                CHECK(stage.nodes[n].bytes_sent == message.nodes[n].bytes_sent);
                CHECK(stage.nodes[n].recv_count == message.nodes[n].recv_count);
                CHECK(std::abs(double(stage.nodes[n].finish_ps.count()) - double(message.nodes[n].finish_ps.count())) <=
                      100);
            }
            for (std::size_t c = 0; c < ring.channels().size(); ++c)
                CHECK(stage.channels[c].bytes == message.channels[c].bytes);
            // Every label's ops and compute, and the spans the stage timelines are made of
            // (a comm stream's first wait, from the step's start, is not one of them).
            REQUIRE(stage.labels.size() == message.labels.size());
            const planner::StepLabels labels{p};
            for (const auto& [label, stats] : message.labels) {
                INFO("label " << label);
                const cluster::LabelStats& s = stage.labels.at(label);
                CHECK(s.op_count == stats.op_count);
                CHECK(s.compute_ps == stats.compute_ps);
                if (labels.part(label) == planner::StepPart::weight_sync) continue;
                CHECK(std::abs(double(s.first_start_ps.count()) - double(stats.first_start_ps.count())) <= 100);
                CHECK(std::abs(double(s.last_end_ps.count()) - double(stats.last_end_ps.count())) <= 100);
            }
        }
}

TEST_CASE("Stage-level simulation: a send group's messages queue as they ran alone, and pieces couple their nodes",
          "[pipeline]") {
    // Two nodes messaging each other are one component; a FlowCollective's members another.
    std::vector<interconnect::NodeProgram> programs(6);
    programs[0].ops.push_back(interconnect::Send{NodeId(2), 8, 1, 0});
    programs[2].ops.push_back(interconnect::Recv{NodeId(0), 1, 0});
    programs[3].comm_ops.push_back(interconnect::FlowCollective{9, 2, Picoseconds(5), 0});
    programs[5].comm_ops.push_back(interconnect::FlowCollective{9, 2, Picoseconds(5), 0});
    CHECK(planner::piece_components(programs) == std::vector<std::size_t>{0, 1, 0, 3, 4, 3});

    // Two stages of two nodes, one micro-batch: the forward transfer's two messages arrived at
    // 3 and 5 s when sent at once (latency 1 s); sent at 0 and 10 s they wait for nothing.
    planner::PipelinePlan p;
    p.microbatches = 1;
    p.stages.resize(2);
    p.stages[0].nodes = {0, 1};
    p.stages[0].end_layer = 1;
    p.stages[1].nodes = {2, 3};
    p.stages[1].first_layer = 1;
    p.stages[1].end_layer = 2;
    planner::StageTransfer t;
    t.from = 0;
    t.to = 1;
    t.forward_bytes = t.backward_bytes = 8;
    t.cost.latency_s = 1;
    p.transfers.push_back(t);
    const auto piece = [](std::vector<double> ends, std::vector<std::size_t> component) {
        return planner::PieceTiming{std::move(ends), std::move(component), {}};
    };
    const std::vector<std::size_t> apart{0, 1, 2, 3};
    planner::StagePieceTimes times;
    // Stage 0's forward: node 0 ends at 0 s (no ops), node 1 at 10 s; nothing couples them.
    times.stages.push_back({piece({0, 10, 0, 0}, apart), piece({0, 1, 0, 0}, apart), piece({0, 1, 0, 0}, apart)});
    times.stages.push_back({piece({0, 0, 2, 2}, apart), piece({0, 0, 1, 1}, apart), piece({0, 0, 1, 1}, apart)});
    // Its send groups: stage 0's forward to nodes 2 and 3, stage 1's backward to 0 and 1.
    const std::vector<planner::SendGroup> groups = planner::send_groups(p);
    REQUIRE(groups.size() == 2);
    CHECK(groups[0].receivers == std::vector<std::size_t>{2, 3});
    CHECK(groups[1].receivers == std::vector<std::size_t>{0, 1});
    times.groups = {piece({0, 0, 3, 5}, apart), piece({1, 1, 0, 0}, apart)};
    const planner::StageLevelStep step = planner::compose_stage_level(p, times);
    REQUIRE(step.sends.size() == 2);
    const planner::StageLevelSend& forward = step.sends[0];
    CHECK(forward.group == 0);
    CHECK(forward.start_s == 0);
    // Node 2's message: sent at 0, served 2 s, then 1 s of latency. Node 3's: sent at 10 s,
    // its 2 s gap, then the latency.
    CHECK(forward.arrival_s == std::vector<double>{3, 13});
    // Stage 1 starts apart (nothing couples its nodes): node 2 at 3 s, node 3 at 13 s.
    const planner::StageLevelTask& f1 = step.tasks[1];
    REQUIRE(f1.stage == 1);
    CHECK(f1.start_s == std::vector<double>{3, 13});
    CHECK(f1.end_s == std::vector<double>{5, 15});
    // Coupled, they start together when the later is ready.
    for (auto& stage : times.stages) stage[0].component = {0, 0, 2, 2};
    const planner::StageLevelStep coupled = planner::compose_stage_level(p, times);
    CHECK(coupled.tasks[1].start_s == std::vector<double>{13, 13});
}
