// SPDX-License-Identifier: MIT
#include "run/synthetic_tensors.h"

#include <algorithm>
#include <random>

namespace fastsim::run {

std::vector<float> synthetic_tensor(const config::TensorSpec& spec, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<float> out(spec.count);
    switch (spec.distribution) {
    case config::Distribution::normal: {
        std::normal_distribution<double> d(0.0, spec.scale);
        for (auto& v : out) v = static_cast<float>(d(rng));
        break;
    }
    case config::Distribution::relu_normal: {
        std::normal_distribution<double> d(0.0, spec.scale);
        for (auto& v : out) v = static_cast<float>(std::max(0.0, d(rng)));
        break;
    }
    case config::Distribution::laplace: {
        std::exponential_distribution<double> magnitude(1.0 / spec.scale);
        std::bernoulli_distribution negative(0.5);
        for (auto& v : out) v = static_cast<float>(negative(rng) ? -magnitude(rng) : magnitude(rng));
        break;
    }
    case config::Distribution::student_t: {
        std::student_t_distribution<double> d(spec.dof);
        for (auto& v : out) v = static_cast<float>(spec.scale * d(rng));
        break;
    }
    }
    return out;
}

}  // namespace fastsim::run
