// SPDX-License-Identifier: MIT
// plan.json read back (`fastsim run --plan`) and evaluated against two clusters: the tiny
// two-node one, and the same with two nodes of each type, whose groups and stages split: every
// bad plan must be a UserError (a PlanError is one) naming the file and the entry.
#include <memory>
#include <string>
#include <vector>

#include "config/load.h"
#include "config/plan_file.h"
#include "fuzz_support.h"
#include "run/cluster_step.h"

namespace {

using namespace fastsim;

/// One cluster a plan is read against, with its memoised costs.
struct Target {
    config::Params params;
    planner::LayerGraph graph;
    std::unique_ptr<run::ClusterCosts> costs;
    explicit Target(const std::vector<std::string>& overrides)
        : params(config::load(fuzz::source_dir() + "/configs/tests/tiny_cluster.yaml", overrides)),
          graph(planner::build_layer_graph(params.workload.network, params.workload.batch)),
          costs(std::make_unique<run::ClusterCosts>(params, graph)) {}
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static Target two({}), four({"cluster.groups.0.count=2", "cluster.groups.1.count=2"});
    const std::string text(reinterpret_cast<const char*>(data), size);
    for (Target* t : {&two, &four})
        fuzz::refusing_only_user_errors([&] {
            const planner::PlanDecisions decisions =
                config::read_plan_text(text, "plan.json", t->graph, t->params.cluster);
            (void)run::plan_cluster(t->params, t->params.planner.options(), *t->costs, {}, &decisions);
        });
    return 0;
}
