// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "config/train_config.h"
#include "interconnect/collective_cost.h"
#include "interconnect/topology.h"
#include "planner/gradient_sync.h"
#include "energy/energy.h"
#include "node/node_model.h"
#include "learning/dataset.h"
#include "learning/trainer.h"
#include "run/work.h"
#include "workload/layer.h"

namespace fastsim::run {

/// What one training iteration costs on the node.
struct IterationCost {
    std::uint64_t cycles = 0;
    double energy_pj = 0;
    std::uint64_t macs = 0;
};

/// Costs training iterations of a network on the configured FAST node: forward, backward-
/// data and weight-gradient GEMMs of every layer at the widths in force, through the
/// memoised tile path (node::run_phase_memo), energy from the action counts. Iterations with
/// the same batch and widths cost the same, so each distinct one is simulated once.
class TrainingCostModel {
public:
    /// `source_file` (the train config) names the node's keys in errors.
    TrainingCostModel(const std::vector<learning::GemmLayerShape>& layers, const config::NodeConfig& node,
                      const energy::EnergyTable& table, const learning::ClassRounding& rounding,
                      std::string source_file = {});

    /// Widths 0 (fp32) have no BFP datapath on the node: callers must not ask for them.
    /// An odd width runs as the next even one (the fMAC works on whole 2-bit chunks). UserError
    /// naming node.sram.<bank>.capacity_kib if a layer cannot be tiled on the node at these widths.
    const IterationCost& iteration(std::size_t batch, const std::vector<learning::LayerBits>& bits);
    [[nodiscard]] std::size_t distinct_iterations() const { return m_memo.size(); }
    [[nodiscard]] const workload::Workload& workload() const { return m_workload; }

private:
    workload::Workload m_workload;
    config::NodeConfig m_node;
    energy::EnergyTable m_table;
    node::TensorRounding m_rounding;
    node::ArrayTimingMemo m_array_memo;
    std::map<std::vector<int>, IterationCost> m_memo;
    std::string m_source_file;
};

/// One epoch of one policy.
struct EpochRecord {
    std::size_t epoch = 0;  ///< from 1
    double train_loss = 0, train_accuracy = 0, test_loss = 0, test_accuracy = 0;
    std::uint64_t cycles = 0, cycles_so_far = 0;  ///< simulated, this epoch / since the start
    double energy_pj = 0, energy_pj_so_far = 0;
    double wall_seconds = 0;
    std::vector<learning::LayerBits> bits;  ///< in force at the end of the epoch
    /// With workers: simulated seconds of the workers' compute and exchange, this epoch / so far.
    double simulated_s = 0, simulated_s_so_far = 0;
};

/// The iteration time of train.workers copies of the node on train.network
/// (docs/fast-training.md, "Workers"): a worker's shard on the node model, then the
/// gradients' exchange as the cluster's synchronisation model times it.
class WorkerTimeModel {
public:
    explicit WorkerTimeModel(const config::TrainConfig& config);
    /// Seconds of one iteration whose shard takes `compute_s`, with a sparse scheme's
    /// `density` in force (DGC's warm-up changes it).
    double iteration_s(double compute_s, double density);
    /// The exchange alone, every worker starting at once (and its busiest link's seconds).
    std::pair<double, double> exchange_s(double density);

private:
    const config::TrainConfig& m_config;
    std::unique_ptr<interconnect::Topology> m_topology;
    std::unique_ptr<interconnect::AllReduceChooser> m_chooser;
    std::vector<planner::SyncJob> m_jobs;
    std::map<double, std::pair<double, double>> m_exchange;  ///< by density
};

struct PolicyRun {
    learning::PolicySpec policy;
    /// With workers, the simulated seconds until the test accuracy first reached
    /// train.target_accuracy (empty: never, or the policy is not costed).
    std::optional<double> time_to_target_s;
    bool costed = false;  ///< false for fp32: the FAST node has no fp32 datapath
    std::vector<EpochRecord> epochs;
    /// (first iteration, widths) each time the widths in force change, from iteration 0.
    std::vector<std::pair<std::size_t, std::vector<learning::LayerBits>>> bit_changes;
    std::size_t iterations = 0;
    [[nodiscard]] double final_accuracy() const { return epochs.empty() ? 0 : epochs.back().test_accuracy; }
};

/// The speedup of FAST over one fixed-precision policy.
struct Speedup {
    std::string policy;
    double final_accuracy = 0;
    double cycles_ratio = 0;  ///< its total cycles / FAST's (same epochs)
    double energy_ratio = 0;
    /// Cycles it needs to first reach FAST's final accuracy / FAST's total cycles; empty if it never does.
    std::optional<double> to_accuracy_ratio;
};

struct LearningRunResult {
    std::vector<learning::GemmLayerShape> layers;
    std::vector<PolicyRun> policies;
    std::vector<Speedup> speedups;  ///< when FAST and fixed policies both ran
    /// The whole_run_<policy>.yaml run configs written beside trace.yaml (file names), with outputs.
    std::vector<std::string> whole_run_configs;
};

/// Where a training run writes as it goes (docs/fast-training.md, "Output files"): CSVs
/// are appended and flushed at the end of every epoch, so an interrupted run keeps every
/// epoch it finished.
struct TrainOutputs {
    std::string dir;
};

/// Trains every policy of `config` in turn on `data`, costs each iteration on the node,
/// prints a line per epoch to `progress`, and with `outputs` writes the CSVs as it goes
/// and the comparison and plots at the end.
/// `work` hears the fraction of all iterations done after each iteration.
LearningRunResult run_learning(const config::TrainConfig& config, const learning::FashionMnist& data,
                               std::ostream& progress, const std::optional<TrainOutputs>& outputs = std::nullopt,
                               const WorkProgress& work = {});

/// The FAST-over-fixed comparison of finished policy runs (empty without a FAST run).
std::vector<Speedup> fast_speedups(const std::vector<PolicyRun>& runs);

/// Compact widths "fc1 w6 a4 g4 | fc2 ..." for progress lines.
std::string describe_bits(const std::vector<learning::GemmLayerShape>& layers,
                          const std::vector<learning::LayerBits>& bits);

}  // namespace fastsim::run
