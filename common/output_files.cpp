// SPDX-License-Identifier: MIT
#include "common/output_files.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <fcntl.h>
#include <unistd.h>

#include "common/errors.h"

namespace fastsim {

std::string format_number(double value) {
    char buf[32];
    // Whole numbers below 2^53 (cycles, MACs, bytes) exactly, everything else to 9 digits.
    if (std::abs(value) < 9007199254740992.0 && value == std::trunc(value) && std::abs(value) >= 1e9)
        std::snprintf(buf, sizeof buf, "%.0f", value);
    else
        std::snprintf(buf, sizeof buf, "%.9g", value);
    return buf;
}

namespace {

/// Writes `content` into the existing non-regular file `path` (a device or a FIFO), without
/// creating or truncating it. UserError naming it on any failure.
void write_into_existing(const std::string& path, const std::string& content) {
    const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC);
    if (fd < 0) throw UserError("cannot write " + path + ": " + std::strerror(errno));
    const char* at = content.data();
    std::size_t left = content.size();
    while (left > 0) {
        const ssize_t written = ::write(fd, at, left);
        if (written < 0 && errno == EINTR) continue;
        if (written <= 0) {
            const std::string reason = written < 0 ? std::strerror(errno) : "nothing written";
            ::close(fd);
            throw UserError("cannot write " + path + ": " + reason);
        }
        at += written;
        left -= static_cast<std::size_t>(written);
    }
    if (::close(fd) != 0) throw UserError("cannot write " + path + ": " + std::strerror(errno));
}

}  // namespace

void write_file_atomically(const std::string& path, const std::string& content) {
    namespace fs = std::filesystem;
    const fs::path target(path);
    std::error_code ec;
    if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);
    if (ec) throw UserError("cannot create " + target.parent_path().string() + ": " + ec.message());
    // A path that is not a regular file is written into, never replaced: /dev/null, a terminal,
    // a pipe a reader waits on (a rename would put a file where the device was).
    const fs::file_status status = fs::status(target, ec);
    if (!ec && fs::exists(status) && !fs::is_regular_file(status)) {
        if (fs::is_directory(status)) throw UserError("cannot write " + path + ": it is a directory");
        write_into_existing(path, content);
        return;
    }
    const std::string temporary = path + ".tmp." + std::to_string(::getpid());
    {
        std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
        if (!out)
            throw UserError("cannot write " + path + " (its temporary " + temporary + "): " + std::strerror(errno));
        out << content;
        out.flush();
        if (!out) {
            const std::string reason = std::strerror(errno);
            out.close();
            std::remove(temporary.c_str());  // never left behind (a full disk, say)
            throw UserError("cannot write " + path + ": " + reason);
        }
    }
    if (std::rename(temporary.c_str(), path.c_str()) != 0) {
        const std::string reason = std::strerror(errno);
        std::remove(temporary.c_str());
        throw UserError("cannot write " + path + ": " + reason);
    }
}

void append_json_string(std::string& out, std::string_view text) {
    out += '"';
    for (const char ch : text) {
        const auto c = static_cast<unsigned char>(ch);
        if (c == '"' || c == '\\') {
            out += '\\';
            out += ch;
        } else if (c < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out += buf;
        } else {
            out += ch;
        }
    }
    out += '"';
}

std::string json_string(const std::string& text) {
    std::string out;
    out.reserve(text.size() + 2);
    append_json_string(out, text);
    return out;
}

}  // namespace fastsim
