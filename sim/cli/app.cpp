// SPDX-License-Identifier: MIT
#include "cli/app.h"

#include <array>
#include <exception>
#include <iostream>
#include <string>
#include <string_view>

#include <boost/program_options/errors.hpp>

#include "common/errors.h"

namespace fastsim::cli {
namespace {

struct CommandEntry {
    std::string_view name;
    Command run;
    std::string_view summary;
};

constexpr std::array<CommandEntry, 14> kCommands{{
    {"run", run_command, "run the simulation a config describes and print its report"},
    {"plan", plan_command, "partition a network over a cluster config (run.mode cluster) and print the plan"},
    {"compare", compare_command, "every planner on one cluster: speedup over data parallelism per network"},
    {"sweep", sweep_command, "run every design point of a sweep file (parallel, sharded, resumable)"},
    {"sweep-merge", sweep_merge_command, "join the output directories of a sweep's shards into one results.csv"},
    {"explore", explore_command, "the Pareto front of a design space for a training job (time, energy, area, ...)"},
    {"report", report_command, "an HTML page with tables and SVG plots of a sweep or run directory"},
    {"diff", diff_command, "totals and per-layer changes between two run directories (fastsim run --out)"},
    {"collective", collective_command, "time collectives (all-reduce, ...) on a cluster's network, nccl-tests style"},
    {"train", train_command, "BFP training on Fashion-MNIST under precision policies, costed on the node"},
    {"import", import_command, "an ONNX model as a fastsim trace (.yaml)"},
    {"scalesim", scalesim_command, "SCALE-Sim v2's reports from its own .cfg and topology files"},
    {"validate", validate_command, "check a config (and -p overrides) without running it"},
    {"quantize", quantize_command, "quantise numbers to BFP, or report quantisation error"},
}};

void print_usage(std::ostream& out) {
    out << "fastsim: cycle-accurate simulator of FAST block-floating-point training accelerators\n\n"
           "usage: fastsim COMMAND [OPTIONS]   (fastsim COMMAND --help for its options)\n\ncommands:\n";
    for (const auto& c : kCommands) out << "  " << c.name << std::string(12 - c.name.size(), ' ') << c.summary << '\n';
    out << "\nexit status: 0 success, 2 bad input (config, data, options), 3 some sweep points failed, 1 internal "
           "error\n";
}

/// `code`, or exit 2 naming standard output when what the command printed could not all be
/// written (a full disk, a closed pipe): output lost is never a success.
int checked_output(int code) {
    std::cout.flush();
    if (std::cout) return code;
    std::cerr << "fastsim: error: could not write to standard output (a full disk or a closed pipe?): the output "
                 "is incomplete\n";
    return code == kSuccess ? kUserError : code;
}

}  // namespace

std::string shell_command_line(const std::vector<std::string>& words) {
    std::string line;
    for (const std::string& word : words) {
        if (!line.empty()) line += ' ';
        const bool plain = !word.empty() && word.find_first_not_of(
                                                "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                                "0123456789_-+=./,:@%") == std::string::npos;
        if (plain) {
            line += word;
            continue;
        }
        line += '\'';
        for (char c : word) line += c == '\'' ? std::string("'\\''") : std::string(1, c);
        line += '\'';
    }
    return line;
}

int run_app(const std::vector<std::string>& args) {
    try {
        if (args.empty()) {
            print_usage(std::cerr);
            return kUserError;
        }
        const std::string& name = args.front();
        if (name == "-h" || name == "--help" || name == "help") {
            print_usage(std::cout);
            return checked_output(kSuccess);
        }
        if (name == "--version") {
            std::cout << "fastsim " << FASTSIM_VERSION << '\n';
            return checked_output(kSuccess);
        }
        for (const auto& c : kCommands)
            if (c.name == name) return checked_output(c.run(std::vector<std::string>(args.begin() + 1, args.end())));
        std::cerr << "fastsim: error: unknown command '" << printable(name) << "'\n\n";
        print_usage(std::cerr);
        return kUserError;
    } catch (const UserError& e) {
        std::cerr << "fastsim: error: " << e.what() << '\n';
        return kUserError;
    } catch (const boost::program_options::error& e) {
        std::cerr << "fastsim: error: " << e.what() << " (see fastsim " << args.front() << " --help)\n";
        return kUserError;
    } catch (const std::exception& e) {
        std::cerr << "fastsim: internal error: " << e.what()
                  << "\nThis is a bug in fastsim; please report it with the command line.\n";
        return kInternalError;
    } catch (...) {
        std::cerr << "fastsim: internal error: unknown exception\n";
        return kInternalError;
    }
}

}  // namespace fastsim::cli
