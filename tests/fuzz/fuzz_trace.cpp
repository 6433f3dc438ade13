// SPDX-License-Identifier: MIT
// The YAML trace reader, then the lowering of every layer (SizeOverflow is what config turns
// into a located error, so it counts as a refusal here).
#include "common/checked.h"
#include "config/trace_reader.h"
#include "fuzz_support.h"
#include "planner/layer_graph.h"
#include "workload/vector_work.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace fastsim;
    const std::string text(reinterpret_cast<const char*>(data), size);
    fuzz::refusing_only_user_errors([&] {
        const workload::Workload w = config::read_trace_text(text, fuzz::source_dir() + "/traces/fuzz.yaml");
        try {
            for (const workload::Layer& l : w.layers) {
                (void)workload::lower(l, 64);
                if (workload::runs_on_vector_unit(l.kind)) (void)workload::vector_work(l, 64, true);
            }
            // As a cluster run plans it: the GEMM layers only.
            const workload::Workload gemms = workload::without_vector_layers(w);
            if (!gemms.layers.empty()) (void)planner::build_layer_graph(gemms, 64);
        } catch (const SizeOverflow&) {}
    });
    return 0;
}
