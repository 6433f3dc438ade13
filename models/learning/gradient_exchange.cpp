// SPDX-License-Identifier: MIT
#include "learning/gradient_exchange.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "bfp/lfsr.h"
#include "learning/network.h"

namespace fastsim::learning {
namespace {

using compression::Scheme;

/// A uniform double in [0, 1) from a SplitMix64 stream.
double uniform(std::uint64_t& state) {
    state = bfp::splitmix64(state);
    return static_cast<double>(state >> 11) * 0x1p-53;
}

/// Gram-Schmidt on the columns of P (rows x r, row-major), in place. A column left with less
/// than 1e-4 of its length by the earlier ones (dependent on them, up to rounding) becomes zero:
/// normalising its rounding noise would add a direction that is not orthogonal.
void orthonormalise(std::vector<float>& p, std::size_t rows, std::size_t r) {
    for (std::size_t c = 0; c < r; ++c) {
        double before = 0;
        for (std::size_t i = 0; i < rows; ++i) before += static_cast<double>(p[i * r + c]) * p[i * r + c];
        for (std::size_t prev = 0; prev < c; ++prev) {
            double dot = 0;
            for (std::size_t i = 0; i < rows; ++i) dot += static_cast<double>(p[i * r + c]) * p[i * r + prev];
            for (std::size_t i = 0; i < rows; ++i) p[i * r + c] -= static_cast<float>(dot) * p[i * r + prev];
        }
        double norm = 0;
        for (std::size_t i = 0; i < rows; ++i) norm += static_cast<double>(p[i * r + c]) * p[i * r + c];
        const bool vanished = norm <= 1e-8 * before || norm < 1e-60;
        norm = std::sqrt(norm);
        for (std::size_t i = 0; i < rows; ++i) p[i * r + c] = vanished ? 0.0f : static_cast<float>(p[i * r + c] / norm);
    }
}

}  // namespace

GradientExchange::GradientExchange(const ExchangeParams& params, std::vector<TensorShape> tensors)
    : m_params(params), m_tensors(std::move(tensors)) {
    if (m_params.workers == 0) throw std::invalid_argument("GradientExchange: at least one worker");
    const std::size_t k = m_params.workers;
    m_residual.assign(k, {});
    m_velocity.assign(k, {});
    for (std::size_t w = 0; w < k; ++w)
        for (const TensorShape& t : m_tensors) {
            m_residual[w].emplace_back(t.size(), 0.0f);
            if (applies_momentum()) m_velocity[w].emplace_back(t.size(), 0.0f);
        }
    if (m_params.compression.scheme == Scheme::powersgd) {
        std::uint64_t state = bfp::splitmix64(m_params.seed ^ 0x50574553474451ull);
        for (const TensorShape& t : m_tensors) {
            std::vector<float> q(t.cols * m_params.compression.rank);
            for (float& v : q) {  // standard normal (Box-Muller)
                const double u1 = std::max(uniform(state), 1e-300), u2 = uniform(state);
                v = static_cast<float>(std::sqrt(-2 * std::log(u1)) * std::cos(6.283185307179586 * u2));
            }
            m_q.push_back(std::move(q));
        }
    }
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

double sparse_density(const compression::Params& params, std::size_t iteration, std::size_t iterations_per_epoch) {
    if (params.scheme != Scheme::dgc) return params.density;
    const std::size_t epoch = iteration / std::max<std::size_t>(1, iterations_per_epoch);
    return epoch < 4 ? std::max(params.density, std::pow(0.25, static_cast<double>(epoch + 1))) : params.density;
}

void GradientExchange::exchange(const std::vector<std::vector<std::vector<float>>>& grads,
                                std::vector<std::vector<float>>& out, std::size_t iteration) {
    const std::size_t k = m_params.workers;
    // Without error feedback what a scheme did not send is dropped (DGC keeps its velocity).
    if (!m_params.compression.error_feedback && m_params.compression.scheme != Scheme::dgc)
        for (auto& worker : m_residual)
            for (auto& r : worker) std::fill(r.begin(), r.end(), 0.0f);
    if (grads.size() != k) throw std::invalid_argument("GradientExchange: one gradient list per worker");
    out.resize(m_tensors.size());
    m_values_sent = 0;
    for (std::size_t t = 0; t < m_tensors.size(); ++t) {
        const std::size_t n = m_tensors[t].size();
        out[t].assign(n, 0.0f);
        switch (m_params.compression.scheme) {
        case Scheme::none:
            if (k == 1) {
                out[t] = grads[0][t];  // bit for bit
            } else {
                for (std::size_t w = 0; w < k; ++w)
                    for (std::size_t i = 0; i < n; ++i) out[t][i] += grads[w][t][i];
                const float inv = 1.0f / static_cast<float>(k);
                for (float& v : out[t]) v *= inv;
            }
            m_values_sent += n;
            break;
        case Scheme::topk:
        case Scheme::dgc:
        case Scheme::threshold: sparse(t, grads, out[t], iteration); break;
        case Scheme::onebit:
        case Scheme::terngrad: quantised(t, grads, out[t], iteration); break;
        case Scheme::powersgd: powersgd(t, grads, out[t]); break;
        }
    }
}

void GradientExchange::sparse(std::size_t t, const std::vector<std::vector<std::vector<float>>>& grads,
                              std::vector<float>& out, std::size_t iteration) {
    const compression::Params& c = m_params.compression;
    const std::size_t k = m_params.workers, n = m_tensors[t].size();
    const auto mu = static_cast<float>(m_params.momentum);
    const float inv = 1.0f / static_cast<float>(k);
    std::vector<float> magnitude(n);
    for (std::size_t w = 0; w < k; ++w) {
        std::vector<float>& acc = m_residual[w][t];  // error feedback (DGC: the accumulated velocity v)
        const std::vector<float>& g = grads[w][t];
        if (c.scheme == Scheme::dgc) {
            std::vector<float>& u = m_velocity[w][t];  // momentum correction: u = m u + g, v += u
            for (std::size_t i = 0; i < n; ++i) {
                u[i] = mu * u[i] + g[i];
                acc[i] += u[i];
            }
        } else {
            for (std::size_t i = 0; i < n; ++i) acc[i] += g[i];
        }
        // The values sent: the k largest magnitudes, or those above the threshold.
        float cut = static_cast<float>(c.threshold);
        if (c.scheme != Scheme::threshold) {
            compression::Params p = c;
            p.density = density(iteration);
            const std::size_t keep = compression::sparse_entries(p, n);
            for (std::size_t i = 0; i < n; ++i) magnitude[i] = std::fabs(acc[i]);
            std::nth_element(magnitude.begin(), magnitude.begin() + static_cast<std::ptrdiff_t>(n - keep),
                             magnitude.end());
            cut = magnitude[n - keep];
        }
        for (std::size_t i = 0; i < n; ++i) {
            const bool sent = c.scheme == Scheme::threshold ? std::fabs(acc[i]) > cut : std::fabs(acc[i]) >= cut;
            if (!sent) continue;
            out[i] += acc[i] * inv;
            acc[i] = 0;                                            // sent: nothing left over
            if (c.scheme == Scheme::dgc) m_velocity[w][t][i] = 0;  // momentum factor masking
            ++m_values_sent;
        }
    }
}

void GradientExchange::quantised(std::size_t t, const std::vector<std::vector<std::vector<float>>>& grads,
                                 std::vector<float>& out, std::size_t iteration) {
    const bool onebit = m_params.compression.scheme == Scheme::onebit;
    const std::size_t k = m_params.workers, n = m_tensors[t].size();
    const float inv = 1.0f / static_cast<float>(k);
    for (std::size_t w = 0; w < k; ++w) {
        std::vector<float>& acc = m_residual[w][t];
        const std::vector<float>& g = grads[w][t];
        std::uint64_t state =
            bfp::splitmix64(m_params.seed ^ (iteration * 0x9E3779B97F4A7C15ull) ^ (w << 40) ^ (t << 52));
        for (std::size_t first = 0; first < n; first += compression::kBucketValues) {
            const std::size_t last = std::min(n, first + compression::kBucketValues);
            if (onebit) {
                // 1-bit SGD with error feedback: each value becomes its bucket's mean positive
                // or mean negative value; what that loses is carried to the next iteration.
                double pos = 0, neg = 0;
                std::size_t pos_n = 0, neg_n = 0;
                for (std::size_t i = first; i < last; ++i) {
                    acc[i] += g[i];
                    if (acc[i] >= 0) {
                        pos += acc[i];
                        ++pos_n;
                    } else {
                        neg += acc[i];
                        ++neg_n;
                    }
                }
                const auto p = static_cast<float>(pos_n ? pos / static_cast<double>(pos_n) : 0.0);
                const auto q = static_cast<float>(neg_n ? neg / static_cast<double>(neg_n) : 0.0);
                for (std::size_t i = first; i < last; ++i) {
                    const float sent = acc[i] >= 0 ? p : q;
                    out[i] += sent * inv;
                    acc[i] -= sent;
                }
            } else {
                // TernGrad: s = the bucket's largest magnitude; each value is s sign(g) with
                // probability |g| / s, else 0: unbiased, no error feedback.
                float s = 0;
                for (std::size_t i = first; i < last; ++i) s = std::max(s, std::fabs(g[i]));
                if (s == 0) continue;
                for (std::size_t i = first; i < last; ++i)
                    if (uniform(state) < std::fabs(g[i]) / s) out[i] += (g[i] < 0 ? -s : s) * inv;
            }
        }
        m_values_sent += n;
    }
}

void GradientExchange::powersgd(std::size_t t, const std::vector<std::vector<std::vector<float>>>& grads,
                                std::vector<float>& out) {
    const std::size_t k = m_params.workers, rows = m_tensors[t].rows, cols = m_tensors[t].cols;
    const std::size_t r = m_params.compression.rank;
    const float inv = 1.0f / static_cast<float>(k);
    if (cols == 1 || r >= std::min(rows, cols)) {  // a vector, or no saving: the exact average
        for (std::size_t w = 0; w < k; ++w)
            for (std::size_t i = 0; i < rows * cols; ++i) out[i] += grads[w][t][i] * inv;
        m_values_sent += rows * cols;
        return;
    }
    // M_w = g_w + e_w; P = mean M_w Q, orthonormalised; Q = mean M_wᵀ P; the gradient P Qᵀ;
    // e_w = M_w - P Qᵀ (PowerSGD with error feedback and a warm-started Q).
    std::vector<float>& q = m_q[t];
    std::vector<float> p(rows * r, 0.0f);
    for (std::size_t w = 0; w < k; ++w) {
        std::vector<float>& m = m_residual[w][t];
        for (std::size_t i = 0; i < rows * cols; ++i) m[i] += grads[w][t][i];
        for (std::size_t i = 0; i < rows; ++i)
            for (std::size_t c = 0; c < r; ++c) {
                double sum = 0;
                for (std::size_t j = 0; j < cols; ++j) sum += static_cast<double>(m[i * cols + j]) * q[j * r + c];
                p[i * r + c] += static_cast<float>(sum) * inv;
            }
    }
    orthonormalise(p, rows, r);
    std::fill(q.begin(), q.end(), 0.0f);
    for (std::size_t w = 0; w < k; ++w) {
        const std::vector<float>& m = m_residual[w][t];
        for (std::size_t j = 0; j < cols; ++j)
            for (std::size_t c = 0; c < r; ++c) {
                double sum = 0;
                for (std::size_t i = 0; i < rows; ++i) sum += static_cast<double>(m[i * cols + j]) * p[i * r + c];
                q[j * r + c] += static_cast<float>(sum) * inv;
            }
    }
    for (std::size_t i = 0; i < rows; ++i)
        for (std::size_t j = 0; j < cols; ++j) {
            double sum = 0;
            for (std::size_t c = 0; c < r; ++c) sum += static_cast<double>(p[i * r + c]) * q[j * r + c];
            out[i * cols + j] = static_cast<float>(sum);
        }
    for (std::size_t w = 0; w < k; ++w)
        for (std::size_t i = 0; i < rows * cols; ++i) m_residual[w][t][i] -= out[i];
    m_values_sent += (rows + cols) * r;
}

}  // namespace fastsim::learning
