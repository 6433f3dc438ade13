// SPDX-License-Identifier: MIT
// The SCALE-Sim topology CSV reader, then the lowering of every layer (SizeOverflow is what config turns
// into a located error, so it counts as a refusal here).
#include "common/checked.h"
#include "config/trace_reader.h"
#include "fuzz_support.h"
#include "planner/layer_graph.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace fastsim;
    const std::string text(reinterpret_cast<const char*>(data), size);
    fuzz::refusing_only_user_errors([&] {
        const workload::Workload w = config::read_trace_text(text, fuzz::source_dir() + "/traces/fuzz.csv");
        try {
            for (const workload::Layer& l : w.layers) (void)workload::lower(l, 64);
            (void)planner::build_layer_graph(w, 64);
        } catch (const SizeOverflow&) {}
    });
    return 0;
}
