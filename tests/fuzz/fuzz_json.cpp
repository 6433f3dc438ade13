// SPDX-License-Identifier: MIT
// The JSON reader of the files fastsim reads back, and their interpreters: a point record
// (points/<id>/point.json) and a sweep's identity (sweep.json).
#include "fuzz_support.h"
#include "common/json_reader.h"
#include "sweep/point_record.h"
#include "sweep/sweep_dir.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace fastsim;
    const std::string text(reinterpret_cast<const char*>(data), size);
    fuzz::refusing_only_user_errors([&] { (void)fastsim::parse_json(text, "fuzz.json"); });
    const auto dir = fuzz::scratch() / "json";
    fuzz::write_file(dir / "sweep.json", text);
    fuzz::write_file(dir / "points" / "p0000" / "point.json", text);
    fuzz::refusing_only_user_errors(
        [&] { (void)sweep::read_point_record((dir / "points" / "p0000" / "point.json").string()); });
    fuzz::refusing_only_user_errors([&] {
        const sweep::SweepIdentity identity = sweep::read_sweep_json(dir.string());
        (void)sweep::read_point_records(dir.string(), identity);
    });
    return 0;
}
