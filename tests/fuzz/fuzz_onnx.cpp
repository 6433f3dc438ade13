// SPDX-License-Identifier: MIT
// The ONNX reader on arbitrary bytes (protobuf parse, ONNX shape inference, the graph walk),
// then the contract of `fastsim import`: the written trace reads back, and every layer lowers.
#include "common/checked.h"
#include "config/onnx_model.h"
#include "config/trace_reader.h"
#include "config/trace_writer.h"
#include "fuzz_support.h"
#include "workload/vector_work.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace fastsim;
    const std::string bytes(reinterpret_cast<const char*>(data), size);
    fuzz::refusing_only_user_errors([&] {
        const workload::Workload w = config::read_onnx_bytes(bytes, "fuzz.onnx");
        const workload::Workload back = config::read_trace_text(config::trace_yaml(w), "fuzz.yaml");
        if (back.layers.size() != w.layers.size()) __builtin_trap();
        try {
            for (const workload::Layer& l : w.layers) {
                (void)workload::lower(l, 64);
                if (workload::runs_on_vector_unit(l.kind)) (void)workload::vector_work(l, 64, true);
            }
        } catch (const SizeOverflow&) {}
    });
    return 0;
}
