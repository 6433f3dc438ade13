// SPDX-License-Identifier: MIT
#include "learning/precision.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>

#include "bfp/quantize.h"

namespace fastsim::learning {

std::string_view to_string(TensorClass c) {
    switch (c) {
    case TensorClass::weights: return "weights";
    case TensorClass::activations: return "activations";
    case TensorClass::gradients: return "gradients";
    }
    return "?";
}

const EnumNames<ImprovementNorm, 2>& enum_names(ImprovementNorm) {
    static constexpr EnumNames<ImprovementNorm, 2> kNames{
        {{"abs_of_sum", ImprovementNorm::abs_of_sum}, {"sum_of_abs", ImprovementNorm::sum_of_abs}}};
    return kNames;
}

std::optional<PolicySpec> make_policy(std::string_view name, const bfp::Format& format, const bfp::NoiseSpec& noise,
                                      const ClassRounding& rounding, const ScheduleParams& schedule) {
    PolicySpec p;
    p.name = std::string(name);
    p.format = format;
    p.noise = noise;
    p.rounding = rounding;
    p.schedule = schedule;
    if (name == "fp32") {
        p.kind = PolicyKind::fp32;
    } else if (name == "fast") {
        p.kind = PolicyKind::adaptive;
    } else if (name == "msfp12") {
        // MSFP-12: 16 values share an 8-bit exponent; each keeps a sign and a 3-bit magnitude.
        p.kind = PolicyKind::fixed;
        p.fixed_bits = 3;
        p.format.group_size = 16;
        p.format.exponent_bits = 8;
        p.format.exponent_bias = 0;
    } else if (name.size() == 6 && name.substr(0, 5) == "bfp_m" &&
               (name[5] == '2' || name[5] == '4' || name[5] == '6' || name[5] == '8')) {
        p.kind = PolicyKind::fixed;
        p.fixed_bits = name[5] - '0';
    } else {
        return std::nullopt;
    }
    return p;
}

double relative_improvement(const float* values, std::size_t count, const bfp::Format& format, int bits, int step_bits,
                            ImprovementNorm norm) {
    bfp::Format low = format;
    low.mantissa_bits = bits;
    bfp::Format high = format;
    high.mantissa_bits = bits + step_bits;
    bfp::Quantizer q_low(low, bfp::Rounding::nearest);
    bfp::Quantizer q_high(high, bfp::Rounding::nearest);
    std::vector<float> x_low(count), x_high(count);
    q_low.quantize_dequantize(values, count, x_low.data());
    q_high.quantize_dequantize(values, count, x_high.data());
    double change = 0, sum = 0, sum_abs = 0;
    for (std::size_t i = 0; i < count; ++i) {
        change += std::fabs(static_cast<double>(x_high[i]) - static_cast<double>(x_low[i]));
        sum += x_low[i];
        sum_abs += std::fabs(static_cast<double>(x_low[i]));
    }
    const double denominator = norm == ImprovementNorm::abs_of_sum ? std::fabs(sum) : sum_abs;
    if (change == 0) return 0;
    if (denominator == 0) return std::numeric_limits<double>::infinity();
    return change / denominator;
}

AdaptiveSchedule::AdaptiveSchedule(const ScheduleParams& params, std::size_t layers, std::size_t total_iterations)
    : m_params(params), m_total_iterations(std::max<std::size_t>(1, total_iterations)) {
    if (params.check_every_iterations == 0) throw std::invalid_argument("check_every_iterations must be >= 1");
    LayerBits start;
    for (TensorClass c : kTensorClasses) start[c] = params.start_bits;
    m_bits.assign(layers, start);
}

double AdaptiveSchedule::threshold(std::size_t layer, std::size_t iteration) const {
    const double layers = static_cast<double>(std::max<std::size_t>(1, m_bits.size()));
    return m_params.alpha - m_params.beta * static_cast<double>(iteration) / static_cast<double>(m_total_iterations) -
           m_params.beta * static_cast<double>(layer) / layers;
}

double AdaptiveSchedule::consider(std::size_t layer, TensorClass c, std::size_t iteration, const float* values,
                                  std::size_t count, const bfp::Format& format) {
    int& bits = m_bits[layer][c];
    if (bits >= m_params.max_bits) return std::numeric_limits<double>::quiet_NaN();
    const int step = std::min(m_params.step_bits, m_params.max_bits - bits);
    const double r = relative_improvement(values, count, format, bits, step, m_params.norm);
    if (r > threshold(layer, iteration)) bits += step;
    return r;
}

}  // namespace fastsim::learning
