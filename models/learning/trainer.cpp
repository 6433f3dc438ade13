// SPDX-License-Identifier: MIT
#include "learning/trainer.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

#include "bfp/lfsr.h"

namespace fastsim::learning {

const EnumNames<LrSchedule, 2>& enum_names(LrSchedule) {
    static constexpr EnumNames<LrSchedule, 2> kNames{
        {{"constant", LrSchedule::constant}, {"cosine", LrSchedule::cosine}}};
    return kNames;
}

Trainer::Trainer(const TrainParams& params, const PolicySpec& policy, const Dataset& train)
    : m_params(params), m_policy(policy), m_train(train), m_network(params.network, params.seed) {
    if (train.count == 0) throw std::invalid_argument("training set is empty");
    if (params.batch == 0) throw std::invalid_argument("batch must be >= 1");
    const std::size_t layers = m_network.gemm_layer_count();
    LayerBits start;
    if (policy.kind == PolicyKind::fixed)
        for (TensorClass c : kTensorClasses) start[c] = policy.fixed_bits;
    m_bits.assign(layers, start);
    if (policy.kind == PolicyKind::adaptive) {
        m_schedule.emplace(policy.schedule, layers, total_iterations());
        m_bits = m_schedule->all_bits();
    }
    if (params.distributed()) {
        if (params.workers > params.batch)
            throw std::invalid_argument("train.workers (" + std::to_string(params.workers) + ") exceeds the batch (" +
                                        std::to_string(params.batch) + "): a worker would have no samples");
        ExchangeParams x;
        x.compression = params.compression;
        x.workers = params.workers;
        x.momentum = params.momentum;
        x.iterations_per_epoch = iterations_per_epoch();
        x.seed = params.seed;
        m_exchange.emplace(x, gradient_tensors(m_network));
    }
    if (policy.kind != PolicyKind::fp32) {
        m_quantizers.resize(layers);
        for (std::size_t l = 0; l < layers; ++l)
            for (std::size_t o = 0; o < kOperands; ++o) {
                const TensorClass c = tensor_class(static_cast<Operand>(o));
                bfp::Format format = policy.format;
                format.mantissa_bits = m_bits[l][c];
                bfp::NoiseSpec noise = policy.noise;
                noise.seed = bfp::splitmix64(params.seed ^ (0x5EEDull + 16 * l + o));
                m_quantizers[l].operands.emplace_back(format, policy.rounding[c], noise);
            }
    }
}

std::size_t Trainer::iterations_per_epoch() const { return (m_train.count + m_params.batch - 1) / m_params.batch; }

std::size_t run_iterations(const TrainParams& params, std::size_t train_samples) {
    const std::size_t all = (train_samples + params.batch - 1) / params.batch * params.epochs;
    return params.max_iterations == 0 ? all : std::min(all, params.max_iterations);
}

std::size_t Trainer::total_iterations() const { return run_iterations(m_params, m_train.count); }

namespace {

/// Sets every quantiser's mantissa width to its (layer, class) width in `bits`.
void set_widths(std::vector<LayerQuantizers>& quantizers, const std::vector<LayerBits>& bits) {
    for (std::size_t l = 0; l < quantizers.size(); ++l)
        for (std::size_t o = 0; o < kOperands; ++o) {
            bfp::Quantizer& q = quantizers[l].operands[o];
            const int width = bits[l][tensor_class(static_cast<Operand>(o))];
            if (q.format().mantissa_bits != width) q.set_mantissa_bits(width);
        }
}

}  // namespace

double Trainer::learning_rate() const {
    if (m_params.lr_schedule == LrSchedule::constant) return m_params.learning_rate;
    const double progress =
        static_cast<double>(m_iteration) / static_cast<double>(std::max<std::size_t>(1, total_iterations()));
    return m_params.learning_rate * 0.5 * (1.0 + std::cos(3.14159265358979323846 * progress));
}

void Trainer::update(double momentum) {
    const auto lr = static_cast<float>(learning_rate());
    const auto mu = static_cast<float>(momentum);
    const auto wd = static_cast<float>(m_params.weight_decay);
    for (Parameters* p : m_network.parameters()) {
        for (std::size_t i = 0; i < p->weights.size(); ++i) {
            p->weight_velocity[i] = mu * p->weight_velocity[i] + p->weight_grad[i] + wd * p->weights[i];
            p->weights[i] -= lr * p->weight_velocity[i];
        }
        for (std::size_t i = 0; i < p->bias.size(); ++i) {
            p->bias_velocity[i] = mu * p->bias_velocity[i] + p->bias_grad[i];
            p->bias[i] -= lr * p->bias_velocity[i];
        }
    }
}

std::pair<double, std::size_t> Trainer::distributed_iteration(const std::size_t* indices, std::size_t count,
                                                              GemmContext& ctx) {
    const std::size_t k = m_params.workers;
    std::vector<Parameters*> params = m_network.parameters();
    m_worker_grads.resize(k);
    double loss_sum = 0;
    std::size_t correct = 0, first = 0;
    for (std::size_t w = 0; w < k; ++w) {
        // Shard w: count / k samples, the first count % k shards one more.
        const std::size_t size = count / k + (w < count % k ? 1 : 0);
        auto& grads = m_worker_grads[w];
        grads.resize(2 * params.size());
        if (size == 0) {  // a short last mini-batch: this worker contributes a zero gradient
            for (std::size_t i = 0; i < params.size(); ++i) {
                grads[2 * i].assign(params[i]->weights.size(), 0.0f);
                grads[2 * i + 1].assign(params[i]->bias.size(), 0.0f);
            }
            continue;
        }
        load_batch(m_train, indices + first, size);
        first += size;
        const Activation& logits = m_network.forward(m_input, ctx);
        const LossResult loss = softmax_cross_entropy(logits, m_labels.data(), m_grad_logits);
        m_network.backward(m_grad_logits, ctx);
        loss_sum += loss.loss * static_cast<double>(size);
        correct += loss.correct;
        for (std::size_t i = 0; i < params.size(); ++i) {
            grads[2 * i] = params[i]->weight_grad;
            grads[2 * i + 1] = params[i]->bias_grad;
        }
    }
    std::vector<std::vector<float>> averaged;
    m_exchange->exchange(m_worker_grads, averaged, m_iteration);
    m_values_sent = m_exchange->values_sent();
    // A delayed update applies the gradients of D iterations ago (none in the first D).
    m_pending.push_back(std::move(averaged));
    if (m_pending.size() <= m_params.staleness) return {loss_sum, correct};
    const std::vector<std::vector<float>>& apply = m_pending.front();
    for (std::size_t i = 0; i < params.size(); ++i) {
        params[i]->weight_grad = apply[2 * i];
        params[i]->bias_grad = apply[2 * i + 1];
    }
    m_pending.erase(m_pending.begin());
    // DGC corrected the momentum before compressing: the optimiser applies plain SGD.
    update(m_exchange->applies_momentum() ? 0.0 : m_params.momentum);
    return {loss_sum, correct};
}

void Trainer::load_batch(const Dataset& data, const std::size_t* indices, std::size_t count) {
    m_input.reshape(count, 1, static_cast<int>(data.height), static_cast<int>(data.width));
    m_labels.resize(count);
    const std::size_t pixels = data.pixels();
    for (std::size_t b = 0; b < count; ++b) {
        std::copy_n(&data.images[indices[b] * pixels], pixels, &m_input.data[b * pixels]);
        m_labels[b] = data.labels[indices[b]];
    }
}

EpochResult Trainer::train_epoch(const std::function<void(const IterationRecord&)>& on_iteration) {
    EpochResult result;
    if (finished()) return result;
    // Fisher-Yates with SplitMix64 draws: the same order on every platform for a seed.
    m_order.resize(m_train.count);
    std::iota(m_order.begin(), m_order.end(), std::size_t{0});
    std::uint64_t state = bfp::splitmix64(m_params.seed * 0x9E3779B97F4A7C15ull + m_epoch + 1);
    for (std::size_t i = m_order.size(); i > 1; --i) {
        state = bfp::splitmix64(state);
        std::swap(m_order[i - 1], m_order[state % i]);
    }

    GemmContext ctx;
    ctx.path = m_params.path;
    ctx.quantizers = m_quantizers.empty() ? nullptr : &m_quantizers;
    if (m_schedule) {
        ctx.observe = [this](std::size_t layer, TensorClass c, const float* values, std::size_t count) {
            ScheduleCheck check;
            check.layer = layer;
            check.tensor = c;
            check.bits = m_schedule->bits(layer, c);
            if (check.bits >= m_schedule->params().max_bits) return;
            check.threshold = m_schedule->threshold(layer, m_iteration);
            check.r = m_schedule->consider(layer, c, m_iteration, values, count, m_policy.format);
            check.raised = m_schedule->bits(layer, c) > check.bits;
            m_checks.push_back(check);
        };
    }
    double loss_sum = 0;
    std::size_t correct = 0, samples = 0;
    for (std::size_t first = 0; first < m_train.count && !finished(); first += m_params.batch) {
        const std::size_t count = std::min(m_params.batch, m_train.count - first);
        m_checks.clear();
        ctx.observe_this_iteration = m_schedule && m_schedule->checks(m_iteration);
        set_widths(m_quantizers, m_bits);
        LossResult loss;
        if (m_exchange) {
            const auto [sum, right] = distributed_iteration(&m_order[first], count, ctx);
            loss.loss = sum / static_cast<double>(count);
            loss.correct = right;
        } else {
            load_batch(m_train, &m_order[first], count);
            const Activation& logits = m_network.forward(m_input, ctx);
            loss = softmax_cross_entropy(logits, m_labels.data(), m_grad_logits);
            m_network.backward(m_grad_logits, ctx);
            update(m_params.momentum);
        }
        loss_sum += loss.loss * static_cast<double>(count);
        correct += loss.correct;
        samples += count;
        ++result.iterations;
        if (on_iteration) {
            IterationRecord record;
            record.iteration = m_iteration;
            record.epoch = m_epoch;
            record.batch = count;
            record.shard = m_exchange ? (count + m_params.workers - 1) / m_params.workers : count;
            record.values_sent = m_exchange ? m_values_sent : 0;
            record.loss = loss.loss;
            record.correct = loss.correct;
            record.bits = &m_bits;
            record.checks = &m_checks;
            on_iteration(record);
        }
        ++m_iteration;
        if (m_schedule) m_bits = m_schedule->all_bits();
    }
    ++m_epoch;
    result.mean_loss = samples ? loss_sum / static_cast<double>(samples) : 0;
    result.train_accuracy = samples ? static_cast<double>(correct) / static_cast<double>(samples) : 0;
    return result;
}

Evaluation Trainer::evaluate(const Dataset& data) {
    std::vector<LayerQuantizers> copies = m_quantizers;
    set_widths(copies, m_bits);
    GemmContext ctx;
    ctx.path = m_params.path;
    ctx.quantizers = copies.empty() ? nullptr : &copies;
    Evaluation e;
    // Images per forward pass: 64 keeps a CNN layer's operands in cache, where 500 spilled them
    // (the test-set pass took 1 s longer per epoch). Activations are quantised image by image in
    // order, so with weights rounded deterministically (nearest, even, truncate) the logits do
    // not depend on it (the CNN's test loss was the same to the last printed digit). Weights
    // rounded stochastically are drawn afresh at every pass, so there it sets how many roundings
    // of W the test set sees: the figures of such runs moved when it changed from 500.
    constexpr std::size_t kEvalBatch = 64;
    Activation input, grad;
    std::vector<std::uint8_t> labels;
    double loss_sum = 0;
    std::size_t correct = 0;
    for (std::size_t first = 0; first < data.count; first += kEvalBatch) {
        const std::size_t count = std::min(kEvalBatch, data.count - first);
        input.reshape(count, 1, static_cast<int>(data.height), static_cast<int>(data.width));
        std::copy_n(&data.images[first * data.pixels()], count * data.pixels(), input.data.data());
        const Activation& logits = m_network.forward(input, ctx);
        const LossResult loss = softmax_cross_entropy(logits, &data.labels[first], grad);
        loss_sum += loss.loss * static_cast<double>(count);
        correct += loss.correct;
    }
    e.samples = data.count;
    e.loss = data.count ? loss_sum / static_cast<double>(data.count) : 0;
    e.accuracy = data.count ? static_cast<double>(correct) / static_cast<double>(data.count) : 0;
    return e;
}

}  // namespace fastsim::learning
