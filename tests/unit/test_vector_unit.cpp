// SPDX-License-Identifier: MIT
// The vector unit: its cycle formula, the cycle-stepped SystemC module against it, the chunked
// pipeline of a vector-unit phase by hand, and the stepped node against the memo recurrence.
#include <catch2/catch.hpp>

#include <algorithm>
#include <random>

#include "node/node.h"
#include "support/small_node.h"
#include "node/vector_phase.h"
#include "support/systemc_fixture.h"
#include "vector/vector_unit.h"

using namespace fastsim;

namespace {

/// g = 4, e = 8, 1 GHz, DRAM 8 bits per cycle + 10 cycles; converter 4 lanes, latency 5;
/// vector unit 2 lanes, 1 op per lane, latency 3.
/// test::small_node with a 2-lane vector unit, 1 op per lane per cycle, latency 3.
node::NodeParams small_node() {
    node::NodeParams p = test::small_node();
    p.vector = {2, 1, 3};
    return p;
}

/// Cycles the stepped vector unit takes for one job of `ops`, from t = 0.
std::uint64_t stepped_cycles(const vector::VectorParams& params, std::uint64_t ops, std::uint64_t* issued) {
    test::FreshSimContext kernel;
    vector::VectorUnit unit("unit", params);
    std::uint64_t cycles = 0;
    sc_core::sc_spawn([&] {
        unit.start(ops);
        wait(unit.done());
        cycles = static_cast<std::uint64_t>(sc_core::sc_time_stamp() / sc_core::sc_time(1, sc_core::SC_NS) + 0.5);
    });
    sc_core::sc_start();
    *issued = unit.stats().ops;
    return cycles;
}

node::PhaseCounters stepped_phase(const node::NodeParams& params, const node::VectorJob& job) {
    test::FreshSimContext kernel;
    node::Node fast_node("node", params);
    node::PhaseCounters counters;
    sc_core::sc_spawn([&] { counters = fast_node.run_vector_phase(job); });
    sc_core::sc_start();
    return counters;
}

}  // namespace

TEST_CASE("vector unit cycles: latency + ceil(ops / (lanes x ops per lane))", "[vector]") {
    const vector::VectorParams p{8, 2, 5};
    CHECK(vector::job_cycles(p, 0) == 0);
    CHECK(vector::job_cycles(p, 1) == 6);
    CHECK(vector::job_cycles(p, 16) == 6);
    CHECK(vector::job_cycles(p, 17) == 7);
    CHECK(vector::job_cycles(p, 1600) == 105);
    CHECK_THROWS_AS(vector::job_cycles(vector::VectorParams{0, 1, 0}, 1), std::invalid_argument);
    CHECK(vector::VectorParams::derived_from(128).lanes == 128);
}

TEST_CASE("the stepped vector unit takes the formula's cycles and issues every operation", "[vector][fidelity]") {
    for (const vector::VectorParams& p :
         {vector::VectorParams{1, 1, 0}, vector::VectorParams{4, 1, 3}, vector::VectorParams{3, 2, 1}}) {
        for (const std::uint64_t ops : {1ull, 5ull, 6ull, 7ull, 100ull}) {
            std::uint64_t issued = 0;
            INFO("lanes " << p.lanes << " x " << p.ops_per_lane_per_cycle << ", latency " << p.pipeline_latency_cycles
                          << ", ops " << ops);
            CHECK(stepped_cycles(p, ops, &issued) == vector::job_cycles(p, ops));
            CHECK(issued == ops);
        }
    }
}

