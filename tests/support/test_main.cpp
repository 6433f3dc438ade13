// SPDX-License-Identifier: MIT
// The test binary's entry point: libsystemc owns main(), so sc_main runs the Catch2 session.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdlib>
#include <systemc>

namespace {
// SystemC prints its banner to stderr before sc_main unless this is set; keep output clean.
const bool kQuietBanner = (setenv("SC_COPYRIGHT_MESSAGE", "DISABLE", 0), true);
}  // namespace

int sc_main(int argc, char* argv[]) {
    (void)kQuietBanner;
    return Catch::Session().run(argc, argv);
}
