// SPDX-License-Identifier: MIT
#include "config/train_config.h"

#include <cmath>
#include <filesystem>
#include <set>

#include "common/errors.h"
#include "config/ranges.h"
#include "config/sections.h"
#include "config/yaml_reader.h"

namespace fastsim::config {
namespace {

learning::ClassRounding read_rounding(MapReader& top) {
    learning::ClassRounding r;
    auto reader = top.map("rounding");
    if (!reader) return r;
    const auto parse = [](const std::string& s) { return bfp::parse_rounding(s); };
    const std::string names = "nearest, even, truncate, stochastic";
    r.weights = reader->choice<bfp::Rounding>("weights", parse, names).value_or(r.weights);
    r.activations = reader->choice<bfp::Rounding>("activations", parse, names).value_or(r.activations);
    r.gradients = reader->choice<bfp::Rounding>("gradients", parse, names).value_or(r.gradients);
    reader->finish();
    return r;
}

learning::ScheduleParams read_schedule(MapReader& top) {
    learning::ScheduleParams s;
    auto reader = top.map("schedule");
    if (!reader) return s;
    s.alpha = in_range(reader->scalar<double>("alpha"), s.alpha, kScheduleThreshold);
    s.beta = in_range(reader->scalar<double>("beta"), s.beta, kScheduleThreshold);
    const auto start = reader->scalar<int>("start_bits");
    const auto step = reader->scalar<int>("step_bits");
    const auto max = reader->scalar<int>("max_bits");
    s.start_bits = in_range(start, s.start_bits, kScheduleStartBits);
    s.step_bits = in_range(step, s.step_bits, kScheduleStepBits);
    s.max_bits = in_range(max, s.max_bits, kScheduleMaxBits);
    s.max_bits = in_range(max, s.max_bits, s.start_bits, 16);
    s.check_every_iterations = in_range<std::uint64_t>(reader->scalar<std::uint64_t>("check_every_iterations"),
                                                      s.check_every_iterations, kCheckEvery);
    s.norm = reader->choice<learning::ImprovementNorm>(
                       "norm", [](const std::string& n) { return learning::parse_improvement_norm(n); },
                       "abs_of_sum, sum_of_abs")
                 .value_or(s.norm);
    reader->finish();
    return s;
}

}  // namespace

TrainConfig load_train_config(const std::string& path, const std::vector<std::string>& overrides) {
    Document doc = Document::load(path, "train config");
    for (const auto& o : overrides) doc.apply_override(o);
    MapReader top(doc, doc.root, "");
    TrainConfig c;
    c.source_file = path;

    MapReader train = top.map("train").value_or(MapReader(doc, YAML::Node(), "train"));
    learning::TrainParams& t = c.train;
    t.network = train.choice<learning::NetworkKind>(
                         "network", [](const std::string& s) { return learning::parse_network_kind(s); }, "mlp, cnn")
                    .value_or(t.network);
    t.epochs = in_range<std::uint64_t>(train.scalar<std::uint64_t>("epochs"), t.epochs, kTrainEpochs);
    t.batch = in_range<std::uint64_t>(train.scalar<std::uint64_t>("batch"), t.batch, kTrainBatch);
    t.learning_rate = in_range(train.scalar<double>("learning_rate"), t.learning_rate, kLearningRate);
    t.lr_schedule = train.choice<learning::LrSchedule>(
                             "lr_schedule", [](const std::string& s) { return learning::parse_lr_schedule(s); },
                             "constant, cosine")
                        .value_or(t.lr_schedule);
    t.momentum = in_range(train.scalar<double>("momentum"), t.momentum, kMomentum);
    t.weight_decay = in_range(train.scalar<double>("weight_decay"), t.weight_decay, kWeightDecay);
    t.seed = train.scalar<std::uint64_t>("seed").value_or(t.seed);
    t.path = train.choice<learning::GemmPath>(
                      "gemm_path", [](const std::string& s) { return learning::parse_gemm_path(s); }, "fast, exact")
                 .value_or(t.path);
    t.max_iterations = in_range<std::uint64_t>(train.scalar<std::uint64_t>("max_iterations"), 0, kMaxIterations);
    c.blas_threads = in_range(train.scalar<int>("blas_threads"), c.blas_threads, kBlasThreads);
    train.finish();

    MapReader data = top.map("data").value_or(MapReader(doc, YAML::Node(), "data"));
    const Field<std::string> dir = data.scalar<std::string>("dir");
    if (dir.value) {
        const std::filesystem::path p(*dir.value);
        c.data_dir = p.is_absolute() ? p.string()
                                     : (std::filesystem::path(doc.file).parent_path() / p).lexically_normal().string();
    }
    c.train_limit = in_range<std::uint64_t>(data.scalar<std::uint64_t>("train_limit"), 0, kSampleLimit);
    c.test_limit = in_range<std::uint64_t>(data.scalar<std::uint64_t>("test_limit"), 0, kSampleLimit);
    data.finish();

    c.bfp = read_bfp_section(top);
    c.rounding = read_rounding(top);
    c.schedule = read_schedule(top);
    const NodeSections node = read_node_sections(top, c.bfp);
    c.node = node.node;
    c.energy = node.energy;

    const auto names = top.list<std::string>("policies");
    const std::vector<Field<std::string>> chosen =
        names.value ? *names.value : std::vector<Field<std::string>>{{std::string("fast"), names.where}};
    if (chosen.empty()) throw ConfigError(names.where, "expected at least one policy of " + std::string(learning::kPolicyNames));
    std::set<std::string> seen;
    for (const auto& name : chosen) {
        auto policy = learning::make_policy(*name.value, c.bfp.format(8), c.bfp.noise(c.train.seed), c.rounding, c.schedule);
        if (!policy)
            throw ConfigError(name.where, "expected one of " + std::string(learning::kPolicyNames) + ", got '" +
                                              *name.value + "'");
        if (!seen.insert(*name.value).second) throw ConfigError(name.where, "policy '" + *name.value + "' is listed twice");
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

}  // namespace fastsim::config
