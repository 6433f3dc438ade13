// SPDX-License-Identifier: MIT
// Cluster runs end to end: a one-node cluster equals the node run, heterogeneous splits
// balance with the real node model, and the shipped cluster configs plan and simulate.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <map>

#include "common/summary.h"
#include "config/load.h"
#include "costs/node_characterisation.h"
#include "costs/storage.h"
#include "energy/energy.h"
#include "output/run_summary.h"
#include "report/result_columns.h"
#include "planner/pipeline.h"
#include "run/cluster_step.h"
#include "run/fresh_kernel.h"
#include "run/stage_level_run.h"
#include "run/training_step.h"
#include "run/work.h"
#include "support/systemc_fixture.h"
#include "support/temp_dir.h"

using namespace fastsim;

namespace {

const std::string kSource = FASTSIM_SOURCE_DIR;

const std::string kSmallNode = R"(
    clock_mhz: 700
    array: {rows: 4, cols: 3}
    sram:
      exponent_bank: {capacity_kib: 1, bits_per_cycle: 64}
      mantissa_bank: {capacity_kib: 2, bits_per_cycle: 96}
    dram: {type: lpddr4, bandwidth_gb_per_s: 12.8, latency_ns: 50}
    tiling: {max_tile_rows: 20}
)";

}  // namespace

TEST_CASE("A one-node cluster takes exactly the node's training step", "[cluster]") {
    // Under both backward-data lowerings: tiny_cnn's conv2 is strided, so its transposed
    // backward-data is four GEMMs, and under col2im a col2im phase follows it.
    for (const std::string lowering : {"transposed", "col2im"}) {
        test::FreshSimContext kernel;  // one SystemC kernel per pair of runs
        INFO("node.lowering.backward_data " << lowering);
        test::TempDir dir;
        const std::string trace = kSource + "/traces/tiny_cnn.yaml";
        const std::string node = kSmallNode + "    lowering: {backward_data: " + lowering + "}\n";
        // cluster.optimizer's default, momentum, is the node's sgd_momentum.
        const std::string node_yaml = dir.write(
            "node.yaml", "run: {mode: training_step, optimizer: sgd_momentum}\nworkload: {trace: " + trace +
                             ", batch: 5}\nnode:" + node + "precision: {weights: 4, activations: 4, gradients: 6}\n");
        const std::string cluster_yaml =
            dir.write("cluster.yaml", "run: {mode: cluster}\nworkload: {trace: " + trace +
                                          ", batch: 5}\nnode_types:\n  - name: small" + node +
                                          "    precision: {weights: 4, activations: 4, gradients: 6}\n" +
                                          "cluster:\n  groups:\n    - {node_type: small, count: 1}\n");
        const auto node_params = config::load(node_yaml);
        const auto cluster_params = config::load(cluster_yaml);
        const run::TrainingStepResult node_run = run::run_training_step(node_params);
        const run::ClusterStepResult cluster_run =
            run::run_cluster_step(cluster_params, cluster_params.planner.options());
        // Every action the node counted, and the cycles (each phase rounded to whole ps at 700 MHz).
        CHECK(cluster_run.nodes[0].counters == node_run.total);
        const double node_ps = static_cast<double>(node_run.total.cycles) * 1e12 / 700e6;
        CHECK(std::abs(static_cast<double>(cluster_run.simulated.end_ps.count()) - node_ps) <=
              0.5 * static_cast<double>(node_run.phases.size()));
        CHECK(cluster_run.nodes[0].wait_s == 0);
        CHECK(cluster_run.link_energy_pj == 0);
        CHECK(cluster_run.planned.plan.step_s == Approx(cluster_run.step_s).epsilon(1e-6));
        std::size_t col2im_phases = 0, conv2_bwd_gemms = 0;
        for (const run::PhaseResult& r : node_run.phases) {
            col2im_phases += r.step.col2im;
            if (node_params.workload.network.layers[r.step.layer].name == "conv2" &&
                r.step.phase == fmac::TrainingPhase::backward_data && !r.step.on_vector_unit)
                conv2_bwd_gemms = r.step.gemm_count();
        }
        CHECK(col2im_phases == (lowering == "col2im" ? 1u : 0u));
        CHECK(conv2_bwd_gemms == (lowering == "col2im" ? 1u : 4u));
    }
}

namespace {

const std::string kVectorTrace = kSource + "/tests/data/every_vector_layer.yaml";
const std::string kVectorPrecision = "precision: {weights: 4, activations: 4, gradients: 6}\n";

/// A config of the small node, with a two-lane vector unit, running `trace`.
std::string vector_node_config(int batch, const std::string& trace = kVectorTrace) {
    return "run: {mode: training_step, optimizer: sgd_momentum}\nworkload: {trace: " + trace +
           ", batch: " + std::to_string(batch) + "}\nnode:" + kSmallNode + "    vector: {lanes: 2}\n" +
           kVectorPrecision;
}

/// The same nodes as a cluster of `count` under `planner`.
std::string vector_cluster_config(int batch, int count, const std::string& planner,
                                  const std::string& trace = kVectorTrace) {
    // The group's keys last, so that a caller may append more of them (link: ...).
    return "run: {mode: cluster}\nworkload: {trace: " + trace + ", batch: " + std::to_string(batch) +
           "}\nplanner: {name: " + planner + "}\nnode_types:\n  - name: small" + kSmallNode +
           "    vector: {lanes: 2}\n    " + kVectorPrecision +
           "cluster:\n  groups:\n    - node_type: small\n      count: " + std::to_string(count) + "\n";
}

}  // namespace

