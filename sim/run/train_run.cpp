// SPDX-License-Identifier: MIT
#include "run/train_run.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "report/svg_chart.h"
#include "common/csv_writer.h"
#include "common/errors.h"
#include "node/training_step.h"
#include "planner/replicas.h"
#include "common/output_files.h"
#include "run/training_step.h"
#include "compression/compressor.h"
#include "costs/compression_cost.h"
#include "run/cluster_step.h"
#include "learning/gemm.h"
#include "config/trace_writer.h"

namespace fastsim::run {
namespace {

/// The widths the node runs: odd widths take their top chunk whole.
int hardware_bits(int bits) { return bits + (bits & 1); }

workload::Layer workload_layer(const learning::GemmLayerShape& s) {
    workload::Layer l;
    l.name = s.name;
    if (s.conv) {
        l.kind = workload::LayerKind::conv;
        l.in_channels = s.in_channels;
        l.in_height = s.in_height;
        l.in_width = s.in_width;
        l.kernel_height = l.kernel_width = s.kernel;
        l.filters = s.filters;
        l.padding = s.padding;
    } else {
        l.kind = workload::LayerKind::fc;
        l.in_features = s.in_features;
        l.out_features = s.out_features;
    }
    return l;
}

std::string column_name(const learning::GemmLayerShape& layer, learning::TensorClass c) {
    return layer.name + "." + std::string(learning::to_string(c));
}

/// A CSV file appended to and flushed row by row, so an interrupted run keeps its rows. Lines
/// come from a CsvWriter (header() and row(), newlines included).
class CsvAppender {
public:
    CsvAppender() = default;
    CsvAppender(const std::string& path, const std::string& header_line) : m_path(path), m_out(path, std::ios::trunc) {
        if (!m_out) throw UserError("cannot write " + path);
        m_out << header_line;
        m_out.flush();
    }
    void row(const std::string& line, bool flush = true) {
        if (!m_out.is_open()) return;
        m_out << line;
        if (flush) m_out.flush();
        if (!m_out) throw UserError("cannot write " + m_path + " (disk full?)");
    }
    void flush() {
        if (m_out.is_open()) m_out.flush();
    }

private:
    std::string m_path;
    std::ofstream m_out;
};

std::string fixed(double v, int decimals) {
    char text[64];
    std::snprintf(text, sizeof text, "%.*f", decimals, v);
    return text;
}

std::string cycles_text(double cycles) {
    char text[64];
    if (cycles >= 1e9)
        std::snprintf(text, sizeof text, "%.3g G", cycles / 1e9);
    else if (cycles >= 1e6)
        std::snprintf(text, sizeof text, "%.3g M", cycles / 1e6);
    else
        std::snprintf(text, sizeof text, "%.0f", cycles);
    return text;
}

void write_plots(const std::string& dir, const LearningRunResult& result) {
    namespace fs = std::filesystem;
    const std::string plots = (fs::path(dir) / "plots").string();
    charts::LineChart accuracy;
    accuracy.title = "Test accuracy per epoch";
    accuracy.x_title = "epoch";
    accuracy.y_title = "test accuracy (%)";
    accuracy.legend_title = "policy";
    accuracy.x_scale = charts::XScale::linear;
    accuracy.y_from_zero = false;
    charts::LineChart versus_cycles = accuracy;
    versus_cycles.title = "Test accuracy against simulated training cycles";
    versus_cycles.x_title = "simulated cycles (cumulative)";
    for (const PolicyRun& run : result.policies) {
        charts::LineSeries by_epoch{run.policy.name, {}}, by_cycles{run.policy.name, {}};
        for (const EpochRecord& e : run.epochs) {
            by_epoch.points.push_back({static_cast<double>(e.epoch), 100 * e.test_accuracy});
            if (run.costed) by_cycles.points.push_back({static_cast<double>(e.cycles_so_far), 100 * e.test_accuracy});
        }
        accuracy.series.push_back(by_epoch);
        if (run.costed) versus_cycles.series.push_back(by_cycles);
    }
    charts::LineChart per_epoch = accuracy;
    per_epoch.title = "Simulated training cycles per epoch";
    per_epoch.y_title = "cycles per epoch";
    per_epoch.y_from_zero = true;
    per_epoch.series.clear();
    for (const PolicyRun& run : result.policies) {
        if (!run.costed) continue;
        charts::LineSeries series{run.policy.name, {}};
        for (const EpochRecord& e : run.epochs)
            series.points.push_back({static_cast<double>(e.epoch), static_cast<double>(e.cycles)});
        per_epoch.series.push_back(series);
    }
    // A policy keeps its colour in every plot, though uncosted ones are missing from some.
    charts::SeriesColours colours;
    const auto coloured = [&](charts::LineChart chart) {
        std::vector<std::string> names;
        for (const charts::LineSeries& series : chart.series) names.push_back(series.name);
        chart.colours = colours.slots(names);
        return charts::render_line_chart(chart);
    };
    const std::string accuracy_svg = coloured(accuracy);
    fastsim::write_file_atomically((fs::path(plots) / "cycles_per_epoch.svg").string(), coloured(per_epoch));
    for (const PolicyRun& run : result.policies) {
        if (run.policy.kind != learning::PolicyKind::adaptive || run.bit_changes.empty()) continue;
        charts::LineChart precision;
        precision.title = "Mantissa width per layer and tensor: " + run.policy.name;
        precision.x_title = "iteration";
        precision.y_title = "mantissa bits";
        precision.legend_title = "layer.tensor";
        precision.x_scale = charts::XScale::linear;
        for (std::size_t l = 0; l < result.layers.size(); ++l)
            for (learning::TensorClass c : learning::kTensorClasses) {
                charts::LineSeries series{column_name(result.layers[l], c), {}};
                int previous = 0;
                for (const auto& [iteration, bits] : run.bit_changes) {
                    const auto x = static_cast<double>(iteration);
                    if (!series.points.empty()) series.points.push_back({x, static_cast<double>(previous)});  // a step
                    previous = bits[l][c];
                    series.points.push_back({x, static_cast<double>(previous)});
                }
                series.points.push_back({static_cast<double>(run.iterations), static_cast<double>(previous)});
                precision.series.push_back(series);
            }
        fastsim::write_file_atomically((fs::path(plots) / ("precision_" + run.policy.name + ".svg")).string(),
                                       coloured(precision));
    }
    fastsim::write_file_atomically((fs::path(plots) / "accuracy.svg").string(), accuracy_svg);
    fastsim::write_file_atomically((fs::path(plots) / "accuracy_vs_cycles.svg").string(), coloured(versus_cycles));
}

}  // namespace

TrainingCostModel::TrainingCostModel(const std::vector<learning::GemmLayerShape>& layers,
                                     const config::NodeConfig& node, const energy::EnergyTable& table,
                                     const learning::ClassRounding& rounding, std::string source_file)
    : m_node(node), m_table(table), m_source_file(std::move(source_file)) {
    m_workload.name = "training network";
    for (const auto& s : layers) m_workload.layers.push_back(workload_layer(s));
    m_rounding.activations = rounding.activations;
    m_rounding.gradients = rounding.gradients;
}

const IterationCost& TrainingCostModel::iteration(std::size_t batch, const std::vector<learning::LayerBits>& bits) {
    std::vector<int> key{static_cast<int>(batch)};
    for (const auto& b : bits)
        for (learning::TensorClass c : learning::kTensorClasses) key.push_back(hardware_bits(b[c]));
    if (auto found = m_memo.find(key); found != m_memo.end()) return found->second;

    std::vector<node::LayerPrecision> precision;
    for (const auto& b : bits) {
        const node::TensorPrecision p{hardware_bits(b.weights), hardware_bits(b.activations),
                                      hardware_bits(b.gradients)};
        precision.push_back({p, p, p});
    }
    node::PhaseCounters total;
    for (const node::StepPhase& phase :
         node::training_step_phases(m_workload, batch, precision, m_rounding, m_node.resolved)) {
        try {
            if (phase.on_vector_unit) {  // a vector-unit layer, a col2im, a grouped conv on the vector unit
                total += node::run_vector_memo(phase.vector, m_node.resolved);
                continue;
            }
            node::PhaseCounters on_array;
            for (const node::PhaseGemm& g : phase.gemms)
                on_array +=
                    node::counted(node::run_phase_memo(g.job, m_node.resolved, m_array_memo), g).repeated(g.count);
            on_array.macs = phase.macs;
            total += on_array;
        } catch (const node::TilingError& e) {  // a node too small for the network: the user's keys
            throw UserError(m_source_file + ": node.sram." +
                            (e.bank() == node::SramBank::exponent ? "exponent" : "mantissa") +
                            "_bank.capacity_kib: layer '" + m_workload.layers[phase.layer].name + "' (" +
                            std::string(node::phase_name(phase)) + ") cannot be tiled on the node: " + e.what() +
                            "; enlarge the bank");
        }
    }
    IterationCost cost;
    cost.cycles = total.cycles;
    cost.macs = total.macs;
    cost.energy_pj =
        counters_energy(total, m_node.resolved, m_node.sram_exponent_kib + m_node.sram_mantissa_kib, 1, m_table)
            .total_pj();
    return m_memo.emplace(std::move(key), cost).first->second;
}

std::string describe_bits(const std::vector<learning::GemmLayerShape>& layers,
                          const std::vector<learning::LayerBits>& bits) {
    std::string out;
    for (std::size_t l = 0; l < bits.size() && l < layers.size(); ++l) {
        if (!out.empty()) out += " | ";
        if (bits[l].weights == 0) {
            out += layers[l].name + " fp32";
            continue;
        }
        out += layers[l].name + " w" + std::to_string(bits[l].weights) + " a" + std::to_string(bits[l].activations) +
               " g" + std::to_string(bits[l].gradients);
    }
    return out;
}

std::vector<Speedup> fast_speedups(const std::vector<PolicyRun>& runs) {
    const PolicyRun* fast = nullptr;
    for (const auto& r : runs)
        if (r.policy.kind == learning::PolicyKind::adaptive && r.costed && !r.epochs.empty()) fast = &r;
    std::vector<Speedup> out;
    if (fast == nullptr) return out;
    const EpochRecord& fast_end = fast->epochs.back();
    for (const auto& r : runs) {
        if (r.policy.kind != learning::PolicyKind::fixed || !r.costed || r.epochs.empty()) continue;
        Speedup s;
        s.policy = r.policy.name;
        s.final_accuracy = r.final_accuracy();
        s.cycles_ratio =
            static_cast<double>(r.epochs.back().cycles_so_far) / static_cast<double>(fast_end.cycles_so_far);
        s.energy_ratio = r.epochs.back().energy_pj_so_far / fast_end.energy_pj_so_far;
        for (const EpochRecord& e : r.epochs)
            if (e.test_accuracy >= fast->final_accuracy()) {
                s.to_accuracy_ratio =
                    static_cast<double>(e.cycles_so_far) / static_cast<double>(fast_end.cycles_so_far);
                break;
            }
        out.push_back(s);
    }
    return out;
}

WorkerTimeModel::WorkerTimeModel(const config::TrainConfig& config) : m_config(config) {
    const std::size_t k = config.train.workers;
    switch (config.network_topology) {
    case config::TopologyKind::fully_connected:
        m_topology =
            std::make_unique<interconnect::Topology>(interconnect::Topology::fully_connected(k, config.network_link));
        break;
    case config::TopologyKind::switch_star:
        m_topology =
            std::make_unique<interconnect::Topology>(interconnect::Topology::switch_star(k, config.network_link));
        break;
    case config::TopologyKind::ring:
        m_topology = std::make_unique<interconnect::Topology>(interconnect::Topology::ring(k, config.network_link));
        break;
    case config::TopologyKind::torus2d:
    case config::TopologyKind::torus3d:
    case config::TopologyKind::tree:  // refused by the config reader (train_config.cpp)
        throw std::logic_error("WorkerTimeModel: network.topology must be ring, fully_connected or switch");
    }
    m_chooser = std::make_unique<interconnect::AllReduceChooser>(
        *m_topology, config::forced_all_reduce(config.gradient_sync.algorithm));
    // Every layer's fp32 gradient (weights and bias) in the cluster's gradient buckets
    // (GradientBuckets: backward order, train.gradient_sync.bucket_mib), every worker a rank; the
    // buckets all start after the compute (no overlap with the backward pass). PowerSGD's factors
    // of each weight matrix (out x fan_in) are fused alike; a bias is a column.
    std::vector<NodeId> workers;
    for (std::size_t w = 0; w < k; ++w) workers.emplace_back(w);
    learning::Network network(config.train.network, config.train.seed);
    const std::vector<learning::TensorShape> tensors = learning::gradient_tensors(network);
    constexpr double kFp32Bytes = 4;
    planner::GradientBuckets buckets(config.gradient_sync.bucket_bytes(), kFp32Bytes);
    const auto job = [&](const planner::ReplicaSet& bucket) {
        return planner::SyncJob{bucket.nodes, bucket.elements, static_cast<std::uint64_t>(kFp32Bytes) * bucket.elements,
                                bucket.factor_rows, bucket.factor_cols};
    };
    // gradient_tensors lists each layer's weight, then its bias: a layer's gradients join together.
    for (std::size_t end = tensors.size(); end >= 2; end -= 2) {
        const learning::TensorShape &w = tensors[end - 2], &b = tensors[end - 1];
        for (const planner::ReplicaSet& bucket :
             buckets.add({{workers, w.size() + b.size(), w.rows + b.rows, w.cols + b.cols}}))
            m_jobs.push_back(job(bucket));
    }
    for (const planner::ReplicaSet& bucket : buckets.flush()) m_jobs.push_back(job(bucket));
}

std::pair<double, double> WorkerTimeModel::exchange_s(double density) {
    if (const auto it = m_exchange.find(density); it != m_exchange.end()) return it->second;
    config::GradientSyncParams sync = m_config.gradient_sync;
    sync.density = density;
    // The workers' compression work on the config's node (an fp32 gradient, 8-bit passes).
    costs::NodeType type;
    type.node = m_config.node.resolved;
    type.precision = {8, 8, 8};
    type.energy = m_config.energy.resolved;
    const auto sync_model = make_gradient_sync(*m_chooser, sync, [type](NodeId, const compression::Work& work) {
        return costs::compression_cost(type, work).time;
    });
    sync_model->begin_step();
    const std::vector<double> ready(m_config.train.workers, 0.0);
    double end = 0;
    for (const auto& job_ends : sync_model->finish_times(m_jobs, ready))
        for (const double e : job_ends) end = std::max(end, e);
    return m_exchange.emplace(density, std::pair{end, sync_model->busiest_link_s()}).first->second;
}

double WorkerTimeModel::iteration_s(double compute_s, double density) {
    const auto [exchange, busiest] = exchange_s(density);
    const std::size_t d = m_config.train.staleness;
    if (d == 0) return compute_s + exchange;
    return std::max({compute_s, busiest, (compute_s + exchange) / static_cast<double>(d + 1)});
}

namespace {

/// One epoch of one policy: a row of accuracy.csv, cost.csv and time.csv.
struct EpochRow {
    const std::string& policy;
    const EpochRecord& epoch;
};

/// One iteration of one policy: a row of precision_log.csv.
struct IterationRow {
    const std::string& policy;
    const learning::IterationRecord& iteration;
};

/// One schedule check: a row of schedule_checks.csv.
struct CheckRow {
    const std::string& policy;
    std::size_t iteration;
    const std::string& layer;
    const learning::ScheduleCheck& check;
};

CsvCell policy_cell(const std::string& policy) { return CsvCell::text(policy); }

/// accuracy.csv: losses and accuracies (fractions) per epoch, and its wall-clock seconds.
const CsvWriter<EpochRow>& accuracy_table() {
    static const CsvWriter<EpochRow> table({
        {"policy", [](const EpochRow& r) { return policy_cell(r.policy); }},
        {"epoch", [](const EpochRow& r) { return CsvCell::integer(r.epoch.epoch); }},
        {"train_loss", [](const EpochRow& r) { return CsvCell::number(r.epoch.train_loss); }},
        {"train_accuracy", [](const EpochRow& r) { return CsvCell::number(r.epoch.train_accuracy); }},
        {"test_loss", [](const EpochRow& r) { return CsvCell::number(r.epoch.test_loss); }},
        {"test_accuracy", [](const EpochRow& r) { return CsvCell::number(r.epoch.test_accuracy); }},
        // Wall-clock seconds to the millisecond: a measurement, not a result.
        {"wall_s", [](const EpochRow& r) { return CsvCell::text(fixed(r.epoch.wall_seconds, 3)); }},
    });
    return table;
}

/// cost.csv: simulated cycles and energy (µJ) of each epoch and since the start.
const CsvWriter<EpochRow>& cost_table() {
    static const CsvWriter<EpochRow> table({
        {"policy", [](const EpochRow& r) { return policy_cell(r.policy); }},
        {"epoch", [](const EpochRow& r) { return CsvCell::integer(r.epoch.epoch); }},
        {"cycles", [](const EpochRow& r) { return CsvCell::integer(r.epoch.cycles); }},
        {"energy_uj", [](const EpochRow& r) { return CsvCell::number(r.epoch.energy_pj / 1e6); }},
        {"cycles_so_far", [](const EpochRow& r) { return CsvCell::integer(r.epoch.cycles_so_far); }},
        {"energy_so_far_uj", [](const EpochRow& r) { return CsvCell::number(r.epoch.energy_pj_so_far / 1e6); }},
    });
    return table;
}

/// time.csv (with workers): test accuracy and simulated seconds per epoch and since the start.
const CsvWriter<EpochRow>& time_table() {
    static const CsvWriter<EpochRow> table({
        {"policy", [](const EpochRow& r) { return policy_cell(r.policy); }},
        {"epoch", [](const EpochRow& r) { return CsvCell::integer(r.epoch.epoch); }},
        {"test_accuracy", [](const EpochRow& r) { return CsvCell::number(r.epoch.test_accuracy); }},
        {"simulated_s", [](const EpochRow& r) { return CsvCell::number(r.epoch.simulated_s); }},
        {"simulated_s_so_far", [](const EpochRow& r) { return CsvCell::number(r.epoch.simulated_s_so_far); }},
    });
    return table;
}

/// precision_log.csv: the widths (bits) in force at each iteration, a column per layer and
/// tensor class.
CsvWriter<IterationRow> precision_table(const std::vector<learning::GemmLayerShape>& layers) {
    std::vector<CsvColumn<IterationRow>> columns{
        {"policy", [](const IterationRow& r) { return policy_cell(r.policy); }},
        {"iteration", [](const IterationRow& r) { return CsvCell::integer(r.iteration.iteration); }},
        {"epoch", [](const IterationRow& r) { return CsvCell::integer(r.iteration.epoch + 1); }},
    };
    for (std::size_t l = 0; l < layers.size(); ++l)
        for (learning::TensorClass c : learning::kTensorClasses)
            columns.push_back({column_name(layers[l], c) + "_bits",
                               [l, c](const IterationRow& r) { return CsvCell::integer((*r.iteration.bits)[l][c]); }});
    return CsvWriter<IterationRow>(std::move(columns));
}

/// schedule_checks.csv: each check of FAST's schedule, r(X) against its threshold.
const CsvWriter<CheckRow>& checks_table() {
    static const CsvWriter<CheckRow> table({
        {"policy", [](const CheckRow& r) { return policy_cell(r.policy); }},
        {"iteration", [](const CheckRow& r) { return CsvCell::integer(r.iteration); }},
        {"layer", [](const CheckRow& r) { return CsvCell::text(r.layer); }},
        {"tensor", [](const CheckRow& r) { return CsvCell::text(learning::to_string(r.check.tensor)); }},
        {"bits", [](const CheckRow& r) { return CsvCell::integer(r.check.bits); }},
        {"r", [](const CheckRow& r) { return CsvCell::number(r.check.r); }},
        {"threshold", [](const CheckRow& r) { return CsvCell::number(r.check.threshold); }},
        {"raised", [](const CheckRow& r) { return CsvCell::integer(r.check.raised ? 1 : 0); }},
    });
    return table;
}

/// comparison.csv: per policy its final accuracy, total cycles and energy (µJ), and FAST's
/// speedups over it (empty when not costed or not compared).
std::string comparison_csv(const LearningRunResult& result) {
    const auto speedup_of = [&](const PolicyRun& r) -> const Speedup* {
        for (const Speedup& s : result.speedups)
            if (s.policy == r.policy.name) return &s;
        return nullptr;
    };
    const auto totals = [](const PolicyRun& r) { return r.costed && !r.epochs.empty(); };
    const CsvWriter<PolicyRun> table({
        {"policy", [](const PolicyRun& r) { return policy_cell(r.policy.name); }},
        {"final_test_accuracy", [](const PolicyRun& r) { return CsvCell::number(r.final_accuracy()); }},
        {"total_cycles",
         [&](const PolicyRun& r) {
             return totals(r) ? CsvCell::integer(r.epochs.back().cycles_so_far) : CsvCell::empty();
         }},
        {"total_energy_uj",
         [&](const PolicyRun& r) {
             return totals(r) ? CsvCell::number(r.epochs.back().energy_pj_so_far / 1e6) : CsvCell::empty();
         }},
        {"fast_speedup_cycles",
         [&](const PolicyRun& r) {
             const Speedup* s = speedup_of(r);
             return s ? CsvCell::number(s->cycles_ratio) : CsvCell::empty();
         }},
        {"fast_energy_ratio",
         [&](const PolicyRun& r) {
             const Speedup* s = speedup_of(r);
             return s ? CsvCell::number(s->energy_ratio) : CsvCell::empty();
         }},
        {"fast_speedup_to_fast_accuracy",
         [&](const PolicyRun& r) {
             const Speedup* s = speedup_of(r);
             return s && s->to_accuracy_ratio ? CsvCell::number(*s->to_accuracy_ratio) : CsvCell::empty();
         }},
    });
    return table.table(result.policies);
}

/// trace.yaml (the network's GEMM layers as a fastsim trace) and, per costed policy whose
/// widths are all ones the node takes (2, 4, 6, 8 bits), whole_run_<policy>.yaml: its whole run
/// as a run config (docs/fast-training.md, "Whole runs as run configs"). None with workers: their
/// iterations also cost the exchange, which a one-node run config does not.
void write_whole_run_configs(const config::TrainConfig& config, LearningRunResult& result, const std::string& dir) {
    namespace fs = std::filesystem;
    if (config.train.distributed()) return;
    workload::Workload network;
    network.name = std::string(learning::to_string(config.train.network));
    network.shape_check = workload::ShapeCheck::off;  // pooling, uncosted here, is left out
    for (const auto& s : result.layers) network.layers.push_back(workload_layer(s));
    fastsim::write_file_atomically((fs::path(dir) / "trace.yaml").string(), config::trace_yaml(network));
    for (const PolicyRun& run : result.policies) {
        if (!run.costed || run.iterations == 0) continue;
        const bool node_widths = std::all_of(run.bit_changes.begin(), run.bit_changes.end(), [](const auto& change) {
            return std::all_of(change.second.begin(), change.second.end(), [](const learning::LayerBits& b) {
                return std::all_of(learning::kTensorClasses.begin(), learning::kTensorClasses.end(),
                                   [&](learning::TensorClass c) { return b[c] > 0 && b[c] % 2 == 0 && b[c] <= 8; });
            });
        });
        if (!node_widths) continue;
        const std::string name = "whole_run_" + run.policy.name + ".yaml";
        const std::string header =
            "# The whole run of policy " + run.policy.name + " of `fastsim train " + config.source_file +
            "` as a fastsim run config:\n# each of its " + std::to_string(run.iterations) +
            " iterations one training step at the widths precision_log.csv records.\n#   fastsim run " + name +
            "   (its whole run: the cycles and energy of cost.csv), or as the base of a\n#   fastsim explore "
            "space (docs/explore.md)\n";
        fastsim::write_file_atomically(
            (fs::path(dir) / name).string(),
            header + config::whole_run_config(config, "trace.yaml", "precision_log.csv", run.policy.name,
                                              config.train.batch, run.iterations));
        result.whole_run_configs.push_back(name);
    }
}

}  // namespace

LearningRunResult run_learning(const config::TrainConfig& config, const learning::FashionMnist& data,
                               std::ostream& progress, const std::optional<TrainOutputs>& outputs,
                               const WorkProgress& work) {
    namespace fs = std::filesystem;
    learning::set_blas_threads(config.blas_threads);
    LearningRunResult result;
    result.layers = learning::Network(config.train.network, config.train.seed).gemm_shapes();
    TrainingCostModel cost(result.layers, config.node, config.energy.resolved, config.rounding, config.source_file);
    // A node that cannot tile the network even at the narrowest widths is refused before training.
    if (std::any_of(config.policies.begin(), config.policies.end(),
                    [](const learning::PolicySpec& p) { return p.kind != learning::PolicyKind::fp32; }))
        (void)cost.iteration(std::max<std::size_t>(1, config.train.batch / config.train.workers),
                             std::vector<learning::LayerBits>(result.layers.size(), learning::LayerBits{2, 2, 2}));

    CsvAppender accuracy_csv, cost_csv, precision_csv, checks_csv, time_csv;
    const CsvWriter<IterationRow> precisions = precision_table(result.layers);
    if (outputs) {
        std::error_code ec;
        fs::create_directories(outputs->dir, ec);
        if (ec) throw UserError("cannot create output folder " + outputs->dir + ": " + ec.message());
        const auto path = [&](const char* name) { return (fs::path(outputs->dir) / name).string(); };
        accuracy_csv = CsvAppender(path("accuracy.csv"), accuracy_table().header());
        cost_csv = CsvAppender(path("cost.csv"), cost_table().header());
        precision_csv = CsvAppender(path("precision_log.csv"), precisions.header());
        checks_csv = CsvAppender(path("schedule_checks.csv"), checks_table().header());
        if (config.train.distributed()) time_csv = CsvAppender(path("time.csv"), time_table().header());
    }

    const double batches_per_epoch = std::ceil(static_cast<double>(data.train.count) /
                                               static_cast<double>(std::max<std::size_t>(1, config.train.batch)));
    double iterations_per_policy = batches_per_epoch * static_cast<double>(config.train.epochs);
    if (config.train.max_iterations > 0)
        iterations_per_policy = std::min(iterations_per_policy, static_cast<double>(config.train.max_iterations));
    const double all_iterations = std::max(1.0, iterations_per_policy * static_cast<double>(config.policies.size()));
    double policies_done = 0;
    for (const learning::PolicySpec& policy : config.policies) {
        PolicyRun run;
        run.policy = policy;
        run.costed = policy.kind != learning::PolicyKind::fp32;
        learning::Trainer trainer(config.train, policy, data.train);
        std::optional<WorkerTimeModel> workers;
        if (config.train.distributed() && run.costed) workers.emplace(config);
        std::uint64_t cycles_so_far = 0;
        double energy_so_far = 0, simulated_so_far = 0;
        while (!trainer.finished()) {
            const auto started = std::chrono::steady_clock::now();
            std::uint64_t epoch_cycles = 0;
            double epoch_energy = 0, epoch_simulated = 0;
            const learning::EpochResult epoch = trainer.train_epoch([&](const learning::IterationRecord& it) {
                if (run.bit_changes.empty() || run.bit_changes.back().second != *it.bits)
                    run.bit_changes.emplace_back(it.iteration, *it.bits);
                run.iterations = it.iteration + 1;
                if (!std::isfinite(it.loss))
                    throw UserError(config.source_file + ": train.learning_rate: training diverged under policy '" +
                                    policy.name + "': the loss is " + fastsim::format_number(it.loss) +
                                    " at iteration " + std::to_string(it.iteration + 1) + " (epoch " +
                                    std::to_string(it.epoch + 1) + "); lower train.learning_rate (" +
                                    fastsim::format_number(config.train.learning_rate) + ")");
                if (work)
                    work((policies_done * iterations_per_policy + static_cast<double>(run.iterations)) /
                         all_iterations);
                if (run.costed) {
                    // With workers: each worker's shard on its node, then the exchange.
                    const IterationCost& c = cost.iteration(workers ? it.shard : it.batch, *it.bits);
                    epoch_cycles += c.cycles;
                    epoch_energy += c.energy_pj;
                    if (workers) {
                        const double compute_s = static_cast<double>(c.cycles) / (config.node.clock_mhz * 1e6);
                        const double density =
                            compression::compressor_of(config.train.compression.scheme)
                                .density(config.train.compression, it.iteration, trainer.iterations_per_epoch());
                        epoch_simulated += workers->iteration_s(compute_s, density);
                    }
                    precision_csv.row(precisions.row(IterationRow{policy.name, it}), false);
                }
                for (const learning::ScheduleCheck& check : *it.checks)
                    checks_csv.row(
                        checks_table().row(CheckRow{policy.name, it.iteration, result.layers[check.layer].name, check}),
                        false);
            });
            precision_csv.flush();
            checks_csv.flush();
            const learning::Evaluation test = trainer.evaluate(data.test);
            cycles_so_far += epoch_cycles;
            energy_so_far += epoch_energy;
            simulated_so_far += epoch_simulated;
            EpochRecord e;
            e.epoch = trainer.epoch();
            e.train_loss = epoch.mean_loss;
            e.train_accuracy = epoch.train_accuracy;
            e.test_loss = test.loss;
            e.test_accuracy = test.accuracy;
            e.cycles = epoch_cycles;
            e.cycles_so_far = cycles_so_far;
            e.energy_pj = epoch_energy;
            e.energy_pj_so_far = energy_so_far;
            e.wall_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
            e.bits = trainer.bits();
            e.simulated_s = epoch_simulated;
            e.simulated_s_so_far = simulated_so_far;
            if (workers && !run.time_to_target_s && e.test_accuracy >= config.target_accuracy)
                run.time_to_target_s = simulated_so_far;
            run.epochs.push_back(e);

            progress << "[" << policy.name << "] epoch " << e.epoch << "/" << config.train.epochs << "  loss "
                     << fixed(e.train_loss, 4) << "  train " << fixed(100 * e.train_accuracy, 2) << "%  test "
                     << fixed(100 * e.test_accuracy, 2) << "%  " << describe_bits(result.layers, e.bits) << "  cycles "
                     << (run.costed ? cycles_text(static_cast<double>(cycles_so_far)) : std::string("n/a (fp32)"))
                     << (workers ? "  simulated " + fixed(simulated_so_far, 3) + " s" : std::string()) << "  ("
                     << fixed(e.wall_seconds, 1) << " s)" << std::endl;
            const EpochRow row{policy.name, e};
            accuracy_csv.row(accuracy_table().row(row));
            if (workers) time_csv.row(time_table().row(row));
            if (run.costed) cost_csv.row(cost_table().row(row));
        }
        result.policies.push_back(std::move(run));
        ++policies_done;
    }
    result.speedups = fast_speedups(result.policies);

    if (outputs) {
        fastsim::write_file_atomically((fs::path(outputs->dir) / "comparison.csv").string(), comparison_csv(result));
        write_plots(outputs->dir, result);
        write_whole_run_configs(config, result, outputs->dir);
    }
    return result;
}

}  // namespace fastsim::run
