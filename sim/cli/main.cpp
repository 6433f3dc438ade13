// SPDX-License-Identifier: MIT
// libsystemc owns main(); fastsim's entry point is sc_main.
#include <cstdlib>
#include <string>
#include <systemc>
#include <vector>

#include "cli/app.h"

namespace {
// SystemC prints its banner to stderr before sc_main runs, unless this is set; static
// initialisers of the executable run before libsystemc's main().
const bool kQuietBanner = (setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 0), true);
}  // namespace

int sc_main(int argc, char* argv[]) {
    (void)kQuietBanner;
    return fastsim::cli::run_app(std::vector<std::string>(argv + 1, argv + argc));
}
