// SPDX-License-Identifier: MIT
#include "cli/logging.h"

#include <spdlog/sinks/stdout_color_sinks.h>

#include <boost/program_options.hpp>

#include "config/errors.h"

namespace fastsim::cli {

std::shared_ptr<spdlog::logger> logger(const std::string& subsystem) {
    if (auto existing = spdlog::get(subsystem)) return existing;
    auto created = spdlog::stderr_color_mt(subsystem);
    created->set_pattern("[%l] %n: %v");
    created->set_level(spdlog::default_logger()->level());
    return created;
}

void set_log_level(const std::string& name) {
    const auto level = spdlog::level::from_str(name);
    if (level == spdlog::level::off && name != "off")
        throw config::UserError("--log-level: expected one of trace, debug, info, warn, error, off; got '" + name + "'");
    spdlog::set_level(level);
}

boost::program_options::options_description common_options() {
    namespace po = boost::program_options;
    po::options_description common("Common options");
    common.add_options()("help,h", "print this help and exit")(
        "log-level", po::value<std::string>()->default_value("warn"), "trace, debug, info, warn, error or off");
    return common;
}

}  // namespace fastsim::cli
