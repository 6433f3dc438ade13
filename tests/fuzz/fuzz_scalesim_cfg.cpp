// SPDX-License-Identifier: MIT
// The SCALE-Sim .cfg reader (`fastsim scalesim -c`), then SCALE-Sim's simulation of two small
// layers on the architecture it read, where their work is small enough for a fuzz input.
#include "config/scalesim_config.h"
#include "fuzz_support.h"
#include "scalesim/scalesim.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace fastsim;
    const std::string text(reinterpret_cast<const char*>(data), size);
    fuzz::refusing_only_user_errors([&] {
        const scalesim::Architecture arch = config::read_scalesim_cfg(text, fuzz::source_dir() + "/fuzz.cfg");
        scalesim::Layer conv;
        conv.name = "conv";
        conv.ifmap_height = conv.ifmap_width = 9;
        conv.filter_height = conv.filter_width = 3;
        conv.channels = 3;
        conv.filters = 5;
        conv.stride_height = conv.stride_width = 2;
        scalesim::Layer gemm;
        gemm.name = "gemm";
        gemm.ifmap_height = 7;
        gemm.channels = 1;
        gemm.filter_width = gemm.ifmap_width = 11;
        gemm.filters = 6;
        for (const scalesim::Layer& layer : {conv, gemm})
            if (scalesim::simulated_requests(arch, layer) < 2e6) (void)scalesim::simulate_layer(arch, layer);
    });
    return 0;
}
