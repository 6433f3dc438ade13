// SPDX-License-Identifier: MIT
#pragma once

#include <spdlog/spdlog.h>

#include <memory>
#include <string>

#include <optional>
#include <vector>

#include <boost/program_options/options_description.hpp>
#include <boost/program_options/positional_options.hpp>
#include <boost/program_options/variables_map.hpp>

namespace fastsim::cli {

/// The named logger of a subsystem ("cli", "config", "run", ...), writing to stderr.
std::shared_ptr<spdlog::logger> logger(const std::string& subsystem);

/// Sets every logger's level from a name (trace, debug, info, warn, error, off);
/// UserError for an unknown name.
void set_log_level(const std::string& name);

/// Options every subcommand accepts: --help, --log-level.
boost::program_options::options_description common_options();

/// Parses a subcommand's `args` against `options` plus common_options(), `positional` naming
/// its positional arguments. On --help prints the options to stdout and returns nothing;
/// otherwise stores the values, sets the log level and returns them. UserError for an empty
/// value ('') given to any option.
std::optional<boost::program_options::variables_map> parse_command_line(
    const std::vector<std::string>& args, boost::program_options::options_description& options,
    const boost::program_options::positional_options_description& positional);

}  // namespace fastsim::cli