TEST_CASE_METHOD(test::FreshSimContext, "A one-node cluster runs every vector-unit layer exactly as the node does",
                 "[cluster][vector]") {
    // Every vector-unit layer kind, carried by the GEMM layers of the cluster's layer graph:
    // at one node each takes its whole work, so every count, the vector unit's included,
    // equals the node's training step.
    test::TempDir dir;
    const run::TrainingStepResult node_run =
        run::run_training_step(config::load(dir.write("n.yaml", vector_node_config(3))));
    const auto cluster_params = config::load(dir.write("c.yaml", vector_cluster_config(3, 1, "accpar")));
    const run::ClusterStepResult cluster_run = run::run_cluster_step(cluster_params, cluster_params.planner.options());
    REQUIRE(node_run.total.vector.ops > 0);
    CHECK(cluster_run.nodes[0].counters == node_run.total);
    CHECK(cluster_run.compute_energy.vector_pj > 0);
    // nodes.csv's compute_vector_s: the node's vector-unit phases (layers and weight updates).
    std::uint64_t vector_cycles = 0;
    for (const run::PhaseResult& p : node_run.phases)
        if (p.step.on_vector_unit || p.step.weight_update) vector_cycles += p.counters.cycles;
    CHECK(cluster_run.nodes[0].vector_s == Approx(static_cast<double>(vector_cycles) / 700e6).epsilon(1e-12));
    CHECK(cluster_run.nodes[0].vector_s < cluster_run.nodes[0].compute_s);
}

TEST_CASE_METHOD(test::FreshSimContext,
                 "A one-node cluster of a network that starts with vector-unit layers is the node's step",
                 "[cluster][vector]") {
    // layernorm and gelu on the network input, carried on fc1's input: fc1 keeps its
    // backward-data phase (on one node it reads gelu), and gelu's backward runs in it.
    test::TempDir dir;
    const std::string trace = kSource + "/tests/data/vector_first.yaml";
    const run::TrainingStepResult node_run =
        run::run_training_step(config::load(dir.write("n.yaml", vector_node_config(3, trace))));
    const auto params = config::load(dir.write("c.yaml", vector_cluster_config(3, 1, "accpar", trace)));
    const run::ClusterStepResult cluster_run = run::run_cluster_step(params, params.planner.options());
    CHECK(cluster_run.nodes[0].counters == node_run.total);
}

TEST_CASE_METHOD(test::FreshSimContext, "Data parallelism gives each node the vector work of its samples",
                 "[cluster][vector]") {
    // Two nodes at twice the batch: each does the node's step at the node's batch, every
    // vector-unit operation and cycle of it.
    test::TempDir dir;
    const run::TrainingStepResult node_run =
        run::run_training_step(config::load(dir.write("n.yaml", vector_node_config(3))));
    const auto pair_params = config::load(dir.write("c.yaml", vector_cluster_config(6, 2, "data_parallel")));
    const run::ClusterStepResult pair = run::run_cluster_step(pair_params, pair_params.planner.options());
    REQUIRE(pair.nodes.size() == 2);
    for (const auto& node : pair.nodes) {
        CHECK(node.counters.vector.ops == node_run.total.vector.ops);
        CHECK(node.counters.vector_cycles == node_run.total.vector_cycles);
        CHECK(node.counters.macs == node_run.total.macs);
    }
}

TEST_CASE_METHOD(test::FreshSimContext, "Each node updates its weights on its vector unit after the all-reduces",
                 "[cluster][vector]") {
    // Data parallelism on two nodes over a slow link, so the step ends with the exposed
    // all-reduces: Adam's update (14 operations per weight) against SGD's (2) adds 12 per weight
    // of every_vector_layer.yaml's 3,952 to each node, and its time to the step, after the waits.
    test::TempDir dir;
    const std::string base = vector_cluster_config(6, 2, "data_parallel") + "      link: {bandwidth_gb_per_s: 0.01}\n";
    std::map<std::string, run::ClusterStepResult> runs;
    for (const char* optimizer : {"sgd", "adam"}) {
        const auto params = config::load(
            dir.write(std::string(optimizer) + ".yaml", base + "  optimizer: " + std::string(optimizer) + "\n"));
        runs.emplace(optimizer, run::run_cluster_step_in_fresh_kernel(params, params.planner.options()));
    }
    const run::ClusterStepResult& sgd = runs.at("sgd");
    const run::ClusterStepResult& adam = runs.at("adam");
    const std::uint64_t weights = 3 * 3 * 3 * 16 + 3 * 3 * 16 * 16 + 16 * 8 + 24 * 32 + 32 * 10;
    REQUIRE(weights == 3952);
    for (std::size_t n = 0; n < 2; ++n) {
        CHECK(adam.nodes[n].counters.vector.ops - sgd.nodes[n].counters.vector.ops == 12 * weights);
        CHECK(adam.nodes[n].counters.macs == sgd.nodes[n].counters.macs);
    }
    CHECK(sgd.exposed_sync_s > 0.5 * sgd.step_s);  // the all-reduces bound the step
    // The nodes' phases, summed, differ by the updates alone (700 MHz).
    const double update_s = static_cast<double>(adam.nodes[0].counters.cycles - sgd.nodes[0].counters.cycles) / 700e6;
    CHECK(adam.step_s - sgd.step_s == Approx(update_s).epsilon(1e-6));
    CHECK(adam.planned.plan.step_s == Approx(adam.step_s).epsilon(1e-9));
}

