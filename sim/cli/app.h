// SPDX-License-Identifier: MIT
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace fastsim::cli {

/// Process exit codes of `fastsim`.
enum ExitCode : int {
    kSuccess = 0,
    kInternalError = 1,  ///< a bug in fastsim: please report it
    kUserError = 2,      ///< bad config, input or command line: the message says what and where
    kPointsFailed = 3    ///< fastsim sweep: it ran, but some design points failed or were stopped (see results.csv)
};

/// Runs `fastsim ARGS...` (args exclude the program name); never throws.
int run_app(const std::vector<std::string>& args);

/// `words` joined by spaces, each single-quoted for a POSIX shell unless it is made only of
/// characters the shell takes literally: what re-runs the command (report.json's command_line).
std::string shell_command_line(const std::vector<std::string>& words);

/// A subcommand: parses its own arguments, returns an exit code, throws UserError
/// for anything the user got wrong.
using Command = int (*)(const std::vector<std::string>& args);

int quantize_command(const std::vector<std::string>& args);
int validate_command(const std::vector<std::string>& args);
int run_command(const std::vector<std::string>& args);
int plan_command(const std::vector<std::string>& args);
int compare_command(const std::vector<std::string>& args);
int sweep_command(const std::vector<std::string>& args);
int sweep_merge_command(const std::vector<std::string>& args);
int explore_command(const std::vector<std::string>& args);
int report_command(const std::vector<std::string>& args);
int train_command(const std::vector<std::string>& args);
int diff_command(const std::vector<std::string>& args);
int import_command(const std::vector<std::string>& args);
int scalesim_command(const std::vector<std::string>& args);
int collective_command(const std::vector<std::string>& args);

}  // namespace fastsim::cli
