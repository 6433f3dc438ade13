// SPDX-License-Identifier: MIT
// `fastsim validate` and `fastsim run`: commands that take a config file.
#include <iostream>

#include <boost/program_options.hpp>

#include "cli/app.h"
#include "cli/logging.h"
#include "config/errors.h"
#include "config/load.h"
#include "report/output_files.h"
#include "report/table.h"
#include "report/training_report.h"
#include "run/bfp_error_report.h"
#include "run/training_step.h"

#include <chrono>
#include <unistd.h>

namespace fastsim::cli {
namespace {

namespace po = boost::program_options;

struct ConfigInvocation {
    config::Params params;
    bool dump = false;
    std::string out_dir;  ///< run only: where report.json and layers.csv go
};

/// Parses CONFIG, -p overrides, --dump-config and the common options (and, for `run`,
/// --out and --fidelity). Empty on --help.
std::optional<ConfigInvocation> parse_config_args(const std::vector<std::string>& args, const std::string& usage,
                                                  bool run_options) {
    po::options_description options(usage + "\n\nOptions");
    std::string config_path, out_dir, fidelity;
    std::vector<std::string> overrides;
    if (run_options)
        options.add_options()("out", po::value(&out_dir), "write report.json and layers.csv into this folder (training_step)")(
            "fidelity", po::value(&fidelity), "memo (default: memoised tile timing) or stepped (the SystemC array, cycle by cycle); same as -p run.fidelity=...");
    options.add_options()("config", po::value(&config_path), "YAML config file")(
        "param,p", po::value(&overrides)->composing(), "override a config key: -p key.path=value (repeatable)")(
        "dump-config", "print the effective config (every default filled in) as YAML");
    options.add(common_options());
    po::positional_options_description positional;
    positional.add("config", 1);
    po::variables_map vm;
    po::store(po::command_line_parser(args).options(options).positional(positional).run(), vm);
    if (vm.count("help")) {
        std::cout << options << '\n';
        return std::nullopt;
    }
    po::notify(vm);
    set_log_level(vm["log-level"].as<std::string>());
    if (config_path.empty()) throw config::UserError("missing CONFIG: " + usage);
    if (!fidelity.empty()) {
        if (!config::parse_fidelity(fidelity))
            throw config::UserError("--fidelity: expected memo or stepped, got '" + fidelity + "'");
        overrides.push_back("run.fidelity=" + fidelity);
    }
    ConfigInvocation out{config::load(config_path, overrides), vm.count("dump-config") > 0, out_dir};
    logger("config")->info("loaded {} with {} override(s)", config_path, overrides.size());
    return out;
}

void print_bfp_error_report(const config::Params& params) {
    const auto rows = run::bfp_error_report(params);
    std::cout << "BFP quantisation error (g=" << params.bfp.group_size << ", e=" << params.bfp.exponent_bits
              << ", stochastic noise " << params.bfp.noise_bits << " bits from a " << params.bfp.lfsr_bits
              << "-bit LFSR, seed " << params.run.seed << ")\n\n";
    report::Table table({"tensor", "distribution", "mantissa_bits", "rounding", "sqnr_db", "mean_rel_error",
                         "max_rel_error", "mean_abs_error"});
    for (const auto& r : rows)
        table.add_row({r.tensor, std::string(config::to_string(r.distribution)), std::to_string(r.mantissa_bits),
                       std::string(bfp::to_string(r.rounding)), report::Table::fixed(r.stats.sqnr_db, 2),
                       report::Table::scientific(r.stats.mean_rel_error), report::Table::scientific(r.stats.max_rel_error),
                       report::Table::scientific(r.stats.mean_abs_error)});
    table.print(std::cout);
}

/// Progress on stderr: a line that rewrites itself on a terminal, a line per 10% otherwise.
run::Progress progress_printer() {
    const bool tty = ::isatty(STDERR_FILENO) != 0;
    return [tty, last_decile = std::size_t{0}](std::size_t done, std::size_t all) mutable {
        if (tty) {
            std::cerr << "\rphases " << done << "/" << all << (done == all ? "\n" : "") << std::flush;
        } else if (done * 10 / all > last_decile || done == all) {
            last_decile = done * 10 / all;
            logger("run")->info("phases {}/{}", done, all);
        }
    };
}

void run_training_step(const config::Params& params, const std::string& out_dir) {
    const auto start = std::chrono::steady_clock::now();
    const run::TrainingStepResult result = run::run_training_step(params, progress_printer());
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    logger("run")->info("{} phases simulated in {:.3f} s ({} distinct tile shapes memoised)", result.phases.size(),
                        seconds, result.distinct_tile_shapes);
    report::print_training_step(std::cout, params, result);
    if (!out_dir.empty()) {
        report::write_file_atomically(out_dir + "/report.json", report::training_step_json(params, result));
        report::write_file_atomically(out_dir + "/layers.csv", report::training_step_csv(params, result));
        std::cout << "wrote " << out_dir << "/report.json and " << out_dir << "/layers.csv\n";
    }
}

}  // namespace

int validate_command(const std::vector<std::string>& args) {
    const auto invocation = parse_config_args(args, "fastsim validate CONFIG [-p key=value ...] [--dump-config]", false);
    if (!invocation) return kSuccess;
    if (invocation->dump)
        std::cout << config::dump(invocation->params);
    else
        std::cout << invocation->params.source_file << ": ok\n";
    return kSuccess;
}

int run_command(const std::vector<std::string>& args) {
    const auto invocation = parse_config_args(
        args, "fastsim run CONFIG [-p key=value ...] [--out DIR] [--fidelity memo|stepped] [--dump-config]", true);
    if (!invocation) return kSuccess;
    const config::Params& params = invocation->params;
    if (invocation->dump) std::cout << config::dump(params) << '\n';
    switch (params.run.mode) {
    case config::RunMode::bfp_report:
        if (!invocation->out_dir.empty()) throw config::UserError("--out applies to run.mode training_step only");
        print_bfp_error_report(params);
        break;
    case config::RunMode::training_step:
        run_training_step(params, invocation->out_dir);
        break;
    }
    return kSuccess;
}

}  // namespace fastsim::cli
