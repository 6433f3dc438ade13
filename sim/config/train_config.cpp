// SPDX-License-Identifier: MIT
#include "config/train_config.h"

#include <set>

#include <yaml-cpp/yaml.h>

#include "common/errors.h"
#include "config/load.h"
#include "config/ranges.h"
#include "config/sections.h"
#include "config/sync_keys.h"

namespace fastsim::config {
namespace {

template <typename Visit, typename C>
void train_keys(Visit& visit, C& c) {
    auto& t = c.train;
    visit(t.network, {"model", "the network trained"});
    visit(t.epochs, {"epochs", "epochs per policy", &kTrainEpochs});
    visit(t.batch, {"batch", "mini-batch size; the last batch of an epoch may be short", &kTrainBatch});
    visit(t.learning_rate, {"learning_rate", "peak learning rate (the CNN config uses 0.01)", &kLearningRate});
    visit(t.lr_schedule, {"lr_schedule", "`cosine` (over all iterations) or `constant`"});
    visit(t.momentum, {"momentum", "SGD momentum", &kMomentum});
    visit(t.weight_decay, {"weight_decay", "L2 on weights (not biases), added to the gradient", &kWeightDecay});
    visit(t.seed, {"seed", "weights, shuffling and every LFSR derive from it", nullptr, {}, "0 … 2^64 - 1"});
    visit(t.path, {"gemm_path", "how BFP GEMMs are computed (above)"});
    visit(t.max_iterations,
          {"max_iterations", "stop each policy after this many mini-batches (0 = all epochs)", &kMaxIterations});
    visit(t.workers, {"workers",
                      "data-parallel workers: each mini-batch is split into this many shards whose gradients are "
                      "synchronised as `gradient_sync` says (below, \"Workers\")",
                      &kTrainWorkers});
    gradient_sync_keys(visit, c.gradient_sync, "gradient_sync.");
    visit(c.network_topology, {"network.topology",
                               "how the workers' nodes are joined: `ring`, `fully_connected` or `switch` (these "
                               "`network` keys are refused with one worker)"});
    link_keys(visit, c.network_link, "network.");
    visit(c.target_accuracy, {"target_accuracy",
                              "with workers (above 1; refused with one): the test accuracy whose simulated "
                              "time-to-accuracy is reported per policy",
                              &kTargetAccuracy});
    visit(c.blas_threads, {"blas_threads",
                           "OpenBLAS threads; above the cores this process may use, it is lowered to them with a "
                           "warning (more threads than cores spin for minutes)",
                           &kBlasThreads});
}

template <typename Visit, typename C>
void data_keys(Visit& visit, C& c) {
    visit(c.data_dir, {"dir", "the Fashion-MNIST IDX files; relative paths are taken from the config's folder"});
    visit(c.train_limit, {"train_limit", "first N training samples (0 = all 60,000)", &kSampleLimit});
    visit(c.test_limit, {"test_limit", "first N test samples (0 = all 10,000)", &kSampleLimit});
}

template <typename Visit, typename R>
void rounding_keys(Visit& visit, R& r) {
    visit(r.weights, {"weights", "rounding of weights"});
    visit(r.activations, {"activations", "rounding of activations"});
    visit(r.gradients, {"gradients", "rounding of gradients"});
}

template <typename Visit, typename S>
void schedule_keys(Visit& visit, S& s) {
    visit(s.alpha, {"alpha", "α of the threshold ε(l, i) = α − β·i/I − β·l/L", &kScheduleThreshold});
    visit(s.beta, {"beta", "β of the threshold", &kScheduleThreshold});
    visit(s.start_bits, {"start_bits", "the width every tensor starts at", &kScheduleStartBits});
    visit(s.step_bits, {"step_bits", "the width added when r(X) falls below the threshold", &kScheduleStepBits});
    visit(s.max_bits, {"max_bits", "the widest; at least `start_bits`", &kScheduleMaxBits});
    visit(s.check_every_iterations, {"check_every_iterations", "r(X) measured when i % this = 0", &kCheckEvery});
    visit(s.norm, {"norm", "denominator of r(X)"});
}

constexpr auto kTrainKeys = [](auto& visit, auto& c) { train_keys(visit, c); };
constexpr auto kDataKeys = [](auto& visit, auto& c) { data_keys(visit, c); };
constexpr auto kRoundingKeys = [](auto& visit, auto& r) { rounding_keys(visit, r); };
constexpr auto kScheduleKeys = [](auto& visit, auto& s) { schedule_keys(visit, s); };

}  // namespace

TrainConfig load_train_config(const std::string& path, const std::vector<std::string>& overrides) {
    Document doc = Document::load(path, "train config");
    for (const auto& o : overrides) doc.apply_override(o);
    MapReader top(doc, doc.root, "");
    TrainConfig c;
    c.source_file = path;

    if (std::optional<MapReader> t = top.map("train"); t && t->contains("network") && t->raw("network").IsScalar())
        throw ConfigError(t->location_of("network"),
                          "train.network is the workers' network ({topology, link}); the network "
                          "trained is train.model (mlp or cnn)");
    KeyReader train = read_keys(top, "train", c, kTrainKeys);
    train.finish();
    if (c.network_topology != TopologyKind::ring && c.network_topology != TopologyKind::fully_connected &&
        c.network_topology != TopologyKind::switch_star)
        throw ConfigError(train.where("network.topology"), "expected ring, fully_connected or switch, got '" +
                                                               std::string(name_of(c.network_topology)) + "'");
    resolve_gradient_sync(c.gradient_sync, c.train.workers, train, "gradient_sync.");
    c.train.compression = c.gradient_sync.compression_params();
    c.train.staleness = static_cast<std::size_t>(c.gradient_sync.staleness);
    // The workers' network and time-to-accuracy mean nothing to one worker, which sends nothing.
    if (c.train.workers == 1)
        for (const char* key : {"network.topology", "network.link.bandwidth_gb_per_s", "network.link.latency_ns",
                                "network.link.energy_pj_per_bit", "network.link.switching", "target_accuracy",
                                "gradient_sync.algorithm", "gradient_sync.bucket_mib", "gradient_sync.servers",
                                "gradient_sync.server_nodes", "gradient_sync.message_level_max_ranks"})
            if (train.given(key))
                throw ConfigError(train.where(key),
                                  "applies to data-parallel workers (train.workers above 1): one "
                                  "worker sends nothing over a network");
    if (c.train.workers > c.train.batch)
        throw ConfigError(train.where("workers"), "expected at most train.batch (" + std::to_string(c.train.batch) +
                                                      ") workers: each needs a sample, got " +
                                                      std::to_string(c.train.workers));
    read_keys(top, "data", c, kDataKeys).finish();
    c.data_dir = resolve_path(doc.file, c.data_dir);

    c.bfp = read_bfp_section(top);
    read_keys(top, "rounding", c.rounding, kRoundingKeys).finish();
    KeyReader schedule = read_keys(top, "schedule", c.schedule, kScheduleKeys);
    schedule.finish();
    if (c.schedule.max_bits < c.schedule.start_bits)
        throw ConfigError(schedule.where("max_bits"), "expected a value between " +
                                                          std::to_string(c.schedule.start_bits) + " and 16, got " +
                                                          std::to_string(c.schedule.max_bits));
    const NodeSections node = read_node_sections(top, c.bfp);
    if (node.fusion_given)
        throw ConfigError(*node.fusion_given,
                          "applies to run.mode training_step: fastsim train costs each GEMM of "
                          "its network on the node, with no vector-unit layers to fuse");
    c.node = node.node;
    c.energy = node.energy;

    const auto names = top.list<std::string>("policies");
    const std::vector<Field<std::string>> chosen =
        names.value ? *names.value : std::vector<Field<std::string>>{{std::string("fast"), names.where}};
    if (chosen.empty())
        throw ConfigError(names.where, "expected at least one policy of " + std::string(learning::kPolicyNames));
    std::set<std::string> seen;
    for (const auto& name : chosen) {
        auto policy =
            learning::make_policy(*name.value, c.bfp.format(8), c.bfp.noise(c.train.seed), c.rounding, c.schedule);
        if (!policy)
            throw ConfigError(name.where,
                              "expected one of " + std::string(learning::kPolicyNames) + ", got '" + *name.value + "'");
        if (!seen.insert(*name.value).second)
            throw ConfigError(name.where, "policy '" + *name.value + "' is listed twice");
        if (policy->kind != learning::PolicyKind::fp32) {
            bfp::Format f = policy->format;
            f.mantissa_bits = policy->kind == learning::PolicyKind::fixed ? policy->fixed_bits : c.schedule.max_bits;
            if (auto error = bfp::validate(f)) throw ConfigError(name.where, *error);
        }
        c.policies.push_back(*policy);
    }
    top.finish();
    return c;
}

std::vector<std::pair<std::string, std::string>> train_key_tables() {
    return {{"train", key_table<TrainConfig>(kTrainKeys)},
            {"data", key_table<TrainConfig>(kDataKeys)},
            {"rounding", key_table<learning::ClassRounding>(kRoundingKeys)},
            {"schedule", key_table<learning::ScheduleParams>(kScheduleKeys)}};
}

std::string whole_run_config(const TrainConfig& train, const std::string& trace, const std::string& log,
                             const std::string& policy, std::uint64_t batch, std::uint64_t steps) {
    Params p;
    p.run.mode = RunMode::training_step;
    p.bfp = train.bfp;
    p.workload.trace = {trace, trace};
    p.workload.batch = batch;
    p.workload.steps = steps;
    p.node = train.node;
    p.precision.rounding.activations = train.rounding.activations;
    p.precision.rounding.gradients = train.rounding.gradients;
    p.precision.schedule_log = {log, log};
    p.precision.schedule_policy = policy;
    p.energy = train.energy;
    // dump() writes paths absolute; these two stay as given, beside the config wherever it moves.
    YAML::Node config = YAML::Load(dump(p));
    config["workload"]["trace"] = trace;
    config["precision"]["schedule"] = log;
    YAML::Emitter out;
    out << config;
    return std::string(out.c_str()) + "\n";
}

}  // namespace fastsim::config
