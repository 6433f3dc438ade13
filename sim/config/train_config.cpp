// SPDX-License-Identifier: MIT
#include "config/train_config.h"

#include <cmath>
#include <filesystem>
#include <set>

#include "config/errors.h"
#include "config/sections.h"
#include "config/yaml_reader.h"

namespace fastsim::config {
namespace {

double checked_real(const Field<double>& field, double fallback, double low, double high, const char* what) {
    const double v = field.value_or(fallback);
    if (!std::isfinite(v) || v < low || v > high)
        throw ConfigError(field.where, std::string("expected ") + what + ", got " + std::to_string(v));
    return v;
}

training::ClassRounding read_rounding(MapReader& top) {
    training::ClassRounding r;
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

training::ScheduleParams read_schedule(MapReader& top) {
    training::ScheduleParams s;
    auto reader = top.map("schedule");
    if (!reader) return s;
    s.alpha = checked_real(reader->scalar<double>("alpha"), s.alpha, -1e9, 1e9, "a finite number");
    s.beta = checked_real(reader->scalar<double>("beta"), s.beta, -1e9, 1e9, "a finite number");
    const auto start = reader->scalar<int>("start_bits");
    const auto step = reader->scalar<int>("step_bits");
    const auto max = reader->scalar<int>("max_bits");
    s.start_bits = in_range(start, s.start_bits, 2, 16);
    s.step_bits = in_range(step, s.step_bits, 1, 14);
    s.max_bits = in_range(max, s.max_bits, s.start_bits, 16);
    s.check_every_iterations = in_range<std::uint64_t>(reader->scalar<std::uint64_t>("check_every_iterations"),
                                                      s.check_every_iterations, 1, 1u << 30);
    s.norm = reader->choice<training::ImprovementNorm>(
                       "norm", [](const std::string& n) { return training::parse_improvement_norm(n); },
                       "abs_of_sum, sum_of_abs")
                 .value_or(s.norm);
    reader->finish();
    return s;
}

}  // namespace

TrainConfig load_train_config(const std::string& path, const std::vector<std::string>& overrides) {
    Document doc = Document::load(path);
    for (const auto& o : overrides) doc.apply_override(o);
    MapReader top(doc, doc.root, "");
    TrainConfig c;
    c.source_file = path;

    MapReader train = top.map("train").value_or(MapReader(doc, YAML::Node(), "train"));
    training::TrainParams& t = c.train;
    t.network = train.choice<training::NetworkKind>(
                         "network", [](const std::string& s) { return training::parse_network_kind(s); }, "mlp, cnn")
                    .value_or(t.network);
    t.epochs = in_range<std::uint64_t>(train.scalar<std::uint64_t>("epochs"), t.epochs, 1, 1000);
    t.batch = in_range<std::uint64_t>(train.scalar<std::uint64_t>("batch"), t.batch, 1, 60000);
    t.learning_rate = checked_real(train.scalar<double>("learning_rate"), t.learning_rate, 1e-12, 100,
                                   "a learning rate between 1e-12 and 100");
    t.lr_schedule = train.choice<training::LrSchedule>(
                             "lr_schedule", [](const std::string& s) { return training::parse_lr_schedule(s); },
                             "constant, cosine")
                        .value_or(t.lr_schedule);
    t.momentum = checked_real(train.scalar<double>("momentum"), t.momentum, 0, 0.999999, "a momentum in [0, 1)");
    t.weight_decay = checked_real(train.scalar<double>("weight_decay"), t.weight_decay, 0, 1, "a weight decay in [0, 1]");
    t.seed = train.scalar<std::uint64_t>("seed").value_or(t.seed);
    t.path = train.choice<training::GemmPath>(
                      "gemm_path", [](const std::string& s) { return training::parse_gemm_path(s); }, "fast, exact")
                 .value_or(t.path);
    t.max_iterations = train.scalar<std::uint64_t>("max_iterations").value_or(0);
    c.blas_threads = in_range(train.scalar<int>("blas_threads"), c.blas_threads, 1, 1024);
    train.finish();

    MapReader data = top.map("data").value_or(MapReader(doc, YAML::Node(), "data"));
    const Field<std::string> dir = data.scalar<std::string>("dir");
    if (dir.value) {
        const std::filesystem::path p(*dir.value);
        c.data_dir = p.is_absolute() ? p.string()
                                     : (std::filesystem::path(doc.file).parent_path() / p).lexically_normal().string();
    }
    c.train_limit = data.scalar<std::uint64_t>("train_limit").value_or(0);
    c.test_limit = data.scalar<std::uint64_t>("test_limit").value_or(0);
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
    if (chosen.empty()) throw ConfigError(names.where, "expected at least one policy of " + std::string(training::kPolicyNames));
    std::set<std::string> seen;
    for (const auto& name : chosen) {
        auto policy = training::make_policy(*name.value, c.bfp.format(8), c.bfp.noise(c.train.seed), c.rounding, c.schedule);
        if (!policy)
            throw ConfigError(name.where, "expected one of " + std::string(training::kPolicyNames) + ", got '" +
                                              *name.value + "'");
        if (!seen.insert(*name.value).second) throw ConfigError(name.where, "policy '" + *name.value + "' is listed twice");
        if (policy->kind != training::PolicyKind::fp32) {
            bfp::Format f = policy->format;
            f.mantissa_bits = policy->kind == training::PolicyKind::fixed ? policy->fixed_bits : c.schedule.max_bits;
            if (auto error = bfp::validate(f)) throw ConfigError(name.where, *error);
        }
        c.policies.push_back(*policy);
    }
    top.finish();
    return c;
}

}  // namespace fastsim::config
