// SPDX-License-Identifier: MIT
// The node: tiling, hand-computed pipeline timings, and the stepped SystemC node against the
// memoised recurrence (identical counters) and bfp::gemm (identical bits).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <tuple>
#include <functional>
#include <random>
#include <set>
#include <string_view>
#include <vector>

#include "config/trace_reader.h"
#include "node/node.h"
#include "support/small_node.h"
#include "node/node_model.h"
#include "node/training_step.h"
#include "support/systemc_fixture.h"

using namespace fastsim;

namespace {

using test::small_node;

node::PhaseJob job_of(fmac::GemmShape shape, int x_bits, int y_bits, node::OutputForm output, int out_bits = 2) {
    node::PhaseJob j;
    j.shape = shape;
    j.x_mantissa_bits = x_bits;
    j.y_mantissa_bits = y_bits;
    j.output = output;
    j.output_mantissa_bits = out_bits;
    return j;
}

/// Runs one phase on the stepped SystemC node, from a thread at t = 0.
struct SteppedPhase {
    node::PhaseCounters counters;
    std::vector<float> out;
    node::TileStageLog stages;
};

SteppedPhase run_stepped(const node::NodeParams& params, const node::PhaseJob& job, const bfp::BfpMatrix& x,
                         const bfp::BfpMatrix& y_t) {
    test::FreshSimContext kernel;
    node::Node fast_node("node", params);
    SteppedPhase result;
    sc_core::sc_spawn([&] { result.counters = fast_node.run_phase(job, x, y_t, result.out, &result.stages); });
    sc_core::sc_start();
    return result;
}

/// The log ordered by engine, then tile: engines interleave differently in the two fidelities.
node::TileStageLog by_stage_and_tile(node::TileStageLog log) {
    std::sort(log.begin(), log.end(), [](const node::TileStageSpan& a, const node::TileStageSpan& b) {
        return std::tie(a.stage, a.tile) < std::tie(b.stage, b.tile);
    });
    return log;
}

bool bit_equal(const std::vector<float>& a, const std::vector<float>& b) {
    return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("DRAM transfer cycles: latency + ceil(bits / bits per cycle), exact for odd clocks", "[node][memory]") {
    const memory::DramParams dram{8'000'000'000ull, 10};  // 8 Gbit/s
    CHECK(memory::dram_transfer_cycles(dram, 1'000'000'000, 0) == 0);
    CHECK(memory::dram_transfer_cycles(dram, 1'000'000'000, 1) == 11);
    CHECK(memory::dram_transfer_cycles(dram, 1'000'000'000, 160) == 30);
    CHECK(memory::dram_transfer_cycles(dram, 1'000'000'000, 161) == 31);
    // 700 MHz: 8e9 / 7e8 = 11.43 bits per cycle; 160 bits -> ceil(14.0) = 14 + 10.
    CHECK(memory::dram_transfer_cycles(dram, 700'000'000, 160) == 24);
    CHECK(memory::bfp_bits(3, 16, 4, 8).exponent == 24);
    CHECK(memory::bfp_bits(3, 16, 4, 8).mantissa == 3 * 16 * 2 * 3);
}

TEST_CASE("tiling sizes rows first, then k in whole array folds, then column folds", "[node][tiling]") {
    node::NodeParams p = small_node();
    const node::PhaseJob job = job_of({4, 8, 2}, 2, 2, node::OutputForm::fp32);
    node::TilePlan plan = node::plan_tiles(job, p);
    CHECK((plan.tile_m == 4 && plan.tile_k == 8 && plan.tile_n == 2 && plan.count() == 1));
    p.max_tile_rows = 2;
    plan = node::plan_tiles(job, p);
    CHECK((plan.tile_m == 2 && plan.m_tiles == 2 && plan.count() == 2));

    // Footprint of a 1 x 8 x 1 tile: X and Y 2 groups each (8 + 12 bits a group), one fp32
    // accumulator, all doubled: exponents 2 * 32 = 64, mantissas 2 * (24 + 24 + 32) = 160.
    const node::TileFootprint f = node::tile_footprint(job, p, 1, 8, 1);
    CHECK((f.exponent_bits == 64 && f.mantissa_bits == 160));
    p.sram.mantissa_bank.capacity_bits = 159;  // whole k no longer fits; one group does
    plan = node::plan_tiles(job, p);
    CHECK((plan.tile_k == 4 && plan.k_tiles == 2));
    p.sram.mantissa_bank.capacity_bits = 2 * (12 + 12 + 32) - 1;  // not even 1 x 4 x 1
    CHECK_THROWS_AS(node::plan_tiles(job, p), node::TilingError);
    try {
        node::plan_tiles(job, p);
    } catch (const node::TilingError& e) {
        CHECK(std::string(e.what()).find("mantissa bank") != std::string::npos);
        CHECK(e.bank() == node::SramBank::mantissa);
    }
    p.sram.mantissa_bank.capacity_bits = 1u << 20;
    p.sram.exponent_bank.capacity_bits = 1;  // now the exponent bank is the one too small
    try {
        node::plan_tiles(job, p);
        FAIL("a 1-bit exponent bank tiles");
    } catch (const node::TilingError& e) {
        CHECK(e.bank() == node::SramBank::exponent);
    }
}

TEST_CASE("tiling streams the dataflow's streamed dimension first", "[node][tiling]") {
    // 2 x 2 array, g = 4, 2-bit mantissas (3 bits an element with the sign): a tile (m, k, n)
    // needs 2 ((m + n) 3 k + 32 m n) mantissa bits; the bank holds 3072.
    //   ws: m = 8 (all); k in R g = 8 beside n = 2: 60 k + 1024 -> 32; n: 1536 + 704 n -> 2.
    //   os: k = 64 (all); m in R = 2 beside n = 2: 512 m + 768 -> 4; n: 1536 + 640 n -> 2.
    //   is: n = 8 (all); k beside m = 2: 60 k + 1024 -> 32; m in C = 2: 1536 + 704 m -> 2.
    node::NodeParams p = small_node();
    p.sram.mantissa_bank.capacity_bits = 3072;
    node::PhaseJob job = job_of({8, 64, 8}, 2, 2, node::OutputForm::fp32);
    const auto plan_in = [&](fmac::Dataflow d) {
        p.dataflow[static_cast<std::size_t>(job.phase)] = d;
        const node::TilePlan t = node::plan_tiles(job, p);
        return std::vector<std::uint64_t>{t.tile_m, t.tile_k, t.tile_n};
    };
    CHECK(plan_in(fmac::Dataflow::weight_stationary) == std::vector<std::uint64_t>{8, 32, 2});
    CHECK(plan_in(fmac::Dataflow::output_stationary) == std::vector<std::uint64_t>{4, 64, 2});
    CHECK(plan_in(fmac::Dataflow::input_stationary) == std::vector<std::uint64_t>{2, 32, 8});
    // The phase picks the dataflow: only weight_gradient runs os here.
    p.dataflow = {fmac::Dataflow::weight_stationary, fmac::Dataflow::weight_stationary,
                  fmac::Dataflow::output_stationary};
    job.phase = fmac::TrainingPhase::forward;
    CHECK(node::plan_tiles(job, p).tile_k == 32);
    job.phase = fmac::TrainingPhase::weight_gradient;
    CHECK(node::plan_tiles(job, p).tile_k == 64);
}

TEST_CASE("a hand-computed two-tile pipeline with fp32 write-back", "[node][pipeline]") {
    // m = 4 in two row tiles of 2; k = 8 (2 groups), n = 2; P = 1.
    // Tile 0 loads X and Y (80 + 80 bits): 10 + 20 = 30 cycles; tile 1 only X: 10 + 10 = 20.
    // Array per tile: 2 (load) + 1 * (2 + 2 + 2 - 2) = 6. Write-back 128 bits: 10 + 16 = 26.
    // L0 0-30, C0 30-36, L1 30-50, W0 50-76, C1 50-56, W1 76-102.
    node::NodeParams p = small_node();
    p.max_tile_rows = 2;
    node::ArrayTimingMemo memo;
    const node::PhaseCounters c = node::run_phase_memo(job_of({4, 8, 2}, 2, 2, node::OutputForm::fp32), p, memo);
    CHECK(c.cycles == 102);
    CHECK(c.array_cycles == 12);
    CHECK(c.load_wait_cycles == 30 + 14);
    CHECK(c.drain_cycles == 46);
    CHECK(c.sram_stall_cycles == 0);
    CHECK(c.traffic.dram_read_bits == 240);
    CHECK(c.traffic.dram_write_bits == 256);
    CHECK(c.conversion.cycles == 0);
    CHECK(c.converter_wait_cycles == 0);
    CHECK(c.cycles == c.load_wait_cycles + c.array_cycles + c.sram_stall_cycles + c.drain_cycles);
}

TEST_CASE("the tile stage log of the two-tile pipelines gives every stage's cycles", "[node][pipeline][timeline]") {
    // The two hand-computed cases above, stage by stage, in the order the recurrence runs
    // them (load i, compute i, convert i, write-back i-1). MACs per tile 2 x 8 x 2 = 32.
    using S = node::TileStage;
    node::NodeParams p = small_node();
    p.max_tile_rows = 2;
    node::ArrayTimingMemo memo;
    node::TileStageLog fp32;
    const node::PhaseCounters c = node::run_phase_memo(job_of({4, 8, 2}, 2, 2, node::OutputForm::fp32), p, memo, &fp32);
    // fp32 outputs take no conversion, so no convert span (zero cycles are not logged).
    const node::TileStageLog expected_fp32 = {{S::load, 0, 0, 30, 160},        {S::compute, 0, 30, 36, 32},
                                              {S::load, 1, 30, 50, 80},        {S::compute, 1, 50, 56, 32},
                                              {S::write_back, 0, 50, 76, 128}, {S::write_back, 1, 76, 102, 128}};
    CHECK(fp32 == expected_fp32);
    CHECK(fp32.back().end_cycle == c.cycles);

    node::TileStageLog bfp;
    node::run_phase_memo(job_of({4, 8, 2}, 2, 2, node::OutputForm::bfp_two_groupings), p, memo, &bfp);
    // One group per grouping: 2 groups per tile; write-back 40 bits.
    const node::TileStageLog expected_bfp = {{S::load, 0, 0, 30, 160},       {S::compute, 0, 30, 36, 32},
                                             {S::convert, 0, 36, 48, 2},     {S::load, 1, 30, 50, 80},
                                             {S::compute, 1, 50, 56, 32},    {S::convert, 1, 56, 68, 2},
                                             {S::write_back, 0, 50, 65, 40}, {S::write_back, 1, 68, 83, 40}};
    CHECK(bfp == expected_bfp);
}

TEST_CASE("a hand-computed pipeline through the converter", "[node][pipeline][converter]") {
    // As above, but outputs become BFP m = 2 in two groupings: per tile 4 values = 1 group,
    // converter 5 + 1 = 6 cycles per grouping, 12 per tile; write 2 x (8 + 12) = 40 bits = 15 cycles.
    // L0 0-30, C0 30-36, V0 36-48, L1 30-50, W0 50-65, C1 50-56, V1 56-68, W1 68-83.
    node::NodeParams p = small_node();
    p.max_tile_rows = 2;
    node::ArrayTimingMemo memo;
    const node::PhaseCounters c =
        node::run_phase_memo(job_of({4, 8, 2}, 2, 2, node::OutputForm::bfp_two_groupings), p, memo);
    CHECK(c.cycles == 83);
    CHECK(c.conversion.cycles == 24);
    CHECK(c.conversion.groups == 4);
    CHECK(c.conversion.comparator_ops == 4 * 3);
    CHECK(c.drain_cycles == 83 - 56);
    CHECK(c.traffic.dram_write_bits == 80);
}

TEST_CASE("a load queued behind a write-back that waits for the converter is converter wait",
          "[node][pipeline][converter]") {
    // Three row tiles of the case above (m = 6). Tile 0 loads X and Y in 30 cycles, tiles 1 and
    // 2 only X in 20; the array takes 6 a tile; a write-back of 40 bits 15. With 1 lane a
    // grouping converts in 5 + 4 = 9 cycles, 18 a tile:
    //   L0 0-30, C0 30-36, V0 36-54; L1 30-50, C1 50-56 (waits 14), V1 56-74;
    //   W0 waits for V0 from 50 to 54, 54-69; L2 69-89, C2 89-95 (waits 33), V2 95-113;
    //   W1 89-104; W2 113-128.
    // Without W0's 4-cycle wait L2 would have started at 65: 4 of C2's 33 are the converter's.
    // With the default 4 lanes (12 cycles a tile) W0 starts at 50 and no wait is the converter's.
    node::NodeParams p = small_node();
    p.max_tile_rows = 2;
    p.converter.lanes = 1;
    node::ArrayTimingMemo memo;
    const node::PhaseJob job = job_of({6, 8, 2}, 2, 2, node::OutputForm::bfp_two_groupings);
    const node::PhaseCounters slow = node::run_phase_memo(job, p, memo);
    CHECK(slow.cycles == 128);
    CHECK(slow.array_cycles == 18);
    CHECK(slow.converter_wait_cycles == 4);
    CHECK(slow.load_wait_cycles == 30 + 14 + 29);
    CHECK(slow.drain_cycles == 128 - 95);
    CHECK(slow.conversion.cycles == 3 * 18);
    p.converter.lanes = 4;
    const node::PhaseCounters fed = node::run_phase_memo(job, p, memo);
    CHECK(fed.converter_wait_cycles == 0);
    CHECK(fed.load_wait_cycles == 30 + 14 + 29);  // L2 65-85 after W0 50-65, C2 85-91
    CHECK(fed.cycles == fed.load_wait_cycles + fed.array_cycles + fed.drain_cycles);
}

TEST_CASE("a node's default converter keeps up with its array at 2-bit mantissas", "[node][converter]") {
    // Two conversions (one per grouping) of up to `cols` values a cycle: 2 x cols lanes, in whole groups.
    CHECK(converter::lanes_to_feed(16, 32) == 64);
    CHECK(converter::lanes_to_feed(16, 128) == 256);
    CHECK(converter::lanes_to_feed(16, 20) == 48);  // 40 rounded up to three groups
    CHECK(converter::lanes_to_feed(1, 7) == 14);
    CHECK(converter::ConverterParams::feeding(16, 24).lanes == 48);
    CHECK(converter::ConverterParams::feeding(16, 24).pipeline_latency_cycles == 7);
}

TEST_CASE("the counter field lists: every counter once, named, summed and compared", "[node][counters]") {
    const std::vector<CounterInfo>& infos = node::counter_infos();
    CHECK(infos.size() == sizeof(node::PhaseCounters) / sizeof(std::uint64_t));
    std::set<std::string_view> names;
    for (const CounterInfo& info : infos) {
        CHECK(!info.name.empty());
        CHECK(!info.title.empty());
        names.insert(info.name);
    }
    CHECK(names.size() == infos.size());

    node::NodeParams p = small_node();
    p.max_tile_rows = 2;
    node::ArrayTimingMemo memo;
    const node::PhaseCounters c =
        node::run_phase_memo(job_of({4, 8, 2}, 2, 2, node::OutputForm::bfp_two_groupings), p, memo);
    std::uint64_t parts = 0;
    for (const node::CyclePart& part : node::kCycleParts) parts += c.*part.member;
    CHECK(parts == c.cycles);
    // The phase's bottleneck is its largest part: the DRAM waits (30 + 14 of 83 cycles) over the
    // drain (27) and the array (12).
    REQUIRE(c.load_wait_cycles == 44);
    CHECK(node::bottleneck(c).bottleneck == "DRAM");
    node::PhaseCounters waiting = c;
    waiting.converter_wait_cycles = 45;
    CHECK(node::bottleneck(waiting).bottleneck == "converter");
    const std::vector<node::CounterValue> values = node::counter_values(c);
    REQUIRE(values.size() == infos.size());

    node::PhaseCounters three;
    for (int i = 0; i < 3; ++i) three += c;
    CHECK(three == c.repeated(3));
    CHECK_FALSE(three == c);
    CHECK(three.array - c.array == c.repeated(2).array);
    const std::vector<node::CounterValue> tripled = node::counter_values(three);
    for (std::size_t i = 0; i < values.size(); ++i) CHECK(tripled[i].value == 3 * values[i].value);
}

TEST_CASE("an SRAM port slower than the array stalls it", "[node][pipeline][memory]") {
    // Tile 0 of the case above with a 16-bit mantissa port: reads Y 48 + X 48 + final
    // accumulators 128 = 224 bits = 14 cycles, writes 96 (fill) + 128 (psums) = 14 cycles,
    // against 6 array cycles: 8 stall cycles.
    node::NodeParams p = small_node();
    p.max_tile_rows = 2;
    p.sram.mantissa_bank.bits_per_cycle = 16;
    const node::PhaseJob job = job_of({4, 8, 2}, 2, 2, node::OutputForm::fp32);
    node::ArrayTimingMemo memo;
    const node::TilePlan plan = node::plan_tiles(job, p);
    const node::TileWork w = node::tile_work(job, p, plan, {0, 0, 0}, nullptr, memo);
    CHECK(w.traffic.sram_mantissa_read_bits == 224);
    CHECK(w.traffic.sram_mantissa_write_bits == 224);
    CHECK(w.sram_stall_cycles == 8);
    // Tile 1 fills only X (write 48 + 128 = 176 bits, 11 cycles) but still reads 224: 8 more.
    CHECK(node::run_phase_memo(job, p, memo).sram_stall_cycles == 8 + 8);
}

TEST_CASE("an SRAM read's access latency delays its stream, writes none", "[node][pipeline][memory]") {
    // The tile above: reads 224 bits = 14 cycles of the 16-bit port, writes 14. With a 3-cycle
    // read latency the read port needs 17 cycles against 6 array cycles: 11 stall cycles; a
    // latency hidden under a wide port (4096 bits) stalls nothing.
    node::NodeParams p = small_node();
    p.max_tile_rows = 2;
    p.sram.mantissa_bank.bits_per_cycle = 16;
    p.sram.mantissa_bank.read_latency_cycles = 3;
    const node::PhaseJob job = job_of({4, 8, 2}, 2, 2, node::OutputForm::fp32);
    node::ArrayTimingMemo memo;
    const node::TilePlan plan = node::plan_tiles(job, p);
    CHECK(node::tile_work(job, p, plan, {0, 0, 0}, nullptr, memo).sram_stall_cycles == 11);
    p.sram.mantissa_bank.bits_per_cycle = 4096;
    CHECK(node::tile_work(job, p, plan, {0, 0, 0}, nullptr, memo).sram_stall_cycles == 0);
    p.sram.mantissa_bank.read_latency_cycles = 6;  // 6 + 1 port cycles against 6 array cycles
    CHECK(node::tile_work(job, p, plan, {0, 0, 0}, nullptr, memo).sram_stall_cycles == 1);
    CHECK(memory::bank_read_cycles(p.sram.mantissa_bank, 0) == 0);
}

TEST_CASE("the stepped SystemC node equals the memoised pipeline and bfp::gemm", "[node][fidelity]") {
    std::mt19937_64 rng(7);
    std::uniform_int_distribution<int> small(1, 4), width(1, 4), size_m(1, 37), size_k(1, 70), size_n(1, 19);
    const int group_sizes[] = {1, 4, 8, 16};
    int split_m = 0, split_k = 0, split_n = 0, converter_waits = 0;
    for (int trial = 0; trial < 36; ++trial) {
        node::NodeParams p = small_node();
        const int g = group_sizes[trial % 4];
        p.dataflow[static_cast<std::size_t>(fmac::TrainingPhase::forward)] = static_cast<fmac::Dataflow>(trial % 3);
        p.array = {small(rng), small(rng), g};
        p.converter = converter::ConverterParams::derived_from(g);
        if (trial % 4 == 2) p.converter.lanes = 1;  // a slow converter: loads queue behind its write-backs
        const fmac::GemmShape shape{static_cast<std::uint64_t>(size_m(rng)), static_cast<std::uint64_t>(size_k(rng)),
                                    static_cast<std::uint64_t>(size_n(rng))};
        const int x_bits = 2 * width(rng), y_bits = 2 * width(rng);
        node::PhaseJob job =
            job_of(shape, x_bits, y_bits, trial % 2 ? node::OutputForm::fp32 : node::OutputForm::bfp_two_groupings, 4);
        job.output_rounding = trial % 4 == 0 ? bfp::Rounding::stochastic : bfp::Rounding::nearest;
        // Small SRAM and row cap so tiles split m, k and n in many trials.
        p.max_tile_rows = static_cast<std::uint64_t>(small(rng) * 5);
        // Every other trial: less than one whole-k row, so k splits and partial sums chain.
        const node::TileFootprint whole = trial % 2 ? node::tile_footprint(job, p, shape.m, shape.k, shape.n)
                                                    : node::tile_footprint(job, p, 1, shape.k, 1);
        std::uniform_real_distribution<double> share(trial % 2 ? 0.05 : 0.3, trial % 2 ? 1.2 : 0.95);
        p.sram.mantissa_bank.capacity_bits =
            static_cast<std::uint64_t>(static_cast<double>(whole.mantissa_bits) * share(rng));
        p.sram.mantissa_bank.capacity_bits =
            std::max(p.sram.mantissa_bank.capacity_bits,
                     node::tile_footprint(job, p, 1, static_cast<std::uint64_t>(g), 1).mantissa_bits);
        p.sram.mantissa_bank.bits_per_cycle = static_cast<std::uint64_t>(16 * small(rng));
        p.dram = {static_cast<std::uint64_t>(small(rng)) * 4'000'000'000ull,
                  static_cast<std::uint64_t>(small(rng) * 3)};

        bfp::Format fx{g, x_bits, 8, 0, bfp::Overflow::nan}, fy{g, y_bits, 8, 0, bfp::Overflow::nan};
        bfp::Quantizer qx(fx, bfp::Rounding::nearest), qy(fy, bfp::Rounding::nearest);
        std::normal_distribution<float> normal(0.0f, 1.0f);
        std::vector<float> a(shape.m * shape.k), w(shape.k * shape.n);
        for (auto& v : a) v = normal(rng);
        for (auto& v : w) v = normal(rng);
        const auto x = bfp::quantize_rows(a.data(), shape.m, shape.k, shape.k, 1, qx);
        const auto y_t = bfp::quantize_rows(w.data(), shape.n, shape.k, 1, shape.n, qy);

        node::ArrayTimingMemo memo;
        const node::PhaseCounters memo_counters = node::run_phase_memo(job, p, memo);
        const node::TilePlan plan = node::plan_tiles(job, p);
        split_m += plan.m_tiles > 1;
        split_k += plan.k_tiles > 1;
        split_n += plan.n_tiles > 1;
        const SteppedPhase stepped = run_stepped(p, job, x, y_t);
        INFO("trial " << trial << ": " << shape.m << " x " << shape.k << " x " << shape.n << ", array " << p.array.rows
                      << " x " << p.array.cols << " g " << g << ", tiles " << memo_counters.tiles << ", "
                      << name_of(node::dataflow_of(job, p)));
        CHECK(stepped.counters == memo_counters);
        node::ArrayTimingMemo log_memo;
        node::TileStageLog memo_stages;
        node::run_phase_memo(job, p, log_memo, &memo_stages);
        CHECK(by_stage_and_tile(stepped.stages) == by_stage_and_tile(memo_stages));
        std::uint64_t last_end = 0;
        for (const auto& span : memo_stages) last_end = std::max(last_end, span.end_cycle);
        CHECK(last_end == memo_counters.cycles);
        CHECK(stepped.counters.cycles == memo_counters.cycles);
        CHECK(bit_equal(stepped.out, bfp::gemm(x, y_t)));
        CHECK(memo_counters.cycles == memo_counters.load_wait_cycles + memo_counters.converter_wait_cycles +
                                          memo_counters.array_cycles + memo_counters.sram_stall_cycles +
                                          memo_counters.drain_cycles);
        converter_waits += memo_counters.converter_wait_cycles > 0;
        // fp32 outputs take no conversion: a write-back waiting for its tile's compute is not
        // the converter's doing.
        if (job.output == node::OutputForm::fp32) CHECK(memo_counters.converter_wait_cycles == 0);
    }
    CHECK(converter_waits >= 3);  // stepped = memo covers the converter's share of the waits
    // The trials exercise tiling along every dimension (k-tiles chain partial sums).
    CHECK(split_m >= 5);
    CHECK(split_k >= 5);
    CHECK(split_n >= 3);
}

TEST_CASE("the memo's repeated k-tiles, rows and n-tiles equal running every tile", "[node][fidelity]") {
    // Many tiles along m and n (first 60 trials), or along k (last 60), so k-tiles, rows and
    // n-tiles repeat; the stage log turns repeats off.
    std::mt19937_64 rng(11);
    std::uniform_int_distribution<int> small(1, 4), width(1, 4), size_m(40, 3000), size_k(1, 300), size_n(10, 200);
    std::uniform_int_distribution<int> few_m(1, 40), long_k(400, 6000), few_n(1, 40);
    std::uint64_t tiles[2] = {0, 0}, worked[2] = {0, 0};
    int converter_waits = 0;
    for (int trial = 0; trial < 120; ++trial) {
        node::NodeParams p = small_node();
        const int g = 4 << (trial % 3);
        p.array = {small(rng), small(rng), g};
        p.dataflow[static_cast<std::size_t>(fmac::TrainingPhase::forward)] = static_cast<fmac::Dataflow>(trial / 3 % 3);
        p.converter = converter::ConverterParams::derived_from(g);
        if (trial % 4 == 0) p.converter.lanes = 1;  // loads queue behind write-backs that wait for it
        const bool along_k = trial >= 60;
        const fmac::GemmShape shape{static_cast<std::uint64_t>(along_k ? few_m(rng) : size_m(rng)),
                                    static_cast<std::uint64_t>(along_k ? long_k(rng) : size_k(rng)),
                                    static_cast<std::uint64_t>(along_k ? few_n(rng) : size_n(rng))};
        node::PhaseJob job = job_of(shape, 2 * width(rng), 2 * width(rng),
                                    trial % 2 ? node::OutputForm::fp32 : node::OutputForm::bfp_two_groupings, 4);
        p.max_tile_rows = static_cast<std::uint64_t>(small(rng) * 7);
        const node::TileFootprint whole = node::tile_footprint(job, p, p.max_tile_rows, shape.k, shape.n);
        std::uniform_real_distribution<double> share(0.02, 0.6);
        p.sram.mantissa_bank.capacity_bits =
            std::max(static_cast<std::uint64_t>(static_cast<double>(whole.mantissa_bits) * share(rng)),
                     node::tile_footprint(job, p, 1, static_cast<std::uint64_t>(g), 1).mantissa_bits);
        p.sram.mantissa_bank.bits_per_cycle = static_cast<std::uint64_t>(16 * small(rng));
        p.dram = {static_cast<std::uint64_t>(small(rng)) * 2'000'000'000ull,
                  static_cast<std::uint64_t>(small(rng) * 5)};
        node::ArrayTimingMemo repeating, every_tile;
        node::TileStageLog log;
        const node::PhaseCounters fast = node::run_phase_memo(job, p, repeating);
        const node::PhaseCounters slow = node::run_phase_memo(job, p, every_tile, &log);
        INFO("trial " << trial << ": " << shape.m << " x " << shape.k << " x " << shape.n << ", tiles " << slow.tiles);
        CHECK(fast == slow);
        CHECK(every_tile.tiles_worked() == slow.tiles);
        tiles[along_k] += slow.tiles;
        worked[along_k] += repeating.tiles_worked();
        converter_waits += slow.converter_wait_cycles > 0;
        if (job.output == node::OutputForm::fp32) CHECK(slow.converter_wait_cycles == 0);
    }
    // Repeats do happen, among rows and n-tiles and along k: most tiles are not worked one by one.
    CHECK(worked[0] * 4 < tiles[0]);
    CHECK(worked[1] * 4 < tiles[1]);
    CHECK(converter_waits >= 5);  // repeats carry the converter's share of the waits too
}

TEST_CASE("a training step: phase order, shapes, precisions and the skipped first backward-data", "[node][step]") {
    workload::Workload net;
    workload::Layer fc1;
    fc1.name = "fc1";
    fc1.kind = workload::LayerKind::fc;
    fc1.in_features = 784;
    fc1.out_features = 256;
    workload::Layer fc2 = fc1;
    fc2.name = "fc2";
    fc2.in_features = 256;
    fc2.out_features = 10;
    net.layers = {fc1, fc2};
    std::vector<node::LayerPrecision> precision(2);
    precision[1][static_cast<std::size_t>(fmac::TrainingPhase::backward_data)] = {6, 2, 4};
    const auto phases = node::training_step_phases(net, 32, precision, {}, node::NodeParams{});
    REQUIRE(phases.size() == 5);  // fwd fc1, fwd fc2, bwd fc2, wgrad fc2, wgrad fc1
    CHECK((phases[0].layer == 0 && phases[0].phase == fmac::TrainingPhase::forward));
    CHECK((phases[2].layer == 1 && phases[2].phase == fmac::TrainingPhase::backward_data));
    CHECK((phases[2].gemms.at(0).job.shape.m == 32 && phases[2].gemms.at(0).job.shape.k == 10 &&
           phases[2].gemms.at(0).job.shape.n == 256));
    CHECK((phases[2].gemms.at(0).job.x_mantissa_bits == 4 && phases[2].gemms.at(0).job.y_mantissa_bits == 6));
    CHECK(phases[2].gemms.at(0).job.output_rounding == bfp::Rounding::stochastic);
    CHECK((phases[4].layer == 0 && phases[4].phase == fmac::TrainingPhase::weight_gradient));
    CHECK((phases[4].gemms.at(0).job.shape.m == 784 && phases[4].gemms.at(0).job.shape.k == 32 &&
           phases[4].gemms.at(0).job.shape.n == 256));
    CHECK(phases[4].gemms.at(0).job.output == node::OutputForm::fp32);
}

TEST_CASE("precision reaches the cycles through the pass count", "[node][precision]") {
    // A large GEMM at 4 x 4 bits (P = 4) against 8 x 8 (P = 16): same group products, four
    // times the passes; the array's streaming cycles grow with P while weight loads do not.
    node::NodeParams p;
    p.array = {16, 16, 16};
    node::ArrayTimingMemo memo;
    const node::PhaseCounters low =
        node::run_phase_memo(job_of({512, 1024, 64}, 4, 4, node::OutputForm::fp32), p, memo);
    const node::PhaseCounters high =
        node::run_phase_memo(job_of({512, 1024, 64}, 8, 8, node::OutputForm::fp32), p, memo);
    const node::PhaseCounters mixed =
        node::run_phase_memo(job_of({512, 1024, 64}, 2, 8, node::OutputForm::fp32), p, memo);
    CHECK(high.array.group_products == low.array.group_products);
    CHECK(high.array.pe_passes == 4 * low.array.pe_passes);
    CHECK(mixed.array.pe_passes == low.array.pe_passes);  // (2/2)(8/2) = (4/2)(4/2) = 4 passes
    CHECK(high.array_cycles - high.array.stationary_cycles == 4 * (low.array_cycles - low.array.stationary_cycles));
}

TEST_CASE("An embedding's backward is its table's gradient, and only an untied table is updated", "[node][step]") {
    const workload::Workload net = config::read_trace_text(
        "layers:\n"
        "  - {name: wte, type: embedding, vocab: 500, features: 32, tokens: 4, tied_to: head}\n"
        "  - {name: wpe, type: embedding, vocab: 4, features: 32, tokens: 4, inputs: [input]}\n"
        "  - {name: sum, type: add, inputs: [wte, wpe]}\n"
        "  - {name: head, type: fc, in_features: 32, out_features: 500, tokens: 4}\n",
        "lm.yaml");
    const auto phases = node::training_step_phases(net, 2, std::vector<node::LayerPrecision>(4), {}, node::NodeParams{},
                                                   node::kEveryPhase, workload::Optimizer::sgd);
    std::vector<std::string> listed;
    for (const node::StepPhase& s : phases)
        listed.push_back(net.layers[s.layer].name + (s.weight_update                                 ? " update"
                                                     : s.phase == fmac::TrainingPhase::forward       ? " fwd"
                                                     : s.phase == fmac::TrainingPhase::backward_data ? " bwd"
                                                                                                     : " wgrad"));
    // No backward-data for either table (token ids have no gradient); the tied table is the
    // head's weights, updated once.
    CHECK(listed == std::vector<std::string>{"wte fwd", "wpe fwd", "sum fwd", "head fwd", "head bwd", "head wgrad",
                                             "head update", "sum bwd", "wpe wgrad", "wpe update", "wte wgrad"});
    const node::StepPhase& wte_wgrad = phases.back();
    CHECK(wte_wgrad.on_vector_unit);
    CHECK(wte_wgrad.vector.work == workload::vector_work(net.layers[0], 2, true));
}
