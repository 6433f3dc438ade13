// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <string_view>

namespace fastsim {

/// Writes `content` to `path` atomically: a temporary file in the same folder, then
/// rename(), so an interrupted run never leaves a truncated report. Creates the folder. A path
/// that exists and is not a regular file (/dev/null, a FIFO, a terminal) is written into, never
/// replaced; a directory is refused. Throws UserError if the folder or file cannot be written.
void write_file_atomically(const std::string& path, const std::string& content);

/// How JSON and CSV reports write numbers: whole numbers below 2^53 exactly (cycle, MAC and
/// byte counts), anything else with 9 significant digits ("%.9g").
std::string format_number(double value);

/// `text` as a JSON string literal, quotes included: `"` and `\` escaped with a backslash,
/// control characters as \u00XX, everything else (UTF-8 included) as is.
std::string json_string(const std::string& text);
/// json_string(text) appended to `out`.
void append_json_string(std::string& out, std::string_view text);

}  // namespace fastsim
