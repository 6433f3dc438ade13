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
#include "common/errors.h"
#include "node/training_step.h"
#include "common/output_files.h"
#include "run/training_step.h"
#include "compression/compressor.h"
#include "costs/compression_cost.h"
#include "run/cluster_step.h"
#include "learning/gemm.h"

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

/// A CSV file appended to and flushed row by row, so an interrupted run keeps its rows.
class CsvAppender {
public:
    CsvAppender() = default;
    CsvAppender(const std::string& path, const std::string& header) : m_path(path), m_out(path, std::ios::trunc) {
        if (!m_out) throw UserError("cannot write " + path);
        m_out << header << '\n';
        m_out.flush();
    }
    void row(const std::string& line, bool flush = true) {
        if (!m_out.is_open()) return;
        m_out << line << '\n';
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
    fastsim::write_file_atomically((fs::path(plots) / "cycles_per_epoch.svg").string(),
                                   charts::render_line_chart(per_epoch));
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
                                       charts::render_line_chart(precision));
    }
    fastsim::write_file_atomically((fs::path(plots) / "accuracy.svg").string(), charts::render_line_chart(accuracy));
    fastsim::write_file_atomically((fs::path(plots) / "accuracy_vs_cycles.svg").string(),
                                   charts::render_line_chart(versus_cycles));
}

}  // namespace

TrainingCostModel::TrainingCostModel(const std::vector<learning::GemmLayerShape>& layers,
                                     const config::NodeConfig& node, const energy::EnergyTable& table,
                                     const learning::ClassRounding& rounding)
    : m_node(node), m_table(table) {
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
    for (const node::StepPhase& phase : node::training_step_phases(m_workload, batch, precision, m_rounding))
        total += node::run_phase_memo(phase.job, m_node.resolved, m_array_memo).repeated(phase.count);
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
    case config::TopologyKind::tree:  // refused by the config reader (train_config.cpp)
        throw std::logic_error("WorkerTimeModel: network.topology must be ring, fully_connected or switch");
    }
    m_chooser = std::make_unique<interconnect::AllReduceChooser>(
        *m_topology, config::forced_all_reduce(config.gradient_sync.algorithm));
    // Every parameter tensor's fp32 gradient fused into one bucket (as PyTorch DDP's 25 MB
    // buckets hold either network's whole gradient), every worker a rank. PowerSGD's factors
    // of each weight matrix (out x fan_in) are fused alike; a bias is a column.
    planner::SyncJob bucket;
    for (std::size_t w = 0; w < k; ++w) bucket.ranks.emplace_back(w);
    learning::Network network(config.train.network, config.train.seed);
    for (const learning::TensorShape& t : learning::gradient_tensors(network)) {
        bucket.elements += t.size();
        bucket.factor_rows += t.rows;
        bucket.factor_cols += t.cols;
    }
    bucket.bytes = 4 * bucket.elements;
    m_jobs.push_back(std::move(bucket));
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

