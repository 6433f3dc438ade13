// SPDX-License-Identifier: MIT
// Gradient compression and parameter servers on the cluster (docs/compression.md): each
// scheme's wire volume by hand, its time against the SystemC executor, delayed updates
// planned and simulated, and the config's errors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <tuple>
#include <variant>

#include "cluster/cluster.h"
#include "compression/compression.h"
#include "config/load.h"
#include "interconnect/topology.h"
#include "planner/gradient_sync.h"
#include "run/cluster_step.h"
#include "support/systemc_fixture.h"

using namespace fastsim;
using compression::Scheme;

namespace {

const std::string kSource = FASTSIM_SOURCE_DIR;
const interconnect::LinkParams kLink{100.0, 500.0, 1.0};

std::uint64_t sent_bytes(const std::vector<interconnect::NodeProgram>& programs) {
    std::uint64_t bytes = 0;
    for (const auto& p : programs)
        for (const auto& op : p.ops)
            if (const auto* s = std::get_if<interconnect::Send>(&op)) bytes += s->bytes;
    return bytes;
}

std::vector<NodeId> ids(std::initializer_list<std::size_t> list) {
    std::vector<NodeId> out;
    for (const std::size_t i : list) out.emplace_back(i);
    return out;
}

/// A 64 x 64 fp32 gradient held by nodes 0-3.
planner::SyncJob job_of_four() { return {ids({0, 1, 2, 3}), 4096, 16384, 64, 64}; }

}  // namespace

TEST_CASE("Compression volumes: sparse entries and quantised bytes by hand", "[compression]") {
    compression::Params p;
    p.density = 0.001;
    CHECK(compression::sparse_entries(p, 1'000'000) == 1000);
    CHECK(compression::sparse_entries(p, 10) == 1);  // at least one value
    CHECK(compression::sparse_entries(p, 0) == 0);
    p.density = 1;
    CHECK(compression::sparse_entries(p, 777) == 777);
    CHECK(compression::sparse_bytes(1000) == 8000);  // fp32 value + 32-bit index
    // 1 bit a value and two fp32 scales a bucket of 512; TernGrad 2 bits and one scale.
    const compression::Compressor& onebit = compression::compressor_of(Scheme::onebit);
    const compression::Compressor& terngrad = compression::compressor_of(Scheme::terngrad);
    CHECK(onebit.pushed_bytes(p, {}, 1024) == 128 + 2 * 2 * 4);
    CHECK(onebit.pushed_bytes(p, {}, 1000) == 125 + 2 * 2 * 4);
    CHECK(terngrad.pushed_bytes(p, {}, 1024) == 256 + 2 * 4);
    CHECK(onebit.pulled_bytes(p, {}, 1, 4) == 1 + 2 * 4);
    // Work: DGC also reads and writes its velocity; PowerSGD's two GEMMs are 2 E r MACs.
    CHECK(compression::compressor_of(Scheme::dgc).node_work(p, 1000, 0).dram_bytes == 5 * 4000);
    CHECK(compression::compressor_of(Scheme::topk).node_work(p, 1000, 0).dram_bytes == 3 * 4000);
    p.error_feedback = false;
    CHECK(compression::compressor_of(Scheme::topk).node_work(p, 1000, 0).dram_bytes == 4000);
    CHECK(compression::compressor_of(Scheme::dgc).node_work(p, 1000, 0).dram_bytes == 5 * 4000);
    p.rank = 4;
    CHECK(compression::compressor_of(Scheme::powersgd).node_work(p, 4096, 128).macs == 2 * 4096 * 4 + 128 * 16);
    CHECK(compression::compressor_of(Scheme::none).node_work(p, 4096, 128).dram_bytes == 0);
}

