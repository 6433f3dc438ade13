// SPDX-License-Identifier: MIT
// Data-parallel workers in training (docs/fast-training.md, "Workers"): each compressor against
// its definition, and the trainer with workers against plain training.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>
#include <random>
#include <vector>

#include "learning/dataset.h"
#include "learning/gradient_exchange.h"
#include "learning/precision.h"
#include "learning/trainer.h"
#include "config/train_config.h"
#include "run/train_run.h"

using namespace fastsim;
using namespace fastsim::learning;
using compression::Scheme;

namespace {

using Grads = std::vector<std::vector<std::vector<float>>>;  // [worker][tensor]

Grads random_grads(std::size_t workers, const std::vector<TensorShape>& tensors, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    Grads g(workers);
    for (auto& w : g)
        for (const TensorShape& t : tensors) {
            std::vector<float> v(t.size());
            for (float& x : v) x = normal(rng);
            w.push_back(std::move(v));
        }
    return g;
}

ExchangeParams params_of(Scheme scheme, std::size_t workers) {
    ExchangeParams p;
    p.compression.scheme = scheme;
    p.compression.density = 0.1;
    p.compression.rank = 2;
    p.workers = workers;
    p.momentum = 0;
    p.iterations_per_epoch = 1000;
    return p;
}

const Dataset& train_slice() {
    static const Dataset data = load_idx(std::string(kFashionMnistDir) + "/train-images-idx3-ubyte.gz",
                                         std::string(kFashionMnistDir) + "/train-labels-idx1-ubyte.gz", 512);
    return data;
}

PolicySpec fp32() { return *make_policy("fp32", bfp::Format{}, bfp::NoiseSpec{}, ClassRounding{}, ScheduleParams{}); }

}  // namespace

TEST_CASE("Workers: uncompressed exchange averages, and one worker is the gradient itself", "[training][workers]") {
    const std::vector<TensorShape> tensors{{8, 5}, {8, 1}};
    const Grads g = random_grads(3, tensors, 1);
    GradientExchange three(params_of(Scheme::none, 3), tensors);
    std::vector<std::vector<float>> out;
    three.exchange(g, out, 0);
    for (std::size_t t = 0; t < tensors.size(); ++t)
        for (std::size_t i = 0; i < tensors[t].size(); ++i)
            CHECK(out[t][i] == Approx((g[0][t][i] + g[1][t][i] + g[2][t][i]) / 3).epsilon(1e-6));
    GradientExchange one(params_of(Scheme::none, 1), tensors);
    one.exchange({g[0]}, out, 0);
    CHECK(out == g[0]);
}

TEST_CASE("Workers: sparse schemes send the largest values and keep the rest as residual", "[training][workers]") {
    const std::vector<TensorShape> tensors{{20, 10}};
    const Grads g = random_grads(2, tensors, 2);
    GradientExchange topk(params_of(Scheme::topk, 2), tensors);
    std::vector<std::vector<float>> out;
    topk.exchange(g, out, 0);
    CHECK(topk.values_sent() == 2 * 20);  // 10% of 200, each worker
    // What was sent plus what stays equals the gradient: a second, zero gradient sends the
    // largest residuals, and over many rounds everything is sent.
    double sent = std::accumulate(out[0].begin(), out[0].end(), 0.0) * 2;
    const Grads zero(2, std::vector<std::vector<float>>{std::vector<float>(200, 0.0f)});
    for (int round = 0; round < 20; ++round) {
        topk.exchange(zero, out, 1 + round);
        sent += std::accumulate(out[0].begin(), out[0].end(), 0.0) * 2;
    }
    double total = 0;
    for (const auto& w : g) total += std::accumulate(w[0].begin(), w[0].end(), 0.0);
    CHECK(sent == Approx(total).margin(1e-3));
    // Threshold: exactly the values above it.
    ExchangeParams p = params_of(Scheme::threshold, 1);
    p.compression.threshold = 1.0;
    GradientExchange threshold(p, tensors);
    threshold.exchange({g[0]}, out, 0);
    std::size_t above = 0;
    for (std::size_t i = 0; i < 200; ++i) {
        above += std::fabs(g[0][0][i]) > 1.0f;
        CHECK(out[0][i] == (std::fabs(g[0][0][i]) > 1.0f ? g[0][0][i] : 0.0f));
    }
    CHECK(threshold.values_sent() == above);
}

