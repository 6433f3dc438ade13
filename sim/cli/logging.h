// SPDX-License-Identifier: MIT
#pragma once

#include <spdlog/spdlog.h>

#include <memory>
#include <string>

#include <boost/program_options/options_description.hpp>

namespace fastsim::cli {

/// The named logger of a subsystem ("cli", "config", "run", ...), writing to stderr.
std::shared_ptr<spdlog::logger> logger(const std::string& subsystem);

/// Sets every logger's level from a name (trace, debug, info, warn, error, off);
/// config::UserError for an unknown name.
void set_log_level(const std::string& name);

/// Options every subcommand accepts: --help, --log-level.
boost::program_options::options_description common_options();

}  // namespace fastsim::cli
