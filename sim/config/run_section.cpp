// SPDX-License-Identifier: MIT
// The run, bfp and bfp_report sections (docs/config.md#run, #bfp, #bfp_report).
#include <algorithm>

#include "config/sections.h"

namespace fastsim::config {

const EnumNames<RunMode, 3>& enum_names(RunMode) {
    static constexpr EnumNames<RunMode, 3> kNames{{
        {"bfp_report", RunMode::bfp_report},
        {"training_step", RunMode::training_step},
        {"cluster", RunMode::cluster},
    }};
    return kNames;
}

const EnumNames<Fidelity, 2>& enum_names(Fidelity) {
    static constexpr EnumNames<Fidelity, 2> kNames{{{"memo", Fidelity::memo}, {"stepped", Fidelity::stepped}}};
    return kNames;
}

const EnumNames<Distribution, 4>& enum_names(Distribution) {
    static constexpr EnumNames<Distribution, 4> kNames{{
        {"normal", Distribution::normal},
        {"relu_normal", Distribution::relu_normal},
        {"laplace", Distribution::laplace},
        {"student_t", Distribution::student_t},
    }};
    return kNames;
}

namespace {

template <typename Visit, typename R>
void run_keys(Visit& visit, R& r) {
    visit(r.mode, {"mode",
                   "what `fastsim run` does: a BFP error report, one training step on one node, or one training step "
                   "planned over and simulated on a cluster ([planner.md](planner.md))"});
    visit(r.seed,
          {"seed", "master seed: the synthetic data and every LFSR derive from it", nullptr, {}, "0 … 2^64 - 1"});
    visit(r.fidelity,
          {"fidelity",
           "`training_step`: memoised tile timing, or the SystemC node with the array stepped cycle by cycle "
           "on synthetic operands ([node.md](node.md#fidelity)); `--fidelity` sets it too. `cluster` takes "
           "only `memo`"});
    visit(r.phases, {"phases",
                     "`training_step`: the training phases to simulate, any of `forward`, `backward_data`, "
                     "`weight_gradient`, each at most once (e.g. `[forward]` for inference or one GEMM alone); "
                     "`cluster` takes only all three",
                     nullptr, "all three"});
    visit(r.optimizer, {"optimizer",
                        "`training_step`: the weight update ending each step, on the vector unit: `none` (the GEMM "
                        "phases and vector-unit layers only), `sgd`, `sgd_momentum` or `adam` "
                        "([vector_unit.md](vector_unit.md#the-optimiser-step))"});
    visit(r.max_work_s,
          {"max_work_s",
           "the work limit of `run`, `plan` and `compare` of this config, in estimated seconds, for a config meant "
           "to run longer than the default allows; `--max-work` overrides it ([cli.md](cli.md#work-limit))",
           &kMaxWorkSeconds, "20 (the default limit)"});
}

template <typename Visit, typename B>
void bfp_keys(Visit& visit, B& b) {
    visit(b.group_size, {"group_size", "g, values sharing one exponent", &kGroupSize});
    visit(b.exponent_bits, {"exponent_bits", "e, shared-exponent field width", &kExponentBits});
    visit(b.exponent_bias,
          {"exponent_bias", "b: E ranges over b ± (2^(e-1) - 1); also the float32 rules below", &kExponentBias});
    visit(b.overflow, {"overflow", "a group whose exponent is above the range becomes NaN, or saturates (bfp.md §2)"});
    visit(
        b.noise_bits,
        {"noise_bits", "n, stochastic-rounding noise bits below the LSB; at most `lfsr_bits`, and gcd(n, 2^w - 1) = 1",
         &kNoiseBits});
    visit(b.lfsr_bits, {"lfsr_bits", "w, width of each converter lane's LFSR", &kLfsrBits});
}

template <typename Visit, typename R>
void bfp_report_keys(Visit& visit, R& r) {
    visit(r.mantissa_bits,
          {"mantissa_bits", "mantissa widths m to report; each also meets the float32 LSB rule with `bfp`",
           &kReportMantissaBits});
    visit(r.roundings, {"rounding", "rounding modes to report (bfp.md §4)"});
}

template <typename Visit, typename T>
void tensor_keys(Visit& visit, T& t) {
    visit(t.name, {"name", "row label", nullptr, "`tensor<i>`, i the 0-based index"});
    visit(t.distribution, {"distribution", "see below"});
    visit(t.scale, {"scale", "σ of the normal (`normal`, `relu_normal`), b (`laplace`), multiplier (`student_t`)",
                    &kTensorScale});
    if (Visit::kEveryKey || t.distribution == Distribution::student_t)
        visit(t.dof, {"dof", "degrees of freedom; only with `student_t`", &kTensorDof});
    visit(t.count, {"count", "values generated (need not be a multiple of g)", &kTensorCount});
}

constexpr auto kRunKeys = [](auto& visit, auto& r) { run_keys(visit, r); };
constexpr auto kBfpKeys = [](auto& visit, auto& b) { bfp_keys(visit, b); };
constexpr auto kReportKeys = [](auto& visit, auto& r) { bfp_report_keys(visit, r); };
constexpr auto kTensorKeys = [](auto& visit, auto& t) { tensor_keys(visit, t); };

}  // namespace

void check_mantissa_format(const BfpParams& bfp, int m, const Location& where) {
    if (auto error = bfp::validate(bfp.format(m))) throw ConfigError(where, *error);
}

KeyReader read_run_section(MapReader& top, RunParams& run) {
    KeyReader reader = read_keys(top, "run", run, kRunKeys);
    reader.finish();
    for (std::size_t i = 0; i < run.phases.size(); ++i)
        for (std::size_t j = 0; j < i; ++j)
            if (run.phases[i] == run.phases[j])
                throw ConfigError(reader.where("phases"),
                                  std::string("'") + fmac::to_string(run.phases[i]) + "' is listed twice");
    if (run.mode == RunMode::cluster && run.phase_selection() != node::kEveryPhase)
        throw ConfigError(reader.where("phases"),
                          "run.mode cluster simulates whole training steps: every phase (leave run.phases out)");
    if (run.mode == RunMode::bfp_report && run.phase_selection() != node::kEveryPhase)
        throw ConfigError(reader.where("phases"),
                          "applies only to run.mode training_step (and cluster, with every phase)");
    if (run.mode == RunMode::bfp_report && run.fidelity != Fidelity::memo)
        throw ConfigError(reader.where("fidelity"),
                          "applies only to run.mode training_step or cluster: a bfp_report quantises tensors and "
                          "simulates no node (leave run.fidelity and --fidelity out)");
    if (run.mode != RunMode::training_step && run.optimizer != workload::Optimizer::none)
        throw ConfigError(reader.where("optimizer"),
                          "applies only to run.mode training_step: a cluster run does not cost the "
                          "weight update yet (leave run.optimizer out)");
    // The update applies the weight gradient: without that phase there is none to apply.
    if (run.optimizer != workload::Optimizer::none && reader.given("phases") &&
        std::find(run.phases.begin(), run.phases.end(), fmac::TrainingPhase::weight_gradient) == run.phases.end())
        throw ConfigError(reader.where("optimizer"),
                          "run.phases leaves out weight_gradient, so there is no weight gradient to apply "
                          "(add weight_gradient to run.phases, or leave run.optimizer out)");
    return reader;
}

BfpParams read_bfp_section(MapReader& top, Location* bias_where) {
    BfpParams p;
    KeyReader reader = read_keys(top, "bfp", p, kBfpKeys);
    reader.finish();
    if (bias_where) *bias_where = reader.where("exponent_bias");
    if (p.noise_bits > p.lfsr_bits)
        throw ConfigError(reader.where("noise_bits"), "expected a value between 1 and " + std::to_string(p.lfsr_bits) +
                                                          ", got " + std::to_string(p.noise_bits));
    // Whole-format rules that hold for every mantissa width: the largest exponent fits
    // float32, the LFSR draws cover its period. The smallest LSB depends on m: see the report.
    check_mantissa_format(p, 2, reader.where("exponent_bias"));
    if (auto error = bfp::validate(p.noise(1))) throw ConfigError(reader.where("noise_bits"), *error);
    return p;
}

BfpReportParams read_bfp_report_section(MapReader& top, const BfpParams& bfp, const Location& bias_where) {
    BfpReportParams p;
    KeyReader reader = read_keys(top, "bfp_report", p, kReportKeys);
    // "tensors:" with no value means the default tensors.
    const Location tensors_where = reader.section().location_of("tensors");
    const bool tensors_given = reader.section().has("tensors");
    std::vector<MapReader> tensors = reader.section().maps("tensors");
    if (tensors_given && tensors.empty()) throw ConfigError(tensors_where, "expected at least one tensor");
    for (std::size_t i = 0; i < tensors.size(); ++i) {
        TensorSpec t;
        KeyReader tensor = read_keys(std::move(tensors[i]), t, kTensorKeys);
        tensor.finish();
        if (t.name.empty()) t.name = "tensor" + std::to_string(i);
        if (tensor.given("dof") && t.distribution != Distribution::student_t)
            throw ConfigError(tensor.where("dof"), "dof applies only to distribution student_t");
        p.tensors.push_back(std::move(t));
    }
    if (!tensors_given) p.tensors = default_report_tensors();
    reader.finish();
    // Every width in use meets the float32 LSB rule: a listed one at its entry, the defaults at
    // bfp.exponent_bias (a bias that pushes their LSB below float32's range is still an error).
    for (std::size_t i = 0; i < p.mantissa_bits.size(); ++i)
        check_mantissa_format(
            bfp, p.mantissa_bits[i],
            reader.given("mantissa_bits") ? reader.where("mantissa_bits[" + std::to_string(i) + "]") : bias_where);
    return p;
}

void dump_run_sections(YAML::Emitter& out, const Params& p) {
    out << YAML::Key << "run" << YAML::Value << YAML::BeginMap;
    write_keys(out, p.run, kRunKeys);
    out << YAML::EndMap;
    out << YAML::Key << "bfp" << YAML::Value << YAML::BeginMap;
    write_keys(out, p.bfp, kBfpKeys);
    out << YAML::EndMap;
    if (p.run.mode != RunMode::bfp_report) return;
    out << YAML::Key << "bfp_report" << YAML::Value << YAML::BeginMap;
    write_keys(out, p.bfp_report, kReportKeys);
    out << YAML::Key << "tensors" << YAML::Value << YAML::BeginSeq;
    for (const auto& t : p.bfp_report.tensors) {
        out << YAML::Flow << YAML::BeginMap;
        write_keys(out, t, kTensorKeys);
        out << YAML::EndMap;
    }
    out << YAML::EndSeq << YAML::EndMap;
}

std::vector<TensorSpec> default_report_tensors() {
    return {
        {"weights", Distribution::normal, 0.05, 3.0, 65536},
        {"activations", Distribution::relu_normal, 1.0, 3.0, 65536},
        {"gradients", Distribution::student_t, 1e-4, 3.0, 65536},
    };
}

std::vector<std::pair<std::string, std::string>> run_key_tables() {
    return {{"run", key_table<RunParams>(kRunKeys)},
            {"bfp", key_table<BfpParams>(kBfpKeys)},
            {"bfp_report", key_table<BfpReportParams>(kReportKeys)},
            {"bfp_report.tensors", key_table<TensorSpec>(kTensorKeys)}};
}

}  // namespace fastsim::config
