// SPDX-License-Identifier: MIT
// `fastsim train CONFIG`: BFP training of a Fashion-MNIST network under precision policies,
// costed on the simulated FAST node (docs/fast-training.md).
#include <cstdio>
#include <iostream>

#include <boost/program_options.hpp>

#include "cli/app.h"
#include "cli/logging.h"
#include "common/machine.h"
#include "cli/progress.h"
#include "common/errors.h"
#include "config/train_config.h"
#include "run/train_run.h"
#include "run/work.h"
#include "sweep/run_dir.h"
#include "learning/dataset.h"
#include "learning/trainer.h"

namespace fastsim::cli {
namespace {

std::string percent(double v) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2f%%", 100 * v);
    return text;
}

std::string ratio(double v) {
    char text[32];
    std::snprintf(text, sizeof text, "%.2fx", v);
    return text;
}

}  // namespace

int train_command(const std::vector<std::string>& args) {
    namespace po = boost::program_options;
    const std::string usage =
        "fastsim train CONFIG [--out DIR] [--policy NAME ...] [-p key.path=value ...] [--max-work SECONDS]";
    po::options_description options(
        usage +
        "\n\nTrains the config's network on Fashion-MNIST under each of its precision policies (fp32, fixed\n"
        "BFP, MSFP-12, FAST's adaptive schedule), costs every iteration's GEMMs on the configured FAST\n"
        "node, and prints a line per epoch and a comparison. See docs/fast-training.md.\n\nOptions");
    std::string config_file, out_dir, max_work;
    std::vector<std::string> overrides, only;
    options.add_options()("config", po::value(&config_file), "the training config (configs/train/*.yaml)")(
        "out", po::value(&out_dir),
        "write accuracy.csv, cost.csv, precision_log.csv, schedule_checks.csv, comparison.csv and plots/*.svg here")(
        "force", "with --out: replace a run the folder already holds (whole, once this one is complete)")(
        "param,p", po::value(&overrides)->composing(), "override a config value, e.g. -p train.epochs=2 (repeatable)")(
        "policy", po::value(&only)->composing(),
        "run only this policy of the config's policies list (repeatable): fp32, bfp_m2 .. bfp_m8, msfp12, fast")(
        "max-work", po::value(&max_work),
        ("refuse runs estimated above this many seconds of work (default " +
         std::to_string(static_cast<int>(run::kDefaultMaxWorkSeconds)) + "; docs/cli.md, \"Work limit\")")
            .c_str());
    po::positional_options_description positional;
    positional.add("config", 1);
    const auto vm = parse_command_line(args, options, positional);
    if (!vm) return kSuccess;
    if (config_file.empty()) throw UserError("missing CONFIG: " + usage);

    config::TrainConfig config = config::load_train_config(config_file, overrides);
    if (!only.empty()) {
        std::vector<learning::PolicySpec> chosen;
        for (const std::string& name : only) {
            for (const auto& p : chosen)
                if (p.name == name) throw UserError("--policy " + name + " is given twice");
            bool found = false;
            for (const auto& p : config.policies)
                if (p.name == name) {
                    chosen.push_back(p);
                    found = true;
                }
            if (!found) throw UserError("--policy " + name + ": not in the policies list of " + config_file);
        }
        config.policies = chosen;
    }
    if (const int cores = usable_cores(); config.blas_threads > cores) {
        // Only speed depends on it, and more OpenBLAS threads than cores spin for minutes.
        logger("train")->warn("train.blas_threads {} is more than the {} core(s) this process may use; using {}",
                              config.blas_threads, cores, cores);
        config.blas_threads = cores;
    }
    learning::FashionMnist data;
    try {
        data = learning::load_fashion_mnist(config.data_dir, config.train_limit, config.test_limit);
    } catch (const learning::DatasetError& e) {
        throw UserError(std::string(e.what()) + " (data.dir in " + config_file + ")");
    }
    logger("train")->info("{} training and {} test samples from {}", data.train.count, data.test.count,
                          config.data_dir);
    // A delayed update as long as the run never applies a gradient.
    if (const std::size_t stale = config.train.staleness; stale > 0) {
        const std::size_t iterations = learning::run_iterations(config.train, data.train.count);
        if (stale >= iterations)
            throw UserError(config_file + ": train.gradient_sync.staleness " + std::to_string(stale) +
                            " is not less than the run's " + std::to_string(iterations) +
                            " iterations, so no gradient would ever be applied (train.epochs, train.batch, "
                            "train.max_iterations and data.train_limit decide them)");
    }
    const run::WorkEstimate work = run::estimate_training(config, data.train.count, data.test.count);
    run::check_work(work, max_work.empty() ? run::kDefaultMaxWorkSeconds : run::parse_max_work(max_work), config_file);
    ProgressLine progress("train", work);
    if (vm->count("force") && out_dir.empty()) throw UserError("--force applies with --out DIR");
    std::optional<sweep::RunDirWriter> out;
    std::optional<run::TrainOutputs> outputs;
    if (!out_dir.empty()) {
        out.emplace(out_dir, vm->count("force") > 0, "train");
        outputs = run::TrainOutputs{out->staging()};
    }
    const run::LearningRunResult result = run::run_learning(config, data, std::cout, outputs, progress.callback());

    std::cout << "\npolicy        final test acc   total cycles        total energy (uJ)\n";
    for (const run::PolicyRun& r : result.policies) {
        char line[160];
        if (r.costed && !r.epochs.empty())
            std::snprintf(line, sizeof line, "%-13s %-16s %-19llu %.1f", r.policy.name.c_str(),
                          percent(r.final_accuracy()).c_str(),
                          static_cast<unsigned long long>(r.epochs.back().cycles_so_far),
                          r.epochs.back().energy_pj_so_far / 1e6);
        else
            std::snprintf(line, sizeof line, "%-13s %-16s %-19s %s", r.policy.name.c_str(),
                          percent(r.final_accuracy()).c_str(), "n/a (no fp32 datapath)", "n/a");
        std::cout << line << '\n';
    }
    if (config.train.distributed()) {
        const config::GradientSyncParams& g = config.gradient_sync;
        std::cout << "\nworkers: " << config.train.workers << " on a " << config::to_string(config.network_topology)
                  << " of " << config.network_link.bandwidth_gb_per_s << " GB/s, " << config.network_link.latency_ns
                  << " ns links; " << config::to_string(g.algorithm) << ", compression "
                  << compression::to_string(g.scheme) << ", staleness " << g.staleness << "\n";
        for (const run::PolicyRun& r : result.policies) {
            if (!r.costed || r.epochs.empty()) continue;
            std::cout << "  " << r.policy.name << ": simulated " << r.epochs.back().simulated_s_so_far << " s; to "
                      << percent(config.target_accuracy) << " test accuracy "
                      << (r.time_to_target_s ? std::to_string(*r.time_to_target_s) + " s"
                                             : std::string("never reached"))
                      << "\n";
        }
    }
    if (!result.speedups.empty()) {
        std::cout << "\nFAST against each fixed policy (ratios of that policy's figure to FAST's):\n";
        for (const run::Speedup& s : result.speedups)
            std::cout << "  " << s.policy << ": cycles " << ratio(s.cycles_ratio) << ", energy "
                      << ratio(s.energy_ratio) << ", cycles to FAST's final accuracy "
                      << (s.to_accuracy_ratio ? ratio(*s.to_accuracy_ratio) : std::string("never reached"))
                      << " (final accuracy " << percent(s.final_accuracy) << ")\n";
    }
    if (out) out->commit(FASTSIM_VERSION);
    if (outputs) {
        std::cout << "\nwrote " << out_dir
                  << "/{accuracy,cost,precision_log,schedule_checks,comparison}.csv and plots/\n";
        if (!result.whole_run_configs.empty()) {
            std::cout << "and, each costed policy's whole run as a fastsim run config on trace.yaml:";
            for (const std::string& name : result.whole_run_configs) std::cout << " " << name;
            std::cout << "\n";
        }
    }
    return kSuccess;
}

}  // namespace fastsim::cli
