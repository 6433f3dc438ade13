// SPDX-License-Identifier: MIT
// Shared by the libFuzzer harnesses (docs/robustness.md): a scratch folder, and the rule that an
// input may be refused only with a UserError; any other exception escapes and is a finding.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/errors.h"

namespace fastsim::fuzz {

/// A folder of this process's own, made once, for inputs that the code under test reads as files.
inline const std::filesystem::path& scratch() {
    static const std::filesystem::path dir = [] {
        const std::filesystem::path base =
            std::filesystem::exists("/dev/shm") ? "/dev/shm" : std::filesystem::temp_directory_path();
        std::filesystem::path d = base / ("fastsim-fuzz-" + std::to_string(::getpid()));
        std::filesystem::create_directories(d);
        return d;
    }();
    return dir;
}

inline void write_file(const std::filesystem::path& path, const std::string& bytes) {
    std::filesystem::create_directories(path.parent_path());
    std::ofstream(path, std::ios::binary | std::ios::trunc)
        .write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

/// The repository's root, where shipped configs and traces are (compiled in).
inline std::string source_dir() { return FASTSIM_SOURCE_DIR; }

/// Runs `work`; a UserError is the expected refusal of a bad input, anything else escapes.
template <typename Work>
void refusing_only_user_errors(Work&& work) {
    try {
        work();
    } catch (const UserError&) {}
}

}  // namespace fastsim::fuzz