LearningRunResult run_learning(const config::TrainConfig& config, const learning::FashionMnist& data,
                               std::ostream& progress, const std::optional<TrainOutputs>& outputs,
                               const WorkProgress& work) {
    namespace fs = std::filesystem;
    learning::set_blas_threads(config.blas_threads);
    LearningRunResult result;
    result.layers = learning::Network(config.train.network, config.train.seed).gemm_shapes();
    TrainingCostModel cost(result.layers, config.node, config.energy.resolved, config.rounding);

    CsvAppender accuracy_csv, cost_csv, precision_csv, checks_csv, time_csv;
    if (outputs) {
        std::error_code ec;
        fs::create_directories(outputs->dir, ec);
        if (ec) throw UserError("cannot create output folder " + outputs->dir + ": " + ec.message());
        const auto path = [&](const char* name) { return (fs::path(outputs->dir) / name).string(); };
        accuracy_csv =
            CsvAppender(path("accuracy.csv"), "policy,epoch,train_loss,train_accuracy,test_loss,test_accuracy,wall_s");
        cost_csv = CsvAppender(path("cost.csv"), "policy,epoch,cycles,energy_uj,cycles_so_far,energy_so_far_uj");
        std::string header = "policy,iteration,epoch";
        for (const auto& layer : result.layers)
            for (learning::TensorClass c : learning::kTensorClasses) header += "," + column_name(layer, c) + "_bits";
        precision_csv = CsvAppender(path("precision_log.csv"), header);
        checks_csv = CsvAppender(path("schedule_checks.csv"), "policy,iteration,layer,tensor,bits,r,threshold,raised");
        if (config.train.distributed())
            time_csv = CsvAppender(path("time.csv"), "policy,epoch,test_accuracy,simulated_s,simulated_s_so_far");
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
                    std::string line =
                        policy.name + "," + std::to_string(it.iteration) + "," + std::to_string(it.epoch + 1);
                    for (const auto& b : *it.bits)
                        for (learning::TensorClass cls : learning::kTensorClasses) line += "," + std::to_string(b[cls]);
                    precision_csv.row(line, false);
                }
                for (const learning::ScheduleCheck& check : *it.checks)
                    checks_csv.row(policy.name + "," + std::to_string(it.iteration) + "," +
                                       result.layers[check.layer].name + "," +
                                       std::string(learning::to_string(check.tensor)) + "," +
                                       std::to_string(check.bits) + "," + fastsim::format_number(check.r) + "," +
                                       fastsim::format_number(check.threshold) + "," + (check.raised ? "1" : "0"),
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
            accuracy_csv.row(policy.name + "," + std::to_string(e.epoch) + "," + fastsim::format_number(e.train_loss) +
                             "," + fastsim::format_number(e.train_accuracy) + "," +
                             fastsim::format_number(e.test_loss) + "," + fastsim::format_number(e.test_accuracy) + "," +
                             fixed(e.wall_seconds, 3));
            if (workers)
                time_csv.row(policy.name + "," + std::to_string(e.epoch) + "," +
                             fastsim::format_number(e.test_accuracy) + "," + fastsim::format_number(e.simulated_s) +
                             "," + fastsim::format_number(e.simulated_s_so_far));
            if (run.costed)
                cost_csv.row(policy.name + "," + std::to_string(e.epoch) + "," + std::to_string(e.cycles) + "," +
                             fastsim::format_number(e.energy_pj / 1e6) + "," + std::to_string(e.cycles_so_far) + "," +
                             fastsim::format_number(e.energy_pj_so_far / 1e6));
        }
        result.policies.push_back(std::move(run));
        ++policies_done;
    }
    result.speedups = fast_speedups(result.policies);

    if (outputs) {
        std::ostringstream table;
        table << "policy,final_test_accuracy,total_cycles,total_energy_uj,fast_speedup_cycles,fast_energy_ratio,"
                 "fast_speedup_to_fast_accuracy\n";
        for (const PolicyRun& r : result.policies) {
            table << r.policy.name << "," << fastsim::format_number(r.final_accuracy()) << ",";
            if (r.costed && !r.epochs.empty())
                table << r.epochs.back().cycles_so_far << ","
                      << fastsim::format_number(r.epochs.back().energy_pj_so_far / 1e6);
            else
                table << ",";
            std::string speedup = ",,";
            for (const Speedup& s : result.speedups)
                if (s.policy == r.policy.name)
                    speedup = fastsim::format_number(s.cycles_ratio) + "," + fastsim::format_number(s.energy_ratio) +
                              "," +
                              (s.to_accuracy_ratio ? fastsim::format_number(*s.to_accuracy_ratio) : std::string());
            table << "," << speedup << "\n";
        }
        fastsim::write_file_atomically((fs::path(outputs->dir) / "comparison.csv").string(), table.str());
        write_plots(outputs->dir, result);
    }
    return result;
}

}  // namespace fastsim::run
