// SPDX-License-Identifier: MIT
#pragma once

#include <stdexcept>
#include <string>

namespace fastsim::config {

/// Where a config value came from: file, 1-based line and column, and its YAML key path.
/// A value set by `-p key=value` has file "-p key" and line 0.
struct Location {
    std::string file;
    int line = 0;
    int column = 0;
    std::string key_path;

    /// "file:line:col: key.path" (parts that are unknown are left out).
    [[nodiscard]] std::string describe() const;
};

/// Anything the user got wrong (config, input file, command line). The CLI prints what()
/// and exits with status 2; models never see one.
class UserError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

/// A config error: what() is "file:line:col: key.path: message".
class ConfigError : public UserError {
public:
    ConfigError(const Location& where, const std::string& message)
        : UserError(where.describe() + ": " + message), m_where(where) {}
    [[nodiscard]] const Location& where() const { return m_where; }

private:
    Location m_where;
};

}  // namespace fastsim::config
