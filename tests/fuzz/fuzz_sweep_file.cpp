// SPDX-License-Identifier: MIT
// The sweep-file reader, then the points and their fingerprint for sweeps small enough to list
// in a fuzz iteration.
#include "fuzz_support.h"
#include "sweep/sweep_spec.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace fastsim;
    const std::string text(reinterpret_cast<const char*>(data), size);
    fuzz::refusing_only_user_errors([&] {
        const sweep::SweepSpec spec = sweep::load_sweep_text(text, fuzz::source_dir() + "/configs/sweeps/fuzz.yaml");
        std::size_t points = 1;
        for (const auto& axis : spec.axes) points *= axis.values.size();
        if (points <= 4096) (void)sweep::fingerprint(sweep::enumerate_points(spec));
    });
    return 0;
}