TEST_CASE("Every compression scheme has its descriptor row, named once", "[compression]") {
    const auto& rows = compression::compressor_descriptors();
    REQUIRE(rows.size() == compression::kSchemeCount);
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const Scheme scheme = static_cast<Scheme>(i);
        CHECK(rows[i].scheme == scheme);
        CHECK(compression::to_string(scheme) == rows[i].name);
        CHECK(&compression::compressor_of(scheme) == &rows[i].compressor());
    }
    // The wire of a 1,000-value fp32 gradient over 4 ranks, by hand per scheme.
    compression::Params p;
    p.density = 0.01;
    p.rank = 2;
    const compression::Gradient g{1000, 4000, 40, 25};
    using Op = compression::WireCollective::Op;
    const auto wire = [&](Scheme s) { return compression::compressor_of(s).wire(p, g, 4); };
    REQUIRE(wire(Scheme::none).size() == 1);
    CHECK((wire(Scheme::none)[0].op == Op::all_reduce && wire(Scheme::none)[0].bytes == 4000));
    for (const Scheme s : {Scheme::topk, Scheme::dgc, Scheme::threshold}) {
        REQUIRE(wire(s).size() == 1);
        CHECK((wire(s)[0].op == Op::all_gather && wire(s)[0].bytes == 10 * 8));
    }
    CHECK(wire(Scheme::onebit)[0].bytes == 4 * (32 + 2 * 4));    // 250 values a chunk: 32 bytes, 2 scales
    CHECK(wire(Scheme::terngrad)[0].bytes == 4 * (63 + 1 * 4));  // 500 bits: 63 bytes, 1 scale
    REQUIRE(wire(Scheme::powersgd).size() == 2);
    CHECK(wire(Scheme::powersgd)[0].bytes == 40 * 2 * 4);
    CHECK(wire(Scheme::powersgd)[1].bytes == 25 * 2 * 4);
    // A rank whose factors would hold as many values as the blocks (65 x 16 = 1,040 >= 1,000)
    // sends the gradient whole, in one all-reduce, with no factor work (as PyTorch's hook skips
    // a matrix its rank does not compress; training averages such a block exactly).
    p.rank = 16;
    REQUIRE(wire(Scheme::powersgd).size() == 1);
    CHECK((wire(Scheme::powersgd)[0].op == Op::all_reduce && wire(Scheme::powersgd)[0].bytes == 4000));
    CHECK(compression::compressor_of(Scheme::powersgd).node_work(p, 1000, 65).macs == 0);
    p.rank = 15;  // 975 values: still factors
    CHECK(wire(Scheme::powersgd).size() == 2);
    CHECK(compression::compressor_of(Scheme::powersgd).node_work(p, 1000, 65).macs > 0);
}

TEST_CASE("Each scheme's messages carry its documented bytes", "[compression]") {
    const interconnect::Topology ring = interconnect::Topology::ring(4, kLink);
    interconnect::AllReduceChooser chooser(ring, interconnect::AllReduceAlgorithm::ring);
    struct Case {
        const char* name;
        Scheme scheme;
        bool server;
        std::vector<NodeId> servers;
        std::uint64_t bytes;
    };
    // p = 4 ranks, E = 4096 values (16384 bytes), a 64 x 64 matrix.
    const std::vector<Case> cases{
        // ring all-reduce: 2 (p - 1) steps x p ranks x E·4 / p
        {"none", Scheme::none, false, {}, 2 * 3 * 16384},
        // all-gather of k = ceil(0.01 x 4096) = 41 (value, index) pairs: (p - 1) x p x 41 x 8
        {"topk", Scheme::topk, false, {}, 3 * 4 * 41 * 8},
        {"dgc", Scheme::dgc, false, {}, 3 * 4 * 41 * 8},
        // reduce-scatter and all-gather of chunks of 1024 values at 1 bit + 2 scales per 512
        {"onebit", Scheme::onebit, false, {}, 2 * 3 * 4 * (128 + 16)},
        {"terngrad", Scheme::terngrad, false, {}, 2 * 3 * 4 * (256 + 8)},
        // ring all-reduces of P (64 x 2 fp32) and Q (64 x 2 fp32)
        {"powersgd", Scheme::powersgd, false, {}, 2 * (2 * 3 * 512)},
        // a central server (node 0): 3 pushes and 3 pulls of the whole gradient
        {"ps none", Scheme::none, true, ids({0}), 6 * 16384},
        // two servers (0, 2): each of the 6 (rank, other server) pairs pushes and pulls half
        {"ps sharded", Scheme::none, true, ids({0, 2}), 12 * 8192},
        // central, top-k: pushes of 41 pairs; pulls of the union, at most 4 x 41 pairs
        {"ps topk", Scheme::topk, true, ids({0}), 3 * 41 * 8 + 3 * 164 * 8},
        // central, 1-bit: pushes and pulls of the quantised gradient (4096 values: 512 bytes + 8 buckets x 2 scales)
        {"ps onebit", Scheme::onebit, true, ids({0}), 6 * (512 + 8 * 2 * 4)},
    };
    for (const Case& c : cases) {
        planner::SyncScheme scheme;
        scheme.compression.scheme = c.scheme;
        scheme.compression.density = 0.01;
        scheme.compression.rank = 2;
        scheme.parameter_server = c.server;
        scheme.servers = c.servers;
        planner::SchemeSync sync(chooser, scheme, {});
        std::vector<interconnect::NodeProgram> programs(4);
        sync.lower(programs, job_of_four(), 0, 0);
        INFO(c.name);
        CHECK(sent_bytes(programs) == c.bytes);
    }
    // 1-bit puts about 1/32 of the fp32 ring's bytes on the wire (not p/32), scales included.
    const double ratio = double(2 * 3 * 16384) / double(2 * 3 * 4 * (128 + 16));
    CHECK(ratio > 28);
    CHECK(ratio < 32);
}

