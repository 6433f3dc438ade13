// SPDX-License-Identifier: MIT
#include "run/fresh_kernel.h"

#include <systemc>

namespace fastsim::run {

void in_fresh_kernel(const std::function<void()>& body) {
    // Swapped in as tests/support/systemc_fixture.h does.
    sc_core::sc_simcontext* const previous = sc_core::sc_curr_simcontext;
    sc_core::sc_simcontext* const previous_default = sc_core::sc_default_global_context;
    auto* const context = new sc_core::sc_simcontext();
    sc_core::sc_curr_simcontext = sc_core::sc_default_global_context = context;
    const auto restore = [&] {
        sc_core::sc_curr_simcontext = nullptr;
        sc_core::sc_default_global_context = nullptr;
        delete context;
        sc_core::sc_curr_simcontext = previous;
        sc_core::sc_default_global_context = previous_default;
    };
    try {
        body();
    } catch (...) {
        restore();
        throw;
    }
    restore();
}

}  // namespace fastsim::run
