// SPDX-License-Identifier: MIT
#include <catch2/catch.hpp>

#include "converter/converter_model.h"

using namespace fastsim;

TEST_CASE("converter defaults derive from g: log2 g comparator levels + 3 stages, a group per cycle", "[converter]") {
    CHECK(converter::ConverterParams::derived_from(16).pipeline_latency_cycles == 4 + 3);
    CHECK(converter::ConverterParams::derived_from(16).lanes == 16);
    CHECK(converter::ConverterParams::derived_from(12).pipeline_latency_cycles == 4 + 3);  // ceil(log2 12)
    CHECK(converter::ConverterParams::derived_from(1).pipeline_latency_cycles == 3);
}

TEST_CASE("converter latency and throughput on hand-computed jobs", "[converter]") {
    const auto p = converter::ConverterParams::derived_from(16);
    // 100 values -> 7 groups (112 slots); 16 lanes: 7 issue cycles + 7 latency = 14.
    const auto nearest = converter::conversion_cost(p, 100, bfp::Rounding::nearest, 8);
    CHECK(nearest.groups == 7);
    CHECK(nearest.cycles == 14);
    CHECK(nearest.comparator_ops == 7 * 15);
    CHECK(nearest.subtractor_ops == 112);
    CHECK(nearest.lfsr_steps == 0);
    const auto sr = converter::conversion_cost(p, 100, bfp::Rounding::stochastic, 8);
    CHECK(sr.cycles == 14);  // noise is added in the pipeline: no extra cycles
    CHECK(sr.noise_adds == 112);
    CHECK(sr.lfsr_steps == 112 * 8);
    // Half the lanes: a group takes 2 cycles. 1 value still costs a whole group.
    const converter::ConverterParams narrow{16, 8, 7};
    CHECK(converter::conversion_cost(narrow, 100, bfp::Rounding::nearest, 8).cycles == 7 + 14);
    CHECK(converter::conversion_cost(narrow, 1, bfp::Rounding::nearest, 8).cycles == 7 + 2);
    CHECK(converter::conversion_cost(p, 0, bfp::Rounding::nearest, 8).cycles == 0);
}
