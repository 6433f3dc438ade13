// SPDX-License-Identifier: MIT
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "support/temp_dir.h"

namespace fastsim::test {

struct Result {
    int exit_code;  ///< -1 if a signal ended it
    std::string out;
    std::string err;
};

inline std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

/// Runs `fastsim ARGS` through the shell, stdin from `input`; `env` is prepended as
/// VAR=value assignments for `env`.
inline Result run_fastsim(const std::string& args, const std::string& input = "", const std::string& env = "") {
    TempDir dir;
    const std::string in = dir.write("stdin.txt", input);
    // env -u: fastsim must silence SystemC's banner itself (this test binary sets the variable).
    const std::string command = "env -u SC_COPYRIGHT_MESSAGE " + env + " " + std::string(FASTSIM_BINARY) + " " + args +
                                " <" + in + " >" + dir.path("out") + " 2>" + dir.path("err");
    const int status = std::system(command.c_str());
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, slurp(dir.path("out")), slurp(dir.path("err"))};
}

}  // namespace fastsim::test
