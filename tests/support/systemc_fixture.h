// SPDX-License-Identifier: MIT
#pragma once

#include <systemc>

namespace fastsim::test {

/// Gives a SystemC test case a kernel of its own, so one test binary can elaborate and run
/// many simulations (a second elaboration in one kernel fails with E113/E529).
/// Use as TEST_CASE_METHOD(FreshSimContext, ...); modules built in the test body are
/// destroyed before this fixture.
class FreshSimContext {
public:
    FreshSimContext() {
        m_context = new sc_core::sc_simcontext();
        sc_core::sc_curr_simcontext = m_context;
        sc_core::sc_default_global_context = m_context;
    }
    ~FreshSimContext() {
        sc_core::sc_curr_simcontext = nullptr;
        sc_core::sc_default_global_context = nullptr;
        delete m_context;
    }
    FreshSimContext(const FreshSimContext&) = delete;
    FreshSimContext& operator=(const FreshSimContext&) = delete;

private:
    sc_core::sc_simcontext* m_context;
};

}  // namespace fastsim::test
