// SPDX-License-Identifier: MIT
// libsystemc owns main(); fastsim's entry point is sc_main.
#include <cstdlib>
#include <string>
#include <systemc>
#include <vector>

#include "cli/app.h"

int sc_main(int argc, char* argv[]) {
    // SystemC prints its banner to stdout at exit unless told not to; stdout carries data.
    setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 0);
    return fastsim::cli::run_app(std::vector<std::string>(argv + 1, argv + argc));
}
