// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "compression/compression.h"
#include "learning/dataset.h"
#include "learning/gemm.h"
#include "learning/gradient_exchange.h"
#include "learning/network.h"
#include "learning/precision.h"

#include "common/enum_names.h"

namespace fastsim::learning {

enum class LrSchedule : std::uint8_t {
    constant,  ///< learning_rate throughout
    cosine     ///< learning_rate * (1 + cos(pi * i / I)) / 2 over all I iterations
};
const EnumNames<LrSchedule, 2>& enum_names(LrSchedule);
inline std::string_view to_string(LrSchedule schedule) { return name_of(schedule); }

/// Hyper-parameters of one training run (docs/fast-training.md, "Config").
struct TrainParams {
    NetworkKind network = NetworkKind::mlp;
    std::size_t epochs = 10;
    std::size_t batch = 64;
    double learning_rate = 0.05;
    double momentum = 0.9;
    double weight_decay = 5e-4;  ///< L2 on weights (not biases), added to the gradient
    LrSchedule lr_schedule = LrSchedule::cosine;
    std::uint64_t seed = 1;  ///< weights, shuffling and every LFSR derive from it
    GemmPath path = GemmPath::fast;
    std::size_t max_iterations = 0;  ///< stop after this many mini-batches in all (0 = every epoch)
    // Data-parallel workers (docs/fast-training.md, "Workers"): each mini-batch split into
    // `workers` shards, their gradients compressed and averaged, applied `staleness` later.
    std::size_t workers = 1;
    compression::Params compression;
    std::size_t staleness = 0;
    /// Whether this is plain single-process training (the path without workers).
    [[nodiscard]] bool distributed() const {
        return workers > 1 || compression.scheme != compression::Scheme::none || staleness > 0;
    }
};

/// One measurement of FAST's schedule.
struct ScheduleCheck {
    std::size_t layer = 0;
    TensorClass tensor = TensorClass::weights;
    int bits = 0;          ///< width measured (the one in force)
    double r = 0;          ///< r(X) of bits against bits + step
    double threshold = 0;  ///< eps(layer, iteration)
    bool raised = false;   ///< the width rises from the next iteration
};

/// What one mini-batch did, handed to the caller after it.
struct IterationRecord {
    std::size_t iteration = 0;    ///< from 0, over all epochs
    std::size_t epoch = 0;        ///< from 0
    std::size_t batch = 0;        ///< samples in this mini-batch (the last one may be short)
    std::size_t shard = 0;        ///< with workers: the largest worker's samples (else = batch)
    std::size_t values_sent = 0;  ///< with workers: values (sparse: entries) each worker sent
    double loss = 0;
    std::size_t correct = 0;
    const std::vector<LayerBits>* bits = nullptr;        ///< in force for this iteration
    const std::vector<ScheduleCheck>* checks = nullptr;  ///< made during it
};

struct EpochResult {
    double mean_loss = 0;
    double train_accuracy = 0;
    std::size_t iterations = 0;
};

struct Evaluation {
    double loss = 0;
    double accuracy = 0;
    std::size_t samples = 0;
};

/// Iterations of a whole run over `train_samples` samples: epochs x mini-batches per epoch,
/// capped by max_iterations.
std::size_t run_iterations(const TrainParams& params, std::size_t train_samples);

/// Mini-batch SGD with momentum of a Network under one precision policy. Master weights,
/// biases, their gradients and the update stay fp32: the update lr * g is far below one
/// LSB of a low-precision BFP weight, and FAST keeps an fp32 copy for the same reason.
class Trainer {
public:
    Trainer(const TrainParams& params, const PolicySpec& policy, const Dataset& train);

    [[nodiscard]] std::size_t iterations_per_epoch() const;
    /// Iterations of the whole run (epochs x per epoch, capped by max_iterations).
    [[nodiscard]] std::size_t total_iterations() const;
    [[nodiscard]] bool finished() const { return m_iteration >= total_iterations(); }

    /// The next epoch's mini-batches (fewer if max_iterations ends the run), in the order of
    /// a seeded shuffle; `on_iteration` sees each one after its update.
    EpochResult train_epoch(const std::function<void(const IterationRecord&)>& on_iteration = {});

    /// Loss and accuracy on `data` with the forward GEMMs at the precisions in force. Uses
    /// copies of the quantisers, so evaluating never changes the training run.
    Evaluation evaluate(const Dataset& data);

    /// Widths in force for the next iteration, per GEMM layer (0 = fp32).
    [[nodiscard]] const std::vector<LayerBits>& bits() const { return m_bits; }
    [[nodiscard]] const Network& network() const { return m_network; }
    [[nodiscard]] std::vector<GemmLayerShape> gemm_shapes() const { return m_network.gemm_shapes(); }
    [[nodiscard]] std::size_t iteration() const { return m_iteration; }
    [[nodiscard]] std::size_t epoch() const { return m_epoch; }
    [[nodiscard]] const PolicySpec& policy() const { return m_policy; }

private:
    [[nodiscard]] double learning_rate() const;
    /// SGD with `momentum` (0: plain SGD, the velocity then being this step's gradient) and
    /// weight decay.
    void update(double momentum);
    /// One mini-batch over the workers: each shard's forward and backward, the exchange, and
    /// the (possibly delayed) update. Returns (loss sum, correct) over the mini-batch.
    std::pair<double, std::size_t> distributed_iteration(const std::size_t* indices, std::size_t count,
                                                         GemmContext& ctx);
    void load_batch(const Dataset& data, const std::size_t* indices, std::size_t count);

    TrainParams m_params;
    PolicySpec m_policy;
    const Dataset& m_train;
    Network m_network;
    std::vector<LayerQuantizers> m_quantizers;  ///< empty for fp32
    std::optional<AdaptiveSchedule> m_schedule;
    std::vector<LayerBits> m_bits;
    std::vector<ScheduleCheck> m_checks;
    std::size_t m_iteration = 0, m_epoch = 0;
    Activation m_input, m_grad_logits;
    std::vector<std::uint8_t> m_labels;
    std::vector<std::size_t> m_order;
    std::optional<GradientExchange> m_exchange;                   ///< with workers
    std::vector<std::vector<std::vector<float>>> m_worker_grads;  ///< [worker][tensor]
    std::vector<std::vector<std::vector<float>>> m_pending;       ///< averaged gradients not yet applied (staleness)
    std::size_t m_values_sent = 0;
};

}  // namespace fastsim::learning
