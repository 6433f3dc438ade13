// SPDX-License-Identifier: MIT
// `fastsim scalesim -c ARCH.cfg -t TOPOLOGY.csv [-i conv|gemm] -p OUT`: SCALE-Sim v2's own
// inputs and reports, computed by fastsim (docs/scalesim.md).
#include <chrono>
#include <filesystem>
#include <iostream>

#include <boost/program_options.hpp>

#include "cli/app.h"
#include "cli/logging.h"
#include "cli/progress.h"
#include "common/errors.h"
#include "common/input_file.h"
#include "common/output_files.h"
#include "config/scalesim_config.h"
#include "config/scalesim_topology.h"
#include "report/scalesim_reports.h"
#include "run/work.h"
#include "sweep/run_dir.h"

namespace fastsim::cli {

int scalesim_command(const std::vector<std::string>& args) {
    namespace po = boost::program_options;
    const std::string usage = "fastsim scalesim -c ARCH.cfg -t TOPOLOGY.csv [-i conv|gemm] -p OUT_DIR";
    po::options_description options(
        usage +
        "\n\nRuns SCALE-Sim v2's machine (commit 22f88b1) on its own inputs and writes its reports\n"
        "COMPUTE_REPORT.csv, BANDWIDTH_REPORT.csv and DETAILED_ACCESS_REPORT.csv to OUT_DIR/<run_name>/,\n"
        "where run_name is the .cfg's [general] run_name (docs/scalesim.md). Both interface modes\n"
        "(InterfaceBandwidth CALC, and USER with its Bandwidth) are reproduced exactly.\n\nOptions");
    std::string cfg_path, topology_path, input_type = "conv", out_dir, max_work;
    options.add_options()("config,c", po::value(&cfg_path), "SCALE-Sim architecture file (.cfg)")(
        "topology,t", po::value(&topology_path), "SCALE-Sim topology file (.csv)")(
        "input-type,i", po::value(&input_type), "conv (layers) or gemm (Layer, M, N, K rows); default conv")(
        "path,p", po::value(&out_dir), "directory the run's report directory goes in (SCALE-Sim's -p)")(
        "max-work", po::value(&max_work), "work limit in estimated seconds (default 20; docs/cli.md, \"Work limit\")");
    const auto vm = parse_command_line(args, options, po::positional_options_description());
    if (!vm) return kSuccess;
    if (cfg_path.empty()) throw UserError("-c ARCH.cfg is required: " + usage);
    if (topology_path.empty()) throw UserError("-t TOPOLOGY.csv is required: " + usage);
    if (out_dir.empty()) throw UserError("-p OUT_DIR is required: " + usage);
    if (input_type != "conv" && input_type != "gemm")
        throw UserError("-i: expected conv or gemm, got '" + input_type + "'");

    const scalesim::Architecture arch =
        config::read_scalesim_cfg(read_input_file(cfg_path, "SCALE-Sim config"), cfg_path);
    const workload::Workload topology =
        config::read_scalesim_csv(read_input_file(topology_path, "SCALE-Sim topology"), topology_path);
    const bool gemm_form = !topology.layers.empty() && topology.layers.front().kind == workload::LayerKind::gemm;
    if (gemm_form != (input_type == "gemm"))
        throw ConfigError({topology_path, 0, 0, ""}, gemm_form
                                                         ? "the topology has Layer, M, N, K rows: run with -i gemm"
                                                         : "the topology has convolution rows: run with -i conv");
    for (const std::string& warning : topology.warnings) logger("scalesim")->warn("{}", warning);

    // Estimated per row before the rows are made into layers: a depthwise row of 2^24 channels
    // is as many layers.
    double all_requests = 0, most = -1;
    std::string largest;
    for (const workload::Layer& row : topology.layers) {
        const double each = scalesim::simulated_requests(arch, config::scalesim_layer(row)),
                     copies = row.kind == workload::LayerKind::gemm ? 1.0 : static_cast<double>(row.groups);
        all_requests += each * copies;
        if (each * copies > most) most = each * copies, largest = row.name;
    }
    const run::WorkEstimate work =
        run::estimate_scalesim(all_requests, largest.empty() ? "" : "layer '" + largest + "' of " + topology_path);
    run::check_work(work, max_work.empty() ? run::kDefaultMaxWorkSeconds : run::parse_max_work(max_work),
                    topology_path);
    const std::vector<scalesim::Layer> layers = config::scalesim_layers(topology);
    std::vector<double> requests;
    for (const scalesim::Layer& l : layers) requests.push_back(scalesim::simulated_requests(arch, l));
    // The run's folder is replaced whole, as SCALE-Sim replaces it, or left as it was: locked and
    // checked writable now, its reports staged and moved in together at the end.
    const std::filesystem::path dir = std::filesystem::path(out_dir) / arch.run_name;
    // Only its own earlier reports: another command's run there is a user's result.
    if (sweep::holds_run(dir.string()) && sweep::run_command(dir.string()) != "scalesim")
        throw UserError(
            dir.string() + " holds the run of another fastsim command" +
            (sweep::run_command(dir.string()).empty() ? "" : " (" + sweep::run_command(dir.string()) + ")") +
            ", which scalesim would replace: give -p another folder, or [general] run_name "
            "another name");
    sweep::RunDirWriter out(dir.string(), /*force=*/true, "scalesim");
    ProgressLine progress("scalesim", work);
    double requests_done = 0;
    std::vector<scalesim::LayerReport> reports;
    const auto start = std::chrono::steady_clock::now();
    for (std::size_t i = 0; i < layers.size(); ++i) {
        if (all_requests > 0) progress.update(requests_done / all_requests);
        requests_done += requests[i];
        try {
            reports.push_back(scalesim::simulate_layer(arch, layers[i]));
        } catch (const UserError& e) {
            throw UserError(topology_path + ": layer " + std::to_string(i) + " '" + layers[i].name + "': " + e.what());
        }
        const scalesim::LayerReport& r = reports.back();
        std::cerr << "layer " << i << " " << layers[i].name << ": " << r.total_cycles << " cycles, " << r.stall_cycles
                  << " stall cycles, " << report::python_float(r.overall_util_percent) << "% utilisation\n";
    }
    const report::ScalesimReports csv = report::scalesim_reports(reports);
    out.write("COMPUTE_REPORT.csv", csv.compute);
    out.write("BANDWIDTH_REPORT.csv", csv.bandwidth);
    out.write("DETAILED_ACCESS_REPORT.csv", csv.detailed_access);
    out.commit(FASTSIM_VERSION);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cerr << layers.size() << " layers in " << seconds << " s; wrote " << dir.string()
              << "/{COMPUTE,BANDWIDTH,DETAILED_ACCESS}"
              << "_REPORT.csv\n";
    return kSuccess;
}

}  // namespace fastsim::cli