TEST_CASE("A sparse all-gather heavier than the dense all-reduce is sent dense under best", "[compression]") {
    // 16 ranks on a ring, 1 M fp32 values (4 MB). Top-k at density 0.5: every rank receives
    // 16 x 0.5 M pairs of 8 bytes (64 MB), against about 2 x 4 MB for the dense ring all-reduce.
    const interconnect::Topology ring = interconnect::Topology::ring(16, kLink);
    std::vector<NodeId> all;
    for (std::size_t n = 0; n < 16; ++n) all.emplace_back(n);
    const planner::SyncJob job{all, 1 << 20, 4 << 20, 0, 0};
    const auto lowered = [&](interconnect::AllReduceChooser& chooser, double density) {
        planner::SyncScheme scheme;
        scheme.compression.scheme = Scheme::topk;
        scheme.compression.density = density;
        planner::SchemeSync sync(chooser, scheme, {});
        std::vector<interconnect::NodeProgram> programs(16);
        sync.lower(programs, job, 0, 0);
        return std::make_pair(sent_bytes(programs), sync.seconds(job));
    };
    interconnect::AllReduceChooser best(ring, std::nullopt), forced(ring, interconnect::AllReduceAlgorithm::ring);
    const auto [dense_bytes, dense_s] = lowered(best, 0.5);
    const auto [gather_bytes, gather_s] = lowered(forced, 0.5);
    CHECK(gather_bytes == 16 * 15 * (std::uint64_t{1} << 19) * 8);  // the ring all-gather, as forced
    CHECK(dense_bytes == 2 * 15 * (std::uint64_t{4} << 20));        // a ring all-reduce of 4 MB: 2(p-1) chunks per rank
    CHECK(dense_s < gather_s / 4);
    // At density 0.001 (p x density = 0.016) the pairs are the lighter: `best` gathers them.
    interconnect::AllReduceChooser best_again(ring, std::nullopt);
    const auto [sparse_bytes, sparse_s] = lowered(best_again, 0.001);
    CHECK(sparse_bytes < dense_bytes / 10);
    CHECK(sparse_s < dense_s);
}

TEST_CASE("A scheme's replayed time is the SystemC executor's running its messages", "[compression]") {
    const interconnect::Topology ring = interconnect::Topology::ring(4, kLink);
    interconnect::AllReduceChooser chooser(ring, std::nullopt);
    planner::SyncJob job = job_of_four();
    job.elements = 1 << 24;  // 64 MB of fp32 gradients: bandwidth, not latency, sets the time
    job.bytes = 4u << 24;
    job.factor_rows = job.factor_cols = 4096;
    for (const Scheme s : {Scheme::none, Scheme::topk, Scheme::onebit, Scheme::powersgd}) {
        for (const bool server : {false, true}) {
            planner::SyncScheme scheme;
            scheme.compression.scheme = s;
            scheme.compression.density = 0.05;
            scheme.compression.rank = 32;  // factors of 4096 x 32: 512 KB each
            scheme.parameter_server = server;
            scheme.servers = ids({1});
            planner::SchemeSync sync(chooser, scheme, {});
            std::vector<interconnect::NodeProgram> programs(4);
            sync.lower(programs, job, 0, 0);
            test::FreshSimContext kernel;
            const cluster::ClusterResult r = cluster::run_cluster(ring, programs);
            INFO(compression::to_string(s) << (server ? " via a parameter server" : ""));
            // Both reserve links in time order; ranks sending at the same picosecond may reserve
            // them in another order (the replay: lower node first), as all_reduce_cost's replays
            // do (docs/interconnect.md): within 2%, as that test asks.
            CHECK(sync.seconds(job) == Approx(to_seconds(r.end_ps)).epsilon(0.02));
            // 2 us of compression work on every rank comes first.
            planner::SchemeSync working(chooser, scheme,
                                        [](NodeId, const compression::Work&) { return Picoseconds(2'000'000); });
            if (s != Scheme::none) CHECK(working.seconds(job) == Approx(sync.seconds(job) + 2e-6).margin(0.6e-6));
        }
    }
}

