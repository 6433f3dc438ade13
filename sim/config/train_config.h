// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "config/params.h"
#include "learning/precision.h"
#include "learning/trainer.h"

namespace fastsim::config {

/// A `fastsim train` config, resolved (docs/fast-training.md, "Config keys").
struct TrainConfig {
    std::string source_file;
    learning::TrainParams train;
    int blas_threads = 1;
    std::string data_dir = "/usr/share/datasets/fashion-mnist";  ///< resolved against the config's folder
    std::size_t train_limit = 0, test_limit = 0;                 ///< 0 = the whole split
    std::vector<learning::PolicySpec> policies;                  ///< run in this order
    BfpParams bfp;
    learning::ClassRounding rounding;
    learning::ScheduleParams schedule;
    NodeConfig node;  ///< the node every policy is costed on
    EnergyParams energy;
    // Workers (docs/fast-training.md, "Workers"): train.workers copies of `node` on train.network.
    GradientSyncParams gradient_sync;
    double target_accuracy = 0.85;  ///< time-to-accuracy is reported against this test accuracy
    TopologyKind network_topology = TopologyKind::ring;
    interconnect::LinkParams network_link{100.0, 1000.0, kDefaultLink.energy_pj_per_bit};
};

/// Reads `path`, applies `key.path=value` overrides, checks every key; ConfigError (file,
/// line, key path) on anything wrong.
TrainConfig load_train_config(const std::string& path, const std::vector<std::string>& overrides = {});

/// A run config (run.mode training_step) of one policy's whole `fastsim train` run on `train`'s
/// node (docs/fast-training.md, "Whole runs as run configs"): `steps` steps of `batch` samples
/// of the network at `trace`, each at the widths of `policy`'s rows of the precision log at
/// `log`. Both paths are written as given, relative to the config's folder.
std::string whole_run_config(const TrainConfig& train, const std::string& trace, const std::string& log,
                             const std::string& policy, std::uint64_t batch, std::uint64_t steps);

/// docs/fast-training.md's key tables (as config::key_tables() for docs/config.md).
std::vector<std::pair<std::string, std::string>> train_key_tables();

}  // namespace fastsim::config
