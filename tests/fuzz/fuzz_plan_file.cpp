// SPDX-License-Identifier: MIT
// plan.json read back (`fastsim run --plan`) against the tiny two-node cluster, then evaluated:
// every bad plan must be a UserError (a PlanError is one) naming the file and the entry.
#include "config/load.h"
#include "config/plan_file.h"
#include "fuzz_support.h"
#include "run/cluster_step.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace fastsim;
    static const config::Params params = config::load(fuzz::source_dir() + "/configs/tests/tiny_cluster.yaml");
    static const planner::LayerGraph graph = planner::build_layer_graph(params.workload.network, params.workload.batch);
    static run::ClusterCosts costs(params, graph);
    const std::string text(reinterpret_cast<const char*>(data), size);
    fuzz::refusing_only_user_errors([&] {
        const planner::PlanDecisions decisions = config::read_plan_text(text, "plan.json", graph, params.cluster);
        (void)run::plan_cluster(params, params.planner.options(), costs, {}, &decisions);
    });
    return 0;
}