TEST_CASE("Delayed updates: the step is the steady-state bound, planned and simulated", "[compression][cluster]") {
    // ResNet-18 on 4 nodes over 1 GB/s links: the data-parallel all-reduces are exposed.
    const std::string base = kSource + "/configs/cluster/fast_4node.yaml";
    const std::vector<std::string> slow{"planner.name=data_parallel", "cluster.groups.0.link.bandwidth_gb_per_s=1"};
    double undelayed = 0;
    for (const std::uint64_t staleness : {0, 1, 4}) {
        auto overrides = slow;
        overrides.push_back("cluster.gradient_sync.staleness=" + std::to_string(staleness));
        const auto params = config::load(base, overrides);
        const auto r = run::run_cluster_step_in_fresh_kernel(params, params.planner.options());
        INFO("staleness " << staleness << ": planned " << r.planned.plan.step_s << " s, simulated " << r.step_s
                          << " s");
        CHECK(std::abs(r.planned.plan.step_s - r.step_s) <= 0.05 * r.step_s);
        if (staleness == 0) {
            undelayed = r.step_s;
            CHECK(r.exposed_sync_s > 0.1 * r.step_s);
            CHECK(r.staleness_overlap_s == 0);
        } else {
            CHECK(r.step_s < undelayed);
            CHECK(r.staleness_overlap_s == Approx(undelayed - r.step_s).epsilon(1e-9));
        }
    }
}

TEST_CASE("Compression shrinks the wire bytes and keeps the prediction", "[compression][cluster]") {
    const std::string base = kSource + "/configs/cluster/fast_4node.yaml";
    for (const char* scheme : {"topk", "dgc", "powersgd", "onebit", "terngrad"}) {
        for (const char* algorithm : {"best", "parameter_server"}) {
            const auto params =
                config::load(base, {"planner.name=data_parallel", "cluster.groups.0.link.bandwidth_gb_per_s=1",
                                    std::string("cluster.gradient_sync.compression.scheme=") + scheme,
                                    std::string("cluster.gradient_sync.algorithm=") + algorithm});
            const auto r = run::run_cluster_step_in_fresh_kernel(params, params.planner.options());
            INFO(scheme << " / " << algorithm << ": planned " << r.planned.plan.step_s << " s, simulated " << r.step_s
                        << " s; " << r.sync_bytes << " of " << r.sync_bytes_uncompressed << " bytes");
            CHECK(r.sync_bytes * 10 < r.sync_bytes_uncompressed);
            CHECK(r.compression_energy_pj > 0);
            CHECK(std::abs(r.planned.plan.step_s - r.step_s) <= 0.05 * r.step_s);
        }
    }
}

TEST_CASE("Every network config x scheme x staleness: predicted within 5% of simulated", "[compression][cluster]") {
    std::vector<std::string> configs;
    for (const auto& entry : std::filesystem::directory_iterator(kSource + "/configs/network"))
        if (entry.path().extension() == ".yaml") configs.push_back(entry.path().string());
    std::sort(configs.begin(), configs.end());
    REQUIRE(configs.size() >= 4);
    for (const std::string& path : configs)
        for (const char* scheme : {"none", "dgc", "powersgd", "onebit"})
            for (const char* staleness : {"0", "2"}) {
                const auto params =
                    config::load(path, {std::string("cluster.gradient_sync.compression.scheme=") + scheme,
                                        std::string("cluster.gradient_sync.staleness=") + staleness});
                const auto r = run::run_cluster_step_in_fresh_kernel(params, params.planner.options());
                INFO(path << ", " << scheme << ", staleness " << staleness << ": planned " << r.planned.plan.step_s
                          << " s, simulated " << r.step_s << " s");
                CHECK(std::abs(r.planned.plan.step_s - r.step_s) <= 0.05 * r.step_s);
            }
}

