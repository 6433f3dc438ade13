// SPDX-License-Identifier: MIT
#pragma once

#include "node/node.h"

namespace fastsim::test {

/// The node of the hand-computed node tests: 2 x 2 array, g = 4, e = 8, 1 GHz, DRAM 8 bits
/// per cycle + 10 cycles, SRAM ports wide.
inline node::NodeParams small_node() {
    node::NodeParams p;
    p.array = {2, 2, 4};
    p.converter = converter::ConverterParams::derived_from(4);  // 4 lanes, latency 2 + 3
    p.exponent_bits = 8;
    p.clock_hz = 1'000'000'000;
    p.dram = {8'000'000'000ull, 10};
    p.sram.exponent_bank = {1u << 20, 1u << 20};
    p.sram.mantissa_bank = {1u << 20, 1u << 20};
    return p;
}

}  // namespace fastsim::test
