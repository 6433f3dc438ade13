// SPDX-License-Identifier: MIT
// The run-config loader, every run mode: YAML text as a config in configs/ (so shipped traces
// resolve), then what fastsim run does before simulating (lowering checks, work estimates).
#include "config/load.h"
#include "fuzz_support.h"
#include "planner/layer_graph.h"
#include "run/work.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace fastsim;
    const std::string text(reinterpret_cast<const char*>(data), size);
    // Cluster configs reach traces as ../../traces, run configs as ../traces.
    const bool cluster_folder = text.find("../../") != std::string::npos;
    const std::string path =
        fuzz::source_dir() + (cluster_folder ? "/configs/cluster/fuzz.yaml" : "/configs/fuzz.yaml");
    fuzz::refusing_only_user_errors([&] {
        const config::Params params = config::load_text(text, path);
        switch (params.run.mode) {
        case config::RunMode::bfp_report: (void)run::estimate_bfp_report(params); break;
        case config::RunMode::training_step: (void)run::estimate_training_step(params, true); break;
        case config::RunMode::cluster:
            (void)run::estimate_cluster(params, true, {planner::kAllPlanners.begin(), planner::kAllPlanners.end()});
            (void)planner::build_layer_graph(params.workload.network, params.workload.batch);
            break;
        }
        (void)config::dump(params);
    });
    return 0;
}