TEST_CASE("Gradient buckets: over a wide area 25 MiB buckets beat a message per layer, planned as simulated",
          "[compression][cluster]") {
    for (const char* scheme : {"none", "dgc"}) {
        double per_layer_s = 0;
        for (const char* bucket_mib : {"0", "25"}) {
            const auto params = config::load(kSource + "/configs/network/wide_area.yaml",
                                             {std::string("cluster.gradient_sync.compression.scheme=") + scheme,
                                              std::string("cluster.gradient_sync.bucket_mib=") + bucket_mib});
            const auto r = run::run_cluster_step_in_fresh_kernel(params, params.planner.options());
            INFO(scheme << ", bucket_mib " << bucket_mib << ": planned " << r.planned.plan.step_s << " s, simulated "
                        << r.step_s << " s");
            CHECK(std::abs(r.planned.plan.step_s - r.step_s) <= 1e-9 * r.step_s);
            if (std::string(bucket_mib) == "0")
                per_layer_s = r.step_s;
            else
                CHECK(r.step_s * 2 < per_layer_s);  // each layer's exchange was latency-bound
        }
    }
}

TEST_CASE("Gradient sync keys: a parameter server's servers are checked against the cluster", "[compression][config]") {
    const std::string base = kSource + "/configs/cluster/fast_4node.yaml";
    CHECK_THROWS_WITH(
        config::load(base, {"cluster.gradient_sync.servers=2"}),
        Catch::Contains("cluster.gradient_sync.servers") && Catch::Contains("applies to algorithm parameter_server"));
    CHECK_THROWS_WITH(
        config::load(base, {"cluster.gradient_sync.algorithm=parameter_server", "cluster.gradient_sync.servers=5"}),
        Catch::Contains("at most one server per node (4 nodes)"));
    CHECK_THROWS_WITH(config::load(base, {"cluster.gradient_sync.algorithm=parameter_server",
                                          "cluster.gradient_sync.server_nodes=[1, 7]"}),
                      Catch::Contains("node 7 is not in the cluster"));
    CHECK_THROWS_WITH(config::load(base, {"cluster.gradient_sync.algorithm=parameter_server",
                                          "cluster.gradient_sync.server_nodes=[2, 2]"}),
                      Catch::Contains("node 2 is listed twice"));
    CHECK_THROWS_WITH(
        config::load(base, {"cluster.gradient_sync.algorithm=parameter_server", "cluster.gradient_sync.servers=3",
                            "cluster.gradient_sync.server_nodes=[0, 1]"}),
        Catch::Contains("expected 3 node ids (servers), got 2"));
    CHECK_THROWS_WITH(config::load(base, {"cluster.gradient_sync.compression.scheme=zip"}),
                      Catch::Contains("cluster.gradient_sync.compression.scheme") && Catch::Contains("powersgd"));
    CHECK_THROWS_WITH(config::load(base, {"cluster.gradient_sync.compression.scheme=topk",
                                          "cluster.gradient_sync.compression.density=0"}),
                      Catch::Contains("cluster.gradient_sync.compression.density"));
    // A scheme's parameter given for another scheme means nothing: an error, not ignored.
    const std::string key = "cluster.gradient_sync.compression.";
    for (const auto& [scheme, parameter, applies] : std::vector<std::tuple<std::string, std::string, std::string>>{
             {"none", "density=0.1", "topk, dgc and threshold"},
             {"topk", "rank=4", "powersgd"},
             {"powersgd", "threshold=1.5", "threshold"},
             {"terngrad", "error_feedback=true", "topk, threshold, onebit and powersgd"},
             {"dgc", "error_feedback=false", "topk, threshold, onebit and powersgd"}})
        CHECK_THROWS_WITH(config::load(base, {key + "scheme=" + scheme, key + parameter}),
                          Catch::Contains(key + parameter.substr(0, parameter.find('='))) &&
                              Catch::Contains("applies to " + applies + ", not to compression.scheme '" + scheme));
    CHECK_NOTHROW(config::load(base, {key + "scheme=powersgd", key + "rank=4", key + "error_feedback=false"}));
    const auto spread =
        config::load(base, {"cluster.gradient_sync.algorithm=parameter_server", "cluster.gradient_sync.servers=2"});
    CHECK(spread.cluster.gradient_sync.server_ids == std::vector<std::size_t>{0, 2});
    const auto listed = config::load(
        base, {"cluster.gradient_sync.algorithm=parameter_server", "cluster.gradient_sync.server_nodes=[3, 1]"});
    CHECK(listed.cluster.gradient_sync.server_ids == std::vector<std::size_t>{3, 1});
    CHECK(listed.cluster.gradient_sync.servers == 2);
}
