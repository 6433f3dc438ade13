// SPDX-License-Identifier: MIT
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "bfp/format.h"

#include "common/enum_names.h"

namespace fastsim::learning {

/// The three tensor classes whose precision is chosen per layer.
enum class TensorClass : std::uint8_t { weights, activations, gradients };
inline constexpr std::array<TensorClass, 3> kTensorClasses{TensorClass::weights, TensorClass::activations,
                                                           TensorClass::gradients};
std::string_view to_string(TensorClass tensor_class);

/// Mantissa widths of one GEMM layer's tensors (0 = fp32, unquantised).
struct LayerBits {
    int weights = 0, activations = 0, gradients = 0;
    [[nodiscard]] int& operator[](TensorClass c) {
        return c == TensorClass::weights ? weights : c == TensorClass::activations ? activations : gradients;
    }
    [[nodiscard]] int operator[](TensorClass c) const {
        return c == TensorClass::weights ? weights : c == TensorClass::activations ? activations : gradients;
    }
    friend bool operator==(const LayerBits& a, const LayerBits& b) {
        return a.weights == b.weights && a.activations == b.activations && a.gradients == b.gradients;
    }
};

/// Rounding the converters apply to each tensor class.
struct ClassRounding {
    bfp::Rounding weights = bfp::Rounding::nearest;
    bfp::Rounding activations = bfp::Rounding::nearest;
    bfp::Rounding gradients = bfp::Rounding::stochastic;
    [[nodiscard]] bfp::Rounding operator[](TensorClass c) const {
        return c == TensorClass::weights ? weights : c == TensorClass::activations ? activations : gradients;
    }
};

enum class PolicyKind : std::uint8_t {
    fp32,     ///< no quantisation: the accuracy reference
    fixed,    ///< every tensor at one mantissa width for the whole run
    adaptive  ///< FAST: per layer and class, from start_bits, raised by step_bits when r(X) > eps(l, i)
};

/// Which denominator r(X) uses (docs/fast-training.md, "The schedule").
enum class ImprovementNorm : std::uint8_t {
    abs_of_sum,  ///< |sum BFP(X, m)|: the formula as FAST's notes print it
    sum_of_abs   ///< sum |BFP(X, m)|: a relative L1 change, stable for zero-mean tensors
};
const EnumNames<ImprovementNorm, 2>& enum_names(ImprovementNorm);
inline std::string_view to_string(ImprovementNorm norm) { return name_of(norm); }

/// FAST's schedule: eps(l, i) = alpha - beta * i / I - beta * l / L, for iteration i of I and
/// GEMM layer l of L, both counted from 0.
struct ScheduleParams {
    double alpha = 0.1;
    double beta = 0.05;
    int start_bits = 2;
    int step_bits = 2;
    int max_bits = 8;
    std::size_t check_every_iterations = 10;  ///< r(X) is measured on iterations i % this == 0
    ImprovementNorm norm = ImprovementNorm::sum_of_abs;
};

/// A precision policy, resolved: its name (as reports print it) and its numbers.
struct PolicySpec {
    std::string name;
    PolicyKind kind = PolicyKind::fp32;
    int fixed_bits = 8;    ///< fixed
    bfp::Format format;    ///< g, e, bias, overflow (m is set per tensor)
    bfp::NoiseSpec noise;  ///< LFSR noise; the seed is derived per quantiser
    ClassRounding rounding;
    ScheduleParams schedule;  ///< adaptive
};

/// The names `policies:` accepts: fp32, bfp_m2 .. bfp_m8 (fixed), msfp12, fast. Empty if
/// `name` is none of these; `format`, `noise`, `rounding` and `schedule` are the run's.
std::optional<PolicySpec> make_policy(std::string_view name, const bfp::Format& format, const bfp::NoiseSpec& noise,
                                      const ClassRounding& rounding, const ScheduleParams& schedule);
inline constexpr std::string_view kPolicyNames = "fp32, bfp_m2, bfp_m4, bfp_m6, bfp_m8, msfp12, fast";

/// r(X) = sum |BFP(X, m + step) - BFP(X, m)| / D, D = |sum BFP(X, m)| or sum |BFP(X, m)|,
/// both BFP versions grouped along the contiguous values with `format`'s g and e and
/// rounded to nearest (the measurement draws no LFSR noise). 0 when X quantises to all
/// zeros at m; +inf when D is 0 but the numerator is not.
double relative_improvement(const float* values, std::size_t count, const bfp::Format& format, int bits, int step_bits,
                            ImprovementNorm norm);

/// FAST's adaptive precision state: the width of every (layer, class), only ever raised.
class AdaptiveSchedule {
public:
    AdaptiveSchedule(const ScheduleParams& params, std::size_t layers, std::size_t total_iterations);

    [[nodiscard]] double threshold(std::size_t layer, std::size_t iteration) const;
    /// True if `iteration` measures r(X) (then consider() may raise).
    [[nodiscard]] bool checks(std::size_t iteration) const { return iteration % m_params.check_every_iterations == 0; }
    /// Measures r(X) of `values` at the current width; raises it by step_bits (up to
    /// max_bits) if r > threshold. Returns r (NaN if already at max_bits).
    double consider(std::size_t layer, TensorClass c, std::size_t iteration, const float* values, std::size_t count,
                    const bfp::Format& format);
    [[nodiscard]] int bits(std::size_t layer, TensorClass c) const { return m_bits[layer][c]; }
    [[nodiscard]] const std::vector<LayerBits>& all_bits() const { return m_bits; }
    [[nodiscard]] const ScheduleParams& params() const { return m_params; }

private:
    ScheduleParams m_params;
    std::size_t m_total_iterations;
    std::vector<LayerBits> m_bits;
};

}  // namespace fastsim::learning
