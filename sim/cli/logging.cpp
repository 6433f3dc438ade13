// SPDX-License-Identifier: MIT
#include "cli/logging.h"

#include <spdlog/sinks/stdout_color_sinks.h>

#include <algorithm>
#include <iostream>

#include <boost/program_options.hpp>

#include "common/errors.h"

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
        throw UserError("--log-level: expected one of trace, debug, info, warn, error, off; got '" + name + "'");
    spdlog::set_level(level);
}

boost::program_options::options_description common_options() {
    namespace po = boost::program_options;
    po::options_description common("Common options");
    common.add_options()("help,h", "print this help and exit")(
        "log-level", po::value<std::string>()->default_value("warn"), "trace, debug, info, warn, error or off");
    return common;
}

std::optional<boost::program_options::variables_map> parse_command_line(
    const std::vector<std::string>& args, boost::program_options::options_description& options,
    const boost::program_options::positional_options_description& positional) {
    namespace po = boost::program_options;
    options.add(common_options());
    po::variables_map vm;
    // No abbreviations: `plan --plan x.json` must not be read as --planner x.json.
    const int style = po::command_line_style::default_style & ~po::command_line_style::allow_guessing;
    po::store(po::command_line_parser(args).options(options).positional(positional).style(style).run(), vm);
    if (vm.count("help")) {
        std::cout << options << '\n';
        return std::nullopt;
    }
    po::notify(vm);
    // An empty value ('') is never meant: refuse it rather than fall back to a default.
    for (const auto& [name, value] : vm) {
        const po::option_description* option = options.find_nothrow(name, false);
        if (value.defaulted() || !option || option->semantic()->max_tokens() == 0) continue;  // a flag holds ""
        const auto* text = boost::any_cast<std::string>(&value.value());
        const auto* texts = boost::any_cast<std::vector<std::string>>(&value.value());
        const bool empty =
            (text && text->empty()) ||
            (texts && std::any_of(texts->begin(), texts->end(), [](const std::string& t) { return t.empty(); }));
        if (empty) throw UserError("--" + name + ": expected a value, got ''");
    }
    set_log_level(vm["log-level"].as<std::string>());
    return vm;
}

}  // namespace fastsim::cli
