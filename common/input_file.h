// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>

namespace fastsim {

/// Largest text file fastsim reads whole (configs, traces, energy tables, sweep files,
/// results): 64 MiB. A larger input is refused, never read into memory.
inline constexpr std::uint64_t kMaxTextInputBytes = std::uint64_t{64} << 20;

/// Largest YAML text fastsim parses (configs, traces, energy tables, sweep and explore files):
/// 16 MiB. yaml-cpp's node tree takes about 90 bytes of memory per byte of text (a 16 MiB trace
/// of small layers peaks at 1.5 GB), so a larger YAML file would not fit a 4 GB machine.
inline constexpr std::uint64_t kMaxYamlInputBytes = std::uint64_t{16} << 20;

/// UserError naming `path` and `what` ("config file", "trace", ...) unless `path` names an
/// existing regular file (or a symbolic link to one): a directory, a device such as
/// /dev/zero, a FIFO or a socket is refused before anything is read.
void require_regular_file(const std::string& path, std::string_view what);

/// The whole contents of the regular file at `path`; UserError (naming `path` and `what`) if
/// require_regular_file refuses it, it cannot be read, or it holds more than `max_bytes`.
std::string read_input_file(const std::string& path, std::string_view what,
                            std::uint64_t max_bytes = kMaxTextInputBytes);

/// Everything left on `in` (standard input, a pipe), named `source` in errors; UserError if it
/// holds more than `max_bytes`, so an endless stream such as /dev/zero is refused, not read.
std::string read_input_stream(std::istream& in, const std::string& source, std::string_view what,
                              std::uint64_t max_bytes = kMaxTextInputBytes);

}  // namespace fastsim
