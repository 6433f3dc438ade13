// SPDX-License-Identifier: MIT
// `fastsim validate` and `fastsim run`: commands that take a config file.
#include <iostream>

#include <boost/program_options.hpp>

#include "cli/app.h"
#include "cli/logging.h"
#include "config/errors.h"
#include "config/load.h"
#include "report/table.h"
#include "run/bfp_error_report.h"

namespace fastsim::cli {
namespace {

namespace po = boost::program_options;

struct ConfigInvocation {
    config::Params params;
    bool dump = false;
};

/// Parses CONFIG, -p overrides, --dump-config and the common options. Empty on --help.
std::optional<ConfigInvocation> parse_config_args(const std::vector<std::string>& args, const std::string& usage) {
    po::options_description options(usage + "\n\nOptions");
    std::string config_path;
    std::vector<std::string> overrides;
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
    ConfigInvocation out{config::load(config_path, overrides), vm.count("dump-config") > 0};
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

}  // namespace

int validate_command(const std::vector<std::string>& args) {
    const auto invocation = parse_config_args(args, "fastsim validate CONFIG [-p key=value ...] [--dump-config]");
    if (!invocation) return kSuccess;
    if (invocation->dump)
        std::cout << config::dump(invocation->params);
    else
        std::cout << invocation->params.source_file << ": ok\n";
    return kSuccess;
}

int run_command(const std::vector<std::string>& args) {
    const auto invocation = parse_config_args(args, "fastsim run CONFIG [-p key=value ...] [--dump-config]");
    if (!invocation) return kSuccess;
    if (invocation->dump) std::cout << config::dump(invocation->params) << '\n';
    switch (invocation->params.run.mode) {
    case config::RunMode::bfp_report:
        print_bfp_error_report(invocation->params);
        break;
    }
    return kSuccess;
}

}  // namespace fastsim::cli