TEST_CASE("a hand-computed vector-unit phase: load, compute, convert twice, write back", "[vector][node][pipeline]") {
    // relu forward over 8 values at 2 bits: 2 groups of 4.
    node::VectorJob job;
    job.work = {8, 8, 0, 8};
    job.activation_bits = job.output_bits = 2;
    const node::NodeParams p = small_node();
    // Load: 2 x 8 exponent bits + 2 x 4 x 3 mantissa bits = 40 bits -> 10 + 40 / 8 = 15 cycles.
    // Vector unit: 3 + 8 / 2 = 7. Converter: (5 + 2 x 4 / 4) x 2 groupings = 14.
    // Write-back: 2 x 40 bits -> 10 + 10 = 20 cycles. One chunk, nothing overlaps.
    const node::PhaseCounters c = node::run_vector_memo(job, p);
    CHECK(c.tiles == 1);
    CHECK(c.cycles == 15 + 7 + 14 + 20);
    CHECK(c.load_wait_cycles == 15);
    CHECK(c.vector_cycles == 7);
    CHECK(c.drain_cycles == 34);
    CHECK(c.vector.ops == 8);
    CHECK(c.macs == 0);
    CHECK(c.traffic.dram_read_bits == 40);
    CHECK(c.traffic.dram_write_bits == 80);
    CHECK(c.conversion.cycles == 14);
    CHECK(stepped_phase(p, job) == c);
}

TEST_CASE("vector-unit chunks: shares add up, the stepped node equals the memo", "[vector][node][fidelity]") {
    node::NodeParams p = small_node();
    p.sram.mantissa_bank.capacity_bits = 2 * 8 * 12;  // eight 2-bit groups per operand buffer: chunks of a few groups
    std::mt19937_64 rng(7);
    std::uniform_int_distribution<std::uint64_t> size(1, 200);
    std::uint64_t most_chunks = 0;
    int converter_waits = 0;
    for (int trial = 0; trial < 12; ++trial) {
        p.converter.lanes = trial % 3 == 1 ? 1 : 4;  // a slow converter in a third of the trials
        node::VectorJob job;
        const std::uint64_t writes = size(rng);
        job.work = {size(rng) * 3, writes * (1 + trial % 3), trial % 2 ? writes : 0, writes};
        job.activation_bits = job.gradient_bits = job.output_bits = 2;
        job.output_rounding = trial % 2 ? bfp::Rounding::stochastic : bfp::Rounding::nearest;
        const node::VectorPlan plan = node::plan_vector_chunks(job, p);
        INFO("trial " << trial << ": " << job.work.ops << " ops, " << writes << " values, " << plan.chunks
                      << " chunks");
        CHECK(plan.chunk_values % 4 == 0);
        std::uint64_t ops = 0;
        for (std::uint64_t i = 0; i < plan.chunks; ++i) ops += node::vector_chunk_work(job, p, plan, i).ops;
        CHECK(ops == job.work.ops);
        CHECK(plan.chunks == (writes + plan.chunk_values - 1) / plan.chunk_values);
        const node::PhaseCounters memo = node::run_vector_memo(job, p);
        CHECK(memo.vector.ops == job.work.ops);
        CHECK(memo.cycles ==
              memo.load_wait_cycles + memo.converter_wait_cycles + memo.vector_cycles + memo.drain_cycles);
        converter_waits += memo.converter_wait_cycles > 0;
        CHECK(stepped_phase(p, job) == memo);
        most_chunks = std::max(most_chunks, plan.chunks);
    }
    CHECK(most_chunks >= 10);     // the pipeline overlapped loads, compute and write-backs
    CHECK(converter_waits >= 2);  // stepped = memo covers the converter's share of the waits
}

TEST_CASE("a vector-unit chunk of one group that does not fit is a tiling error naming the bank", "[vector][node]") {
    node::NodeParams p = small_node();
    p.sram.exponent_bank.capacity_bits = 8;  // one exponent: not two buffers of one group
    node::VectorJob job;
    job.work = {4, 4, 0, 4};
    try {
        (void)node::plan_vector_chunks(job, p);
        FAIL("expected a TilingError");
    } catch (const node::TilingError& e) {
        CHECK(e.bank() == node::SramBank::exponent);
    }
    job.work = {0, 0, 0, 0};  // an add's backward pass: no work, no chunks
    CHECK(node::plan_vector_chunks(job, p).chunks == 0);
    CHECK(node::run_vector_memo(job, p) == node::PhaseCounters{});
}