TEST_CASE("Workers: DGC warms its density up and corrects momentum locally", "[training][workers]") {
    const std::vector<TensorShape> tensors{{100, 10}};
    ExchangeParams p = params_of(Scheme::dgc, 1);
    p.compression.density = 0.001;
    p.iterations_per_epoch = 10;
    GradientExchange dgc(p, tensors);
    CHECK(dgc.density(0) == 0.25);
    CHECK(dgc.density(15) == 0.0625);
    CHECK(dgc.density(39) == Approx(0.25 * 0.25 * 0.25 * 0.25));
    CHECK(dgc.density(40) == 0.001);
    CHECK(dgc.applies_momentum());
    // With momentum 0 DGC's first exchange is top-k's.
    const Grads g = random_grads(1, tensors, 3);
    ExchangeParams t = p;
    t.compression.scheme = Scheme::topk;
    t.compression.density = 0.25;
    GradientExchange topk(t, tensors);
    std::vector<std::vector<float>> a, b;
    dgc.exchange(g, a, 0);
    topk.exchange(g, b, 0);
    CHECK(a == b);
}

TEST_CASE("Workers: 1-bit keeps each bucket's sum, TernGrad is unbiased", "[training][workers]") {
    const std::vector<TensorShape> tensors{{1024, 1}};
    const Grads g = random_grads(1, tensors, 4);
    GradientExchange onebit(params_of(Scheme::onebit, 1), tensors);
    std::vector<std::vector<float>> out;
    onebit.exchange(g, out, 0);
    for (std::size_t first = 0; first < 1024; first += 512) {
        double in = 0, sent = 0;
        std::set<float> levels;
        for (std::size_t i = first; i < first + 512; ++i) {
            in += g[0][0][i];
            sent += out[0][i];
            levels.insert(out[0][i]);
        }
        CHECK(sent == Approx(in).margin(1e-3));
        CHECK(levels.size() == 2);  // the bucket's mean positive and mean negative
    }
    // TernGrad: the mean of many independent ternarisations approaches the gradient.
    GradientExchange tern(params_of(Scheme::terngrad, 1), tensors);
    std::vector<double> mean(1024, 0.0);
    const int rounds = 2000;
    for (int r = 0; r < rounds; ++r) {
        tern.exchange(g, out, static_cast<std::size_t>(r));
        for (std::size_t i = 0; i < 1024; ++i) mean[i] += out[0][i] / rounds;
    }
    double err = 0, norm = 0;
    for (std::size_t i = 0; i < 1024; ++i) {
        err += (mean[i] - g[0][0][i]) * (mean[i] - g[0][0][i]);
        norm += g[0][0][i] * g[0][0][i];
    }
    CHECK(std::sqrt(err / norm) < 0.05);
}

TEST_CASE("Workers: PowerSGD recovers a low-rank gradient and keeps the remainder as error", "[training][workers]") {
    // A rank-1 gradient u vᵀ: rank 2 reproduces it after one exchange.
    const std::vector<TensorShape> tensors{{12, 9}};
    std::vector<float> m(12 * 9);
    for (std::size_t i = 0; i < 12; ++i)
        for (std::size_t j = 0; j < 9; ++j)
            m[i * 9 + j] = static_cast<float>(static_cast<double>(i + 1) * 0.1 * (static_cast<double>(j % 4) - 1.5));
    GradientExchange psgd(params_of(Scheme::powersgd, 1), tensors);
    std::vector<std::vector<float>> out;
    psgd.exchange({{m}}, out, 0);
    for (std::size_t i = 0; i < m.size(); ++i) CHECK(out[0][i] == Approx(m[i]).margin(1e-4));
    CHECK(psgd.values_sent() == (12 + 9) * 2);
    // A full-rank gradient is approximated; the error is fed back, so two exchanges of g then 0
    // send more of it than one.
    const Grads g = random_grads(2, tensors, 5);
    GradientExchange two(params_of(Scheme::powersgd, 2), tensors);
    std::vector<std::vector<float>> first, second;
    two.exchange(g, first, 0);
    const Grads zero(2, std::vector<std::vector<float>>{std::vector<float>(108, 0.0f)});
    two.exchange(zero, second, 1);
    double resid_one = 0, resid_two = 0;
    for (std::size_t i = 0; i < 108; ++i) {
        const double avg = (g[0][0][i] + g[1][0][i]) / 2;
        resid_one += (avg - first[0][i]) * (avg - first[0][i]);
        resid_two += (avg - first[0][i] - second[0][i]) * (avg - first[0][i] - second[0][i]);
    }
    CHECK(resid_two < resid_one);
}

