// SPDX-License-Identifier: MIT
#pragma once

// Runs the fastsim executable (FASTSIM_BINARY) as a user would, for the CLI tests.

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <sys/wait.h>

#include "support/temp_dir.h"

namespace fastsim::test {

struct CliResult {
    int exit_code;
    std::string out;
    std::string err;
};

inline std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

/// Runs `fastsim ARGS` through the shell, stdin from `input`.
inline CliResult run_fastsim(const std::string& args, const std::string& input = "") {
    TempDir dir;
    const std::string in = dir.write("stdin.txt", input);
    // env -u: fastsim must silence SystemC's banner itself (this test binary sets the variable).
    const std::string command = "env -u SC_COPYRIGHT_MESSAGE " + std::string(FASTSIM_BINARY) + " " + args + " <" + in +
                                " >" + dir.path("out") + " 2>" + dir.path("err");
    const int status = std::system(command.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(dir.path("out")), slurp(dir.path("err"))};
}

}  // namespace fastsim::test
