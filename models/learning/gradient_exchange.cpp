// SPDX-License-Identifier: MIT
#include "learning/gradient_exchange.h"

#include <algorithm>
#include <stdexcept>

#include "bfp/lfsr.h"
#include "learning/network.h"

namespace fastsim::learning {

GradientExchange::GradientExchange(const ExchangeParams& params, std::vector<TensorShape> tensors)
    : m_params(params),
      m_tensors(std::move(tensors)),
      m_compressor(compression::compressor_of(params.compression.scheme)) {
    if (m_params.workers == 0) throw std::invalid_argument("GradientExchange: at least one worker");
    std::uint64_t rng = bfp::splitmix64(m_params.seed ^ 0x50574553474451ull);  // the tensors' one stream, in order
    m_states.resize(m_tensors.size());
    for (std::size_t t = 0; t < m_tensors.size(); ++t)
        m_compressor.init(m_states[t], m_tensors[t], m_params.workers, m_params.compression, rng);
}

std::vector<TensorShape> gradient_tensors(Network& network) {
    std::vector<TensorShape> tensors;
    for (const Parameters* p : network.parameters()) {
        const std::size_t rows = p->bias.size();
        tensors.push_back({rows, p->weights.size() / std::max<std::size_t>(1, rows)});
        tensors.push_back({rows, 1});
    }
    return tensors;
}

void GradientExchange::exchange(const std::vector<std::vector<std::vector<float>>>& grads,
                                std::vector<std::vector<float>>& out, std::size_t iteration) {
    if (grads.size() != m_params.workers) throw std::invalid_argument("GradientExchange: one gradient list per worker");
    out.resize(m_tensors.size());
    m_values_sent = 0;
    const double density_now = density(iteration);
    for (std::size_t t = 0; t < m_tensors.size(); ++t) {
        out[t].assign(m_tensors[t].size(), 0.0f);
        const compression::ExchangeStep step{
            m_params.compression, m_params.workers, m_params.momentum, density_now, m_params.seed, iteration, t,
            m_tensors[t]};
        m_values_sent += m_compressor.average(step, m_states[t], grads, out[t]);
    }
}

}  // namespace fastsim::learning
