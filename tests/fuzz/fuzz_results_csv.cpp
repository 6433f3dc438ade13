// SPDX-License-Identifier: MIT
// The CSV reader of fastsim report, and the reports built from it: the input as a sweep's
// results.csv (beside a fixed sweep.json) and as a run's layers.csv (beside a fixed report.json).
#include "fuzz_support.h"
#include "common/csv_reader.h"
#include "report/result_columns.h"
#include "report/results_dir.h"

namespace {

constexpr const char* kSweepJson =
    R"({"format": "fastsim-sweep/1", "name": "fuzz", "points": 4, "fingerprint": "0",
        "axes": [{"name": "rows", "keys": ["node.array.rows"]}, {"name": "m", "keys": ["precision.weights"]}],
        "plot": {"x": "node.array.rows", "series": "precision.weights"}})";
constexpr const char* kReportJson =
    R"({"config": "fuzz.yaml", "network": "fuzz", "batch": 1, "fidelity": "memo", "total_cycles": 10,
        "total_seconds": 1e-8, "total_macs": 5, "total_energy_pj": 3, "pj_per_mac": 0.6, "utilisation_percent": 50,
        "energy_pj": {"fmac": 1, "sram": 2}})";

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace fastsim;
    const std::string text(reinterpret_cast<const char*>(data), size);
    fuzz::refusing_only_user_errors([&] {
        const fastsim::CsvTable csv = fastsim::parse_csv(text, "fuzz.csv");
        for (std::size_t row = 0; row < csv.rows.size(); ++row)
            for (std::size_t column = 0; column < csv.header.size(); ++column)
                fuzz::refusing_only_user_errors([&] { (void)report::result_cell(csv, row, column); });
    });
    const auto sweep = fuzz::scratch() / "sweep";
    fuzz::write_file(sweep / "sweep.json", kSweepJson);
    fuzz::write_file(sweep / "results.csv", text);
    fuzz::refusing_only_user_errors([&] { (void)report::sweep_report(sweep.string()); });
    const auto run = fuzz::scratch() / "run";
    fuzz::write_file(run / "report.json", kReportJson);
    fuzz::write_file(run / "layers.csv", text);
    fuzz::refusing_only_user_errors([&] { (void)report::run_report(run.string()); });
    return 0;
}
