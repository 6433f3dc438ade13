// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>
#include <systemc>

#include "support/systemc_fixture.h"

namespace {

/// Counts timed wake-ups of one SC_METHOD: the smallest module that needs elaboration and sc_start.
SC_MODULE(Ticker) {
    int ticks = 0;
    sc_core::sc_event wake;
    SC_CTOR(Ticker) {
        SC_METHOD(tick);
        sensitive << wake;
    }
    void tick() {
        if (++ticks < 10) wake.notify(1, sc_core::SC_NS);
    }
};

void elaborate_and_run() {
    Ticker ticker("ticker");
    sc_core::sc_start();
    CHECK(ticker.ticks == 10);
    CHECK(sc_core::sc_time_stamp() == sc_core::sc_time(9, sc_core::SC_NS));
}

}  // namespace

// Two elaborations in one process: without a fresh kernel the second fails with E113/E529.
TEST_CASE_METHOD(fastsim::test::FreshSimContext, "a SystemC test case gets a fresh kernel (first)", "[systemc]") {
    elaborate_and_run();
}

TEST_CASE_METHOD(fastsim::test::FreshSimContext, "a SystemC test case gets a fresh kernel (second)", "[systemc]") {
    elaborate_and_run();
}