TEST_CASE("Synchronised batchnorm statistics add their all-reduces to the step and nothing else", "[cluster][vector]") {
    // Two nodes, data parallelism: every_vector_layer.yaml's one batchnorm (16 channels) reduces
    // its mean and variance forward and its two sums backward, 2 x 16 fp32 values each way.
    test::TempDir dir;
    const auto local = config::load(dir.write("l.yaml", vector_cluster_config(6, 2, "data_parallel")));
    const auto synchronised = config::load(
        dir.write("s.yaml", vector_cluster_config(6, 2, "data_parallel") + "  batchnorm_statistics: synchronised\n"));
    const auto plan_of = [](const config::Params& params) {
        const auto graph = planner::build_layer_graph(params.workload.network, params.workload.batch);
        run::ClusterCosts costs(params, graph);
        return run::plan_cluster(params, params.planner.options(), costs).plan;
    };
    const planner::Plan a = plan_of(local), b = plan_of(synchronised);
    CHECK(b.comm_bytes - a.comm_bytes == 2 * (2 * 16 * 4));
    CHECK(b.step_s > a.step_s);
    REQUIRE(b.compute_s.size() == a.compute_s.size());
    for (std::size_t l = 0; l < a.compute_s.size(); ++l) CHECK(b.compute_s[l] == a.compute_s[l]);
    CHECK(a.forward_comm_s[0] == 0);  // conv1 carries bn1: local statistics move nothing
    CHECK(b.forward_comm_s[0] > 0);
}

TEST_CASE("Node characterisation: layers that lower alike share seconds and match their own counters", "[cluster]") {
    // seconds() keys its memo by the first layer of the same shape (ResNet-50's repeated
    // blocks); counters() by the layer itself. Asked in opposite orders, both agree layer by
    // layer, and the repeated layers take fewer memo entries than layers asked.
    const auto params = config::load(kSource + "/configs/cluster/tpu_v2_v3.yaml");
    const auto graph = planner::build_layer_graph(params.workload.network, params.workload.batch);
    const std::vector<costs::NodeType> types = run::cost_node_types(params);
    costs::NodeCharacterisation forward(types, graph), backward(types, graph);
    const std::size_t n = graph.layers.size();
    std::size_t asked = 0;
    for (std::size_t type = 0; type < types.size(); ++type)
        for (std::size_t i = 0; i < n; ++i) {
            const std::size_t l = n - 1 - i;
            planner::LayerDims dims = graph.layers[l].dims;
            dims.batch = std::max<std::uint64_t>(1, dims.batch / 3);
            const planner::PhaseSeconds s = backward.seconds(type, l, dims);
            ++asked;
            CAPTURE(type, graph.layers[l].name);
            const auto& counters = forward.counters(type, l, dims);
            const double hz = static_cast<double>(types[type].node.clock_hz);
            for (std::size_t p = 0; p < 3; ++p)
                CHECK(s[p] == Approx(static_cast<double>(counters[p].cycles) / hz).epsilon(1e-12));
        }
    CHECK(backward.entries() < asked * 2 / 3);
}

TEST_CASE("Balanced splits even out TPU-v2-like and TPU-v3-like nodes on the node model", "[cluster]") {
    const auto params = config::load(kSource + "/configs/cluster/tpu_v2_v3.yaml");
    const auto graph = planner::build_layer_graph(params.workload.network, params.workload.batch);
    run::ClusterCosts costs(params, graph);
    const auto planned = run::plan_cluster(params, params.planner.options(), costs);
    const auto& root = planned.plan.choices[0];
    REQUIRE(planned.plan.groups[0].nodes.size() == 16);
    // The first cut is between the kinds (the slow switch links): 8 v2-like against 8 v3-like.
    CHECK(planned.plan.groups[static_cast<std::size_t>(planned.plan.groups[0].side_a)].nodes.size() == 8);
    // Each layer takes either its own balanced share or the share common to the network, which
    // every Type I layer can keep without moving samples across the switch. Over the network
    // the sides stay within 30% of each other (AccPar keeps data_parallel_balanced's plan here,
    // one batch share for every layer: 29%; its own DP's per-layer shares stayed under 25%).
    double imbalance = 0, busiest = 0, alpha = 0;
    std::map<std::uint64_t, std::size_t> batch_splits;
    for (const auto& c : root) {
        imbalance += std::abs(c.compute_a_s - c.compute_b_s);
        busiest += std::max(c.compute_a_s, c.compute_b_s);
        alpha += c.alpha / static_cast<double>(root.size());
        if (c.type == planner::PartitionType::batch) ++batch_splits[c.split_a];
    }
    CHECK(imbalance / busiest < 0.30);
    REQUIRE(!batch_splits.empty());
    std::size_t kept = 0, batch_layers = 0;
    for (const auto& [split, count] : batch_splits) {
        kept = std::max(kept, count);
        batch_layers += count;
    }
    CHECK(kept * 2 > batch_layers);
    // The v2-like side gets well under half: its arrays x clock are 1400 vs 3760 MHz-arrays.
    CHECK(alpha > 0.2);
    CHECK(alpha < 0.45);
    // Equal halves are slower on this cluster.
    planner::PlannerOptions equal = params.planner.options();
    equal.equal_split = true;
    CHECK(run::plan_cluster(params, equal, costs).plan.step_s > 1.05 * planned.plan.step_s);
}