TEST_CASE("Trainer with workers: uncompressed K = 4 follows single-process training", "[training][workers]") {
    const Dataset& data = train_slice();
    TrainParams params;
    params.batch = 32;
    params.epochs = 1;
    params.max_iterations = 12;
    params.learning_rate = 0.02;
    Trainer plain(params, fp32(), data);
    while (!plain.finished()) (void)plain.train_epoch();
    params.workers = 4;
    Trainer four(params, fp32(), data);
    while (!four.finished()) (void)four.train_epoch();
    // The mean of four shard means is the batch mean: equal up to float rounding.
    const auto plain_params = const_cast<Network&>(plain.network()).parameters();
    const auto four_params = const_cast<Network&>(four.network()).parameters();
    double diff = 0, norm = 0;
    for (std::size_t l = 0; l < plain_params.size(); ++l)
        for (std::size_t i = 0; i < plain_params[l]->weights.size(); ++i) {
            diff = std::max(diff,
                            static_cast<double>(std::fabs(plain_params[l]->weights[i] - four_params[l]->weights[i])));
            norm = std::max(norm, static_cast<double>(std::fabs(plain_params[l]->weights[i])));
        }
    CHECK(diff < 1e-4 * norm);
    // A delayed update of D = 2 leaves the weights untouched for two iterations.
    params.workers = 2;
    params.staleness = 2;
    params.max_iterations = 2;
    Trainer delayed(params, fp32(), data);
    Trainer untouched(TrainParams{}, fp32(), data);  // same seed: the initial weights
    (void)delayed.train_epoch();
    const auto d = const_cast<Network&>(delayed.network()).parameters();
    const auto u = const_cast<Network&>(untouched.network()).parameters();
    for (std::size_t l = 0; l < d.size(); ++l) CHECK(d[l]->weights == u[l]->weights);
}

TEST_CASE("Workers' iteration time: the shard's compute, then the exchange on train.network", "[training][workers]") {
    const std::string config = std::string(FASTSIM_SOURCE_DIR) + "/tests/data/train/mlp_slice.yaml";
    const auto plain = config::load_train_config(config);
    CHECK_FALSE(plain.train.distributed());  // one worker, no compression: the old path, bit for bit
    const std::vector<std::string> wan{"train.workers=8", "train.network.topology=switch",
                                       "train.network.link.bandwidth_gb_per_s=1.25",
                                       "train.network.link.latency_ns=100000000"};
    auto dense = config::load_train_config(config, wan);
    REQUIRE(dense.train.distributed());
    run::WorkerTimeModel dense_time(dense);
    const double dense_s = dense_time.exchange_s(0.001).first;
    // 8 ranks behind one switch at 100 ms a hop: at least two hops of latency, and the MLP's
    // 0.94 MB of fp32 gradients through each rank's link.
    CHECK(dense_s > 0.2);
    CHECK(dense_time.iteration_s(0.01, 0.001) == Approx(0.01 + dense_s));
    auto sparse_cfg = wan;
    sparse_cfg.push_back("train.gradient_sync.compression.scheme=dgc");
    auto sparse = config::load_train_config(config, sparse_cfg);
    run::WorkerTimeModel sparse_time(sparse);
    CHECK(sparse_time.exchange_s(0.001).first < dense_s);
    // A delayed update: the step is the longest of the compute, the busiest link and the whole
    // iteration spread over D + 1.
    auto stale_cfg = wan;
    stale_cfg.push_back("train.gradient_sync.staleness=3");
    auto stale = config::load_train_config(config, stale_cfg);
    run::WorkerTimeModel stale_time(stale);
    const auto [stale_s, stale_link_s] = stale_time.exchange_s(0.001);
    CHECK(stale_link_s > 0);
    CHECK(stale_time.iteration_s(0.01, 0.001) == Approx(std::max({0.01, stale_link_s, (0.01 + stale_s) / 4})));
    CHECK(stale_time.iteration_s(0.01, 0.001) < 0.01 + stale_s);
}
