// SPDX-License-Identifier: MIT
#pragma once

#include <functional>

namespace fastsim::run {

/// Runs `body` under a SystemC kernel of its own, created before and destroyed after (also when
/// `body` throws), the caller's kernel restored: SystemC elaborates once per kernel (E529 after
/// sc_start), so a process that simulates several clusters runs each in one.
void in_fresh_kernel(const std::function<void()>& body);

}  // namespace fastsim::run
