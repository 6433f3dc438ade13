// SPDX-License-Identifier: MIT
// libsystemc owns main(); fastsim's entry point is sc_main.
#include <csignal>
#include <cstdlib>
#if defined(__GLIBC__)
#include <malloc.h>
#endif
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
#if defined(__GLIBC__)
    // Planning a large cluster allocates and frees vectors of tens to hundreds of MiB many times
    // (each candidate's replay, each piece's programs); glibc would return each to the kernel
    // and fault it in again, a fifth to a third of a 1,024-node plan's time
    // (docs/performance.md, "Allocation"). Blocks up to 1 GiB stay in the process's heap.
    mallopt(M_MMAP_THRESHOLD, 1 << 30);
    mallopt(M_TRIM_THRESHOLD, 1 << 30);
    mallopt(M_TOP_PAD, 64 << 20);
#endif
    // A closed pipe on standard output is a failed write (exit 2 naming it, as a full disk is),
    // not a death by SIGPIPE that says nothing.
    std::signal(SIGPIPE, SIG_IGN);
    return fastsim::cli::run_app(std::vector<std::string>(argv + 1, argv + argc));
}
