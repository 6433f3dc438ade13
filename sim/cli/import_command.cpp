// SPDX-License-Identifier: MIT
// `fastsim import MODEL.onnx --out TRACE.yaml`: an ONNX model as a fastsim trace (docs/onnx.md).
#include <filesystem>
#include <iostream>
#include <map>

#include <boost/program_options.hpp>

#include "cli/app.h"
#include "cli/logging.h"
#include "common/checked.h"
#include "common/errors.h"
#include "common/output_files.h"
#include "config/onnx_model.h"
#include "config/trace_writer.h"
#include "sweep/run_dir.h"
#include "workload/vector_work.h"

namespace fastsim::cli {

int import_command(const std::vector<std::string>& args) {
    namespace po = boost::program_options;
    const std::string usage = "fastsim import MODEL.onnx [--out TRACE.yaml] [--force]";
    po::options_description options(
        usage +
        "\n\nReads an ONNX model's graph (its weights are never read) and writes it as a fastsim\n"
        "trace: per-sample layers with ONNX's inferred shapes (docs/onnx.md). Without --out\n"
        "the trace goes to standard output; a summary goes to standard error.\n\nOptions");
    std::string model, out;
    options.add_options()("model", po::value(&model), "the ONNX model (.onnx)")(
        "out,o", po::value(&out), "the trace file to write (.yaml)")("force", "overwrite an existing --out file");
    po::positional_options_description positional;
    positional.add("model", 1);
    const auto vm = parse_command_line(args, options, positional);
    if (!vm) return kSuccess;
    if (model.empty()) throw UserError("expected an ONNX model: " + usage);
    if (out.empty() && vm->count("force")) throw UserError("--force replaces the file --out names: give --out FILE");
    if (!out.empty()) {
        sweep::refuse_replacing_result_file(out, "--out");
        if (std::error_code ec; std::filesystem::exists(out, ec) && !vm->count("force"))
            throw UserError(out + " exists: choose another --out or add --force to overwrite it");
        if (const std::string ext = std::filesystem::path(out).extension().string(); ext != ".yaml" && ext != ".yml")
            throw UserError("--out " + out + ": a fastsim trace ends in .yaml or .yml");
    }
    const workload::Workload network = config::read_onnx_model(model);
    const std::string yaml = config::trace_yaml(network);
    if (out.empty())
        std::cout << yaml;
    else
        write_file_atomically(out, yaml);

    std::map<std::string, int> kinds;
    std::uint64_t macs = 0, weights = 0;
    for (const workload::Layer& l : network.layers) {
        ++kinds[workload::to_string(l.kind)];
        try {
            macs = checked_add(macs, workload::lower(l, 1).forward_macs(), "forward MACs per sample");
            weights = checked_add(weights, workload::weight_count(l), "weights");
        } catch (const SizeOverflow& overflow) {
            throw ConfigError(l.where, "layer '" + l.name + "': its " + overflow.quantity() + " overflow 64 bits");
        }
    }
    std::string counts;
    for (const auto& [kind, n] : kinds) counts += (counts.empty() ? "" : ", ") + std::to_string(n) + " " + kind;
    for (const std::string& warning : network.warnings) logger("import")->warn("{}", warning);
    std::cerr << model << ": " << network.layers.size() << " layers (" << counts << "); per sample "
              << format_number(static_cast<double>(macs)) << " forward MACs, "
              << format_number(static_cast<double>(weights)) << " weights" << (out.empty() ? "" : "; wrote " + out)
              << '\n';
    return kSuccess;
}

}  // namespace fastsim::cli