TEST_CASE_METHOD(test::FreshSimContext, "The 16-node heterogeneous ResNet-50 step simulates with every node busy",
                 "[cluster]") {
    const auto params = config::load(kSource + "/configs/cluster/tpu_v2_v3.yaml");
    const auto r = run::run_cluster_step(params, params.planner.options());
    REQUIRE(r.nodes.size() == 16);
    std::uint64_t macs = 0;
    for (const auto& n : r.nodes) {
        macs += n.counters.macs;
        CHECK(n.compute_s > 0.5 * r.step_s);
        CHECK(n.compute_s + n.wait_s <= r.step_s * (1 + 1e-9));
    }
    // The nodes together do the whole step's MACs: 3 x forward MACs minus conv1's backward-data.
    std::uint64_t forward = 0, conv1 = 0;
    for (const auto& layer : params.workload.network.layers) {
        const auto macs_l = workload::lower(layer, params.workload.batch).forward_macs();
        forward += macs_l;
        if (layer.name == "conv1") conv1 = macs_l;
    }
    CHECK(macs == 3 * forward - conv1);
    // Planned and simulated agree within the overlap the planner does not model.
    CHECK(r.planned.plan.step_s == Approx(r.step_s).epsilon(0.35));
    CHECK(r.link_energy_pj > 0);
}

