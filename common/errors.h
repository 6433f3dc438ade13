// SPDX-License-Identifier: MIT
#pragma once

#include <stdexcept>
#include <string>

namespace fastsim {

/// Where a user's value came from: file, 1-based line and column, and its key path (a YAML
/// key such as `node.dram.latency_ns`, or a CSV column). A value set by `-p key=value` has
/// file "-p key" and line 0.
struct Location {
    std::string file;
    int line = 0;
    int column = 0;
    std::string key_path;

    /// "file:line:col: key.path" (parts that are unknown are left out).
    [[nodiscard]] std::string describe() const;
};

/// `text` on one line, as a terminal shows it: newline written as \n, every other control
/// character but tab (C0, DEL and C1) and every byte that is not well-formed UTF-8 as \xNN. So a message
/// quoting a user's bytes prints whole (a NUL would end what()) and cannot move the terminal.
std::string printable(const std::string& text);

/// Anything the user got wrong (config, input file, command line, a request too large to
/// run). The CLI prints what() and exits with status 2. Every other exception is a bug
/// (exit 1). The message is kept printable().
class UserError : public std::runtime_error {
public:
    explicit UserError(const std::string& message) : std::runtime_error(printable(message)) {}
    explicit UserError(const char* message) : UserError(std::string(message)) {}
};

/// A user error at a place in a file: what() is "file:line:col: key.path: message".
class ConfigError : public UserError {
public:
    ConfigError(const Location& where, const std::string& message)
        : UserError(where.describe() + ": " + message), m_where(where) {}
    [[nodiscard]] const Location& where() const { return m_where; }

private:
    Location m_where;
};

}  // namespace fastsim
