// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <vector>

#include "config/params.h"

namespace fastsim::run {

/// `spec.count` values drawn from `spec.distribution` with std::mt19937_64(seed): the same
/// seed gives the same tensor with the same C++ standard library.
std::vector<float> synthetic_tensor(const config::TensorSpec& spec, std::uint64_t seed);

}  // namespace fastsim::run