TEST_CASE("Every shipped cluster config loads, and its dump loads back to the same values", "[cluster][config]") {
    for (const std::string name :
         {"configs/cluster/fast_4node.yaml", "configs/cluster/fast_16node.yaml", "configs/cluster/tpu_v2_v3.yaml",
          "configs/bench/resnet152_1024.yaml", "configs/tests/tiny_cluster.yaml"}) {
        INFO(name);
        const auto p = config::load(kSource + "/" + name);
        test::TempDir dir;
        const auto q = config::load(dir.write("again.yaml", config::dump(p)));
        CHECK(config::dump(q) == config::dump(p));
        CHECK(q.cluster.node_type == p.cluster.node_type);
        CHECK(q.cluster.topology->channel_count() == p.cluster.topology->channel_count());
    }
    const auto tpu = config::load(kSource + "/configs/cluster/tpu_v2_v3.yaml");
    CHECK(tpu.cluster.node_types[1].arrays == 4);
    CHECK(tpu.cluster.node_types[1].node.resolved.dram.bandwidth_bits_per_s == 900'000'000'000ull * 8 / 4);
    CHECK(tpu.cluster.topology->node_count() == 16);
    CHECK(tpu.cluster.group_first_node == std::vector<std::size_t>{0, 8});
    CHECK(tpu.cluster.gradient_sync.algorithm == config::GradientSyncAlgorithm::best);
    const auto tree =
        config::load(kSource + "/configs/cluster/tpu_v2_v3.yaml", {"cluster.gradient_sync.algorithm=tree"});
    CHECK(tree.cluster.gradient_sync.algorithm == config::GradientSyncAlgorithm::tree);
    test::TempDir dir;
    CHECK(config::load(dir.write("tree.yaml", config::dump(tree))).cluster.gradient_sync.algorithm ==
          config::GradientSyncAlgorithm::tree);
}

namespace {

/// Every cluster config shipped in configs/cluster, sorted: the standing rules below cover
/// configs added later without editing the tests.
std::vector<std::string> shipped_cluster_configs() {
    std::vector<std::string> out;
    for (const auto& entry : std::filesystem::directory_iterator(kSource + "/configs/cluster"))
        if (entry.path().extension() == ".yaml") out.push_back(entry.path().string());
    std::sort(out.begin(), out.end());
    return out;
}

}  // namespace

TEST_CASE("Every shipped cluster x planner: the prediction is within 5% of the simulation", "[cluster]") {
    const auto configs = shipped_cluster_configs();
    REQUIRE(configs.size() >= 3);
    for (const std::string& path : configs) {
        const auto params = config::load(path);
        for (const planner::PlannerKind kind : planner::kAllPlanners) {
            planner::PlannerOptions options = params.planner.options();
            options.kind = kind;
            const auto r = run::run_cluster_step_in_fresh_kernel(params, options);
            const double error = (r.planned.plan.step_s - r.step_s) / r.step_s;
            INFO(path << ", " << planner::to_string(kind) << ": planned " << r.planned.plan.step_s << " s, simulated "
                      << r.step_s << " s");
            CHECK(std::abs(error) <= 0.05);
        }
    }
}

namespace {

/// Every decision and every figure derived from them agree exactly between two plans.
void check_same_plan(const planner::Plan& a, const planner::Plan& b) {
    CHECK(a.options.kind == b.options.kind);
    CHECK(a.chosen_from == b.chosen_from);
    CHECK(a.objective == b.objective);
    CHECK(a.split == b.split);
    CHECK(a.step_s == b.step_s);
    CHECK(a.comm_bytes == b.comm_bytes);
    CHECK(a.compute_s == b.compute_s);
    CHECK(a.forward_comm_s == b.forward_comm_s);
    CHECK(a.backward_comm_s == b.backward_comm_s);
    CHECK(a.sync_comm_s == b.sync_comm_s);
    CHECK(a.layer_step_s == b.layer_step_s);
    REQUIRE(a.node_dims.size() == b.node_dims.size());
    for (std::size_t n = 0; n < a.node_dims.size(); ++n)
        for (std::size_t l = 0; l < a.node_dims[n].size(); ++l) {
            CHECK(a.node_dims[n][l].batch == b.node_dims[n][l].batch);
            CHECK(a.node_dims[n][l].in_channels == b.node_dims[n][l].in_channels);
            CHECK(a.node_dims[n][l].out_channels == b.node_dims[n][l].out_channels);
            CHECK(a.node_dims[n][l].out_rows == b.node_dims[n][l].out_rows);
        }
    REQUIRE(a.choices.size() == b.choices.size());
    for (std::size_t g = 0; g < a.choices.size(); ++g) {
        REQUIRE(a.choices[g].size() == b.choices[g].size());
        for (std::size_t l = 0; l < a.choices[g].size(); ++l) {
            const planner::LayerChoice &x = a.choices[g][l], &y = b.choices[g][l];
            CHECK(x.type == y.type);
            CHECK(x.split_a == y.split_a);
            CHECK(x.alpha == y.alpha);
            CHECK(x.compute_a_s == y.compute_a_s);
            CHECK(x.compute_b_s == y.compute_b_s);
            CHECK(x.comm_bytes() == y.comm_bytes());
        }
    }
    REQUIRE(a.footprint.size() == b.footprint.size());
    for (std::size_t n = 0; n < a.footprint.size(); ++n) CHECK(a.footprint[n].total() == b.footprint[n].total());
    REQUIRE(!a.pipeline == !b.pipeline);
    if (!a.pipeline) return;
    CHECK(a.pipeline->microbatches == b.pipeline->microbatches);
    CHECK(a.pipeline->step_s == b.pipeline->step_s);
    CHECK(a.pipeline->bubble_fraction == b.pipeline->bubble_fraction);
    CHECK(a.pipeline->objective_s == b.pipeline->objective_s);
    REQUIRE(a.pipeline->stages.size() == b.pipeline->stages.size());
    for (std::size_t s = 0; s < a.pipeline->stages.size(); ++s) {
        const planner::PipelineStage &x = a.pipeline->stages[s], &y = b.pipeline->stages[s];
        CHECK(x.nodes == y.nodes);
        CHECK(x.busy_s == y.busy_s);
        CHECK(x.memory_bytes == y.memory_bytes);
        CHECK(x.plan.chosen_from == y.plan.chosen_from);
    }
}

}  // namespace

TEST_CASE("Every shipped cluster x planner: evaluating the plan's decisions gives the same plan", "[cluster][plan]") {
    for (const std::string& path : shipped_cluster_configs()) {
        const auto params = config::load(path);
        for (const planner::PlannerKind kind : planner::kAllPlanners) {
            planner::PlannerOptions options = params.planner.options();
            options.kind = kind;
            INFO(path << ", " << planner::to_string(kind));
            const planner::LayerGraph graph =
                planner::build_layer_graph(params.workload.network, params.workload.batch);
            run::ClusterCosts costs(params, graph);
            const run::ClusterPlan planned = run::plan_cluster(params, options, costs);
            const planner::PlanDecisions decisions = planner::decisions_of(planned.plan);
            // The options come with the decisions: a request for another planner changes nothing.
            planner::PlannerOptions other = options;
            other.kind = planner::PlannerKind::data_parallel;
            check_same_plan(planned.plan, run::plan_cluster(params, other, costs, {}, &decisions).plan);
        }
    }
}

TEST_CASE("A given plan that does not fit the cluster is refused, naming the entry", "[cluster][plan]") {
    const auto params = config::load(kSource + "/configs/cluster/fast_4node.yaml");
    const planner::LayerGraph graph = planner::build_layer_graph(params.workload.network, params.workload.batch);
    run::ClusterCosts costs(params, graph);
    const planner::PlanDecisions good =
        planner::decisions_of(run::plan_cluster(params, params.planner.options(), costs).plan);
    const auto refused = [&](const planner::PlanDecisions& d) {
        try {
            (void)run::plan_cluster(params, params.planner.options(), costs, {}, &d);
        } catch (const planner::PlanError& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    planner::PlanDecisions d = good;
    d.hierarchy.groups[0][3].split_a = graph.layers[3].dims.along(d.hierarchy.groups[0][3].type);
    CHECK_THAT(refused(d), Catch::Contains("groups[0], layer '" + graph.layers[3].name + "'") &&
                               Catch::Contains("split_a 64 is outside 1 .. 63"));
    d = good;
    d.hierarchy.groups[1].pop_back();
    CHECK_THAT(refused(d), Catch::Contains("groups[1] gives"));
    d = good;
    d.hierarchy.groups.pop_back();
    CHECK_THAT(refused(d), Catch::Contains("groups lists"));
    d = good;
    d.hierarchy.groups[3].push_back({});
    CHECK_THAT(refused(d), Catch::Contains("groups[3] is one node"));
}

TEST_CASE("A pipeline simulated at stage level reports the message level's ops, bytes and energy",
          "[cluster][pipeline]") {
    auto params = config::load(kSource + "/configs/cluster/fast_16node.yaml");
    planner::PlannerOptions options = params.planner.options();
    options.kind = planner::PlannerKind::pipeline;
    options.pipeline.stages = 2;
    options.pipeline.microbatches = 4;
    params.cluster.pipeline_simulation = config::PipelineSimulation::message_level;
    const auto message = run::run_cluster_step_in_fresh_kernel(params, options);
    params.cluster.pipeline_simulation = config::PipelineSimulation::stage_level;
    const auto stage = run::run_cluster_step_in_fresh_kernel(params, options);
    CHECK_FALSE(message.stage_level);
    CHECK(stage.stage_level);
    REQUIRE(stage.planned.plan.pipeline);
    CHECK(stage.planned.plan.pipeline->stages.size() == 2);
    // The same work and traffic, counted from fewer ops.
    CHECK(stage.ops == message.ops);
    CHECK(stage.piece_ops < stage.ops);
    CHECK(stage.sync_bytes == message.sync_bytes);
    CHECK(stage.link_energy_pj == Approx(message.link_energy_pj).epsilon(1e-9));
    double stage_compute = 0, message_compute = 0;
    for (std::size_t n = 0; n < stage.nodes.size(); ++n) {
        stage_compute += stage.nodes[n].compute_s;
        message_compute += message.nodes[n].compute_s;
    }
    CHECK(stage_compute == Approx(message_compute).epsilon(1e-9));
    // Planned as simulated, at each level; the levels within 5% of each other here.
    CHECK(stage.planned.plan.step_s == Approx(stage.step_s).epsilon(1e-9));
    CHECK(std::abs(stage.step_s - message.step_s) <= 0.05 * message.step_s);
    // A timeline needs every message.
    CHECK_THROWS_WITH(run::in_fresh_kernel([&] { run::run_cluster_step(params, options, run::TimelineRequest{}); }),
                      Catch::Contains("simulated at stage level"));
    // The planned bubble is the replayed step's, as the planned step is.
    for (const auto* r : {&message, &stage}) {
        const planner::PipelinePlan& pp = *r->planned.plan.pipeline;
        double busy = 0;
        for (const planner::PipelineStage& st : pp.stages) busy += st.busy_s;
        CHECK(pp.step_s == r->planned.plan.step_s);
        CHECK(pp.bubble_fraction == Approx(1 - busy / (static_cast<double>(pp.stages.size()) * pp.step_s)));
    }
    // The planner's replay counted the ops each simulation holds: the step's, or its pieces'.
    CHECK(message.planned.plan.replayed_ops == message.ops);
    CHECK(stage.planned.plan.replayed_ops == stage.piece_ops);
}

TEST_CASE("auto takes the stage level for a large step that its pieces shorten", "[cluster][pipeline]") {
    using config::PipelineSimulation;
    const std::uint64_t above = config::kStageLevelAboveOps + 1;
    CHECK(run::stage_level_chosen(PipelineSimulation::automatic, 10 * above, above));
    CHECK_FALSE(run::stage_level_chosen(PipelineSimulation::automatic, config::kStageLevelAboveOps, 1000));
    // GPT-3 6.7B on 1,024 nodes, alpa's plan: 11.9 million ops in the step, 13.4 million in pieces.
    CHECK_FALSE(run::stage_level_chosen(PipelineSimulation::automatic, 11'914'240, 13'412'352));
    CHECK_FALSE(run::stage_level_chosen(PipelineSimulation::automatic, above, above));
    CHECK(run::stage_level_chosen(PipelineSimulation::stage_level, 10, 1000));
    CHECK_FALSE(run::stage_level_chosen(PipelineSimulation::message_level, 10 * above, above));
}

TEST_CASE("A run's simulation is checked against the ops its plan's replay counted", "[cluster][run]") {
    // The estimate before planning only bounds a simulation's ops (every layer's all-reduce over
    // every node); once planned, the replay's count decides, and a count beyond this machine's
    // memory is refused with what would fit.
    const auto params = config::load(kSource + "/configs/cluster/fast_16node.yaml");
    const auto r = run::run_cluster_step_in_fresh_kernel(params, params.planner.options());
    CHECK(r.planned.plan.replayed_ops == r.ops);
    CHECK(r.ops > 1000);
    CHECK_NOTHROW(run::check_simulation_memory(params, r.ops));
    const auto beyond = static_cast<std::uint64_t>(run::run_memory_limit_bytes());  // tens of bytes an op
    CHECK_THROWS_WITH(run::check_simulation_memory(params, beyond),
                      Catch::Contains("simulating the plan would need about") &&
                          Catch::Contains("(counted by the planner's replay of it)") &&
                          Catch::Contains("what would fit: the plan alone (fastsim plan)"));
}

TEST_CASE("GPT-3 6.7B on 64 nodes: pipeline plans fit and predict within 5%, data parallelism does not fit",
          "[cluster][pipeline]") {
    const auto params = config::load(kSource + "/configs/pipeline/gpt3_6.7b_64node.yaml");
    struct Case {
        planner::PlannerKind kind;
        std::size_t stages, microbatches;
    };
    for (const Case c : {Case{planner::PlannerKind::alpa, 0, 0}, Case{planner::PlannerKind::pipeline, 4, 8}}) {
        planner::PlannerOptions options = params.planner.options();
        options.kind = c.kind;
        options.pipeline.stages = c.stages;
        options.pipeline.microbatches = c.microbatches;
        const auto r = run::run_cluster_step_in_fresh_kernel(params, options);
        INFO(planner::to_string(c.kind) << ": planned " << r.planned.plan.step_s << " s, simulated " << r.step_s
                                        << " s");
        CHECK(r.planned.plan.memory_shortfalls.empty());
        REQUIRE(r.planned.plan.pipeline);
        CHECK(r.planned.plan.pipeline->stages.size() >= 2);
        CHECK(std::abs(r.planned.plan.step_s - r.step_s) <= 0.05 * r.step_s);
    }
    planner::PlannerOptions data = params.planner.options();
    data.kind = planner::PlannerKind::data_parallel;
    CHECK_THROWS_WITH(run::run_cluster_step_in_fresh_kernel(params, data),
                      Catch::Contains("no plan of data_parallel fits in memory"));
}

TEST_CASE("AccPar is never beaten on its objective by another intra-layer planner, on any shipped network and cluster",
          "[cluster]") {
    // Pipeline planners search another space (docs/pipeline.md); alpa is checked against AccPar below.
    for (const std::string& path : shipped_cluster_configs())
        for (const std::string trace : {"alexnet", "vgg11", "resnet18", "resnet50", "bert_base_encoder"})
            for (const bool comm_only : {false, true}) {
                const auto params = config::load(path, {"workload.trace=" + kSource + "/traces/" + trace + ".yaml"});
                const auto graph = planner::build_layer_graph(params.workload.network, params.workload.batch);
                run::ClusterCosts costs(params, graph);
                planner::PlannerOptions options = params.planner.options();
                options.kind = planner::PlannerKind::accpar;
                options.comm_only = comm_only;
                const auto objective = [&](const planner::Plan& p) { return comm_only ? p.comm_bytes : p.step_s; };
                const double accpar = objective(run::plan_cluster(params, options, costs).plan);
                for (const planner::PlannerKind kind : planner::kAllPlanners) {
                    if (planner::is_pipeline(kind)) continue;
                    options.kind = kind;
                    INFO(path << ", " << trace << (comm_only ? ", comm-only, " : ", ") << planner::to_string(kind));
                    CHECK(accpar <= objective(run::plan_cluster(params, options, costs).plan));
                }
            }
}

TEST_CASE("AccPar's own layer shapes at 128 nodes: volumes equal AccPar's code to the byte", "[cluster]") {
    // AccPar's code (github.com/linghaosong/AccPar 8f28c36), Sum_h 2^h com_cost[h] x 2 bytes, for
    // data parallelism, OWT, HyPar and AccPar (docs/planner.md, "Results").
    const std::map<std::string, std::array<double, 4>> accpar_code{
        {"alexnet", {15841415104, 2209230784, 1488990144, 1125527488}},
        {"vgg11", {33744253568, 3655979648, 2792149632, 2367804032}}};
    const planner::PlannerKind kinds[4] = {planner::PlannerKind::data_parallel, planner::PlannerKind::owt,
                                           planner::PlannerKind::hypar, planner::PlannerKind::accpar};
    for (const auto& [network, bytes] : accpar_code) {
        const auto params = config::load(
            kSource + "/configs/cluster/fast_16node.yaml",
            {"workload.trace=" + kSource + "/traces/accpar/" + network + ".yaml", "cluster.groups.0.count=128",
             "cluster.groups.0.torus.rows=8", "cluster.groups.0.torus.cols=16", "workload.batch=512"});
        const auto graph = planner::build_layer_graph(params.workload.network, params.workload.batch);
        run::ClusterCosts costs(params, graph);
        for (std::size_t k = 0; k < 4; ++k) {
            planner::PlannerOptions options{kinds[k], true, true, {}};
            INFO(network << ", " << planner::to_string(kinds[k]));
            CHECK(std::llround(run::plan_cluster(params, options, costs).plan.comm_bytes) == std::llround(bytes[k]));
        }
    }
}

TEST_CASE_METHOD(test::FreshSimContext,
                 "Every summary field is declared once: a row, a counter or an energy or area component",
                 "[cluster][report]") {
    const auto node_params = config::load(kSource + "/configs/tests/tiny_node.yaml");
    const auto cluster_params = config::load(kSource + "/configs/tests/tiny_cluster.yaml");
    const Summary node = output::training_step_summary(node_params, run::run_training_step(node_params));
    const Summary cluster = output::cluster_step_summary(
        cluster_params, run::run_cluster_step(cluster_params, cluster_params.planner.options()));
    std::vector<std::string> components{"links"};
    for (const energy::EnergyComponent& c : energy::kEnergyComponents) components.emplace_back(c.name);
    for (const Summary* summary : {&node, &cluster})
        for (const auto& [name, value] : *summary) {
            INFO(name);
            bool counter = false;
            for (const CounterInfo& info : node::counter_infos()) counter = counter || info.name == name;
            const bool component =
                std::any_of(components.begin(), components.end(),
                            [&, n = name](const std::string& c) { return n == "energy_" + c + "_uj"; }) ||
                std::any_of(energy::kAreaComponents.begin(), energy::kAreaComponents.end(),
                            [&, n = name](const energy::AreaComponent& c) {
                                return n == "area_" + std::string(c.name) + "_mm2";
                            });
            CHECK((summary_field(name) != nullptr || counter || component));
            if (const SummaryField* row = summary_field(name); row && !counter)
                CHECK(report::column_title(name) == row->title);
        }
    // The headline columns are the declared ones, in their order.
    std::vector<std::string_view> headline;
    for (const SummaryField& f : kSummaryFields)
        if (f.headline) headline.push_back(f.name);
    CHECK(report::headline_result_columns() == headline);
}

TEST_CASE("a data-parallel step on a two-dimensional group all-reduces every layer per dimension, and says so",
          "[cluster]") {
    auto params = config::load(kSource + "/configs/cluster/fast_32node_2d.yaml");
    planner::PlannerOptions options = params.planner.options();
    options.kind = planner::PlannerKind::data_parallel;
    for (const double bucket_mib : {0.0, 25.0}) {
        CAPTURE(bucket_mib);
        params.cluster.gradient_sync.bucket_mib = bucket_mib;
        const auto r = run::run_cluster_step_in_fresh_kernel(params, options);
        std::size_t count = 0;
        for (const interconnect::AllReduceUse& u : r.all_reduces) {
            CAPTURE(u.algorithms, u.dimensions);
            CHECK(u.ranks == 32);
            CHECK(u.dimensions == "8x4");  // every node of the switch-of-8 x ring-of-4 group
            count += u.count;
        }
        const std::size_t layers = r.planned.graph.layers.size();
        if (bucket_mib == 0)
            CHECK(count == layers);  // one all-reduce per layer's weight gradients
        else
            CHECK((count >= 2 && count < layers));  // 25 MiB buckets of several layers each
        CHECK(std::abs(r.planned.plan.step_s - r.step_s) <= 1e-9 * r.step_s);
    }
}

TEST_CASE("Boundary tensors cross a cut in the sender's format and convert where the receiver's differs", "[cluster]") {
    // Node 0: activations 4 bits, gradients 6, a 16-lane converter (7 cycles to fill) at 1 GHz;
    // node 1: activations 8, gradients 6, two arrays of 8-lane converters (5 cycles) at 500 MHz.
    // BFP g = 16, e = 8; each type's own width as its storage counts it (costs::element_bytes).
    std::vector<costs::NodeType> types(2);
    types[0].precision = {4, 4, 6};
    types[0].node.clock_hz = 1'000'000'000;
    types[0].node.converter = {16, 16, 7};
    types[1].precision = {8, 8, 6};
    types[1].arrays = 2;
    types[1].node.clock_hz = 500'000'000;
    types[1].node.converter = {16, 8, 5};
    const auto nodes = std::make_shared<const std::vector<planner::NodeFormat>>(costs::node_formats(types, {0, 1}));
    CHECK((*nodes)[1].convert_s_per_value == Approx(1 / (16 * 500e6)));  // 2 arrays x 8 lanes
    CHECK((*nodes)[1].convert_latency_s == Approx(5 / 500e6));
    planner::ExchangeCost x;
    costs::set_boundary_formats(x, nodes, {16, 8}, false, {0}, {1});
    const planner::ElementBytes own0 = costs::element_bytes({types[0]}, {16, 8}, false);
    const planner::ElementBytes own1 = costs::element_bytes({types[1]}, {16, 8}, false);
    REQUIRE(own1.activations > own0.activations);
    // F into node 0 comes at node 1's 8 bits and is converted at 16 values a cycle.
    CHECK(x.into_a[0].wire_bytes == own1.activations);
    CHECK(x.into_a[0].convert_s(0, 1600) == Approx(7e-9 + 1600 / 16e9));
    // F into node 1 comes at 4 bits and is converted on its two arrays' converters.
    CHECK(x.into_b[0].wire_bytes == own0.activations);
    CHECK(x.into_b[0].convert_s(1, 1600) == Approx(5 / 500e6 + 1600 / (16 * 500e6)));
    // E: both at 6 bits, nothing to convert either way (no table kept).
    CHECK(x.into_a[1].wire_bytes == own1.gradients);
    CHECK(own1.gradients == own0.gradients);
    CHECK(x.into_a[1].nodes == nullptr);
    CHECK(x.into_b[1].convert_s(1, 1000) == 0);
    // AccPar's accounting: 2 bytes a value, no conversion.
    planner::ExchangeCost volume;
    costs::set_boundary_formats(volume, nodes, {16, 8}, true, {0}, {1});
    CHECK(volume.into_b[0].wire_bytes == 2);
    CHECK(volume.into_b[0].convert_s(1, 1000) == 0);
}

TEST_CASE("A pipeline's stage transfers cross in the sender's format and convert on receipt", "[cluster][pipeline]") {
    // tiny_cluster as two pipeline stages: node 0 (small, 4-bit activations) feeds node 1 (big,
    // here 8-bit activations). The activations go at 4 bits and node 1 converts them; the
    // gradients (6 bits on both) come back unconverted. Planned equals simulated.
    const auto params = config::load(kSource + "/configs/tests/tiny_cluster.yaml",
                                     {"node_types.1.precision.activations=8", "planner.name=pipeline"});
    const run::ClusterStepResult r = run::run_cluster_step_in_fresh_kernel(params, params.planner.options());
    REQUIRE(r.planned.plan.pipeline != nullptr);
    const planner::PipelinePlan& p = *r.planned.plan.pipeline;
    REQUIRE(p.transfers.size() == 1);
    const planner::StageTransfer& t = p.transfers[0];
    REQUIRE(p.stages[t.to].nodes == std::vector<std::size_t>{1});
    const std::vector<costs::NodeType> types = run::cost_node_types(params);
    const planner::ElementBytes small = costs::element_bytes({types[0]}, {16, 8}, false);
    CHECK(t.cost.into_b[0].wire_bytes == small.activations);
    const auto conversions = planner::transfer_conversions(p, t, true);
    REQUIRE(conversions.size() == 1);
    CHECK(conversions[0].first == 1);
    const double values = std::ceil(t.forward_bytes) / small.activations;
    const double hz = static_cast<double>(types[1].node.clock_hz);
    const auto& converter = types[1].node.converter;
    CHECK(conversions[0].second ==
          Approx(converter.pipeline_latency_cycles / hz + values / (converter.lanes * types[1].arrays * hz)));
    CHECK(planner::transfer_conversions(p, t, false).empty());
    CHECK(r.planned.plan.step_s == Approx(r.step_s).epsilon(1e-9));
}
