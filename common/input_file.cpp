// SPDX-License-Identifier: MIT
#include "common/input_file.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>

#include "common/errors.h"

namespace fastsim {
namespace {

std::string kind_of(mode_t mode) {
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a regular file";
}

std::string size_text(std::uint64_t bytes) {
    return std::to_string(bytes) + " bytes (" + std::to_string(bytes >> 20) + " MiB)";
}

}  // namespace

void require_regular_file(const std::string& path, std::string_view what) {
    if (path.empty()) throw UserError(std::string(what) + ": expected a file name, got ''");
    struct stat info {};
    if (::stat(path.c_str(), &info) != 0)
        throw UserError(path + ": cannot open " + std::string(what) + ": " + std::strerror(errno));
    if (!S_ISREG(info.st_mode))
        throw UserError(path + ": expected a " + std::string(what) + " (a regular file), got " + kind_of(info.st_mode));
}

std::string read_input_file(const std::string& path, std::string_view what, std::uint64_t max_bytes) {
    require_regular_file(path, what);
    std::ifstream in(path, std::ios::binary);
    if (!in) throw UserError(path + ": cannot open " + std::string(what) + ": " + std::strerror(errno));
    return read_input_stream(in, path, what, max_bytes);
}

std::string read_input_stream(std::istream& in, const std::string& path, std::string_view what,
                              std::uint64_t max_bytes) {
    std::string text;
    char buffer[1 << 16];
    // Read in chunks, so a file that grows while it is read cannot exceed the limit either.
    while (in.read(buffer, sizeof buffer) || in.gcount() > 0) {
        const auto got = static_cast<std::uint64_t>(in.gcount());
        if (text.size() + got > max_bytes)
            throw UserError(path + ": the " + std::string(what) + " is larger than " + size_text(max_bytes) +
                            ", the most fastsim reads");
        text.append(buffer, static_cast<std::size_t>(got));
    }
    if (in.bad()) throw UserError(path + ": error while reading the " + std::string(what));
    return text;
}

}  // namespace fastsim
