// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>

namespace fastsim::bfp {

/// Error of an approximation q of x, over n elements.
struct ErrorStats {
    double max_abs_error = 0;    ///< max |q - x|
    double mean_abs_error = 0;   ///< mean |q - x|
    double max_rel_error = 0;    ///< max |q - x| / |x| over x != 0
    double mean_rel_error = 0;   ///< mean |q - x| / |x| over x != 0
    double sqnr_db = 0;          ///< 10 log10(sum x^2 / sum (q - x)^2); +inf when exact
    std::size_t count = 0;       ///< elements compared
    std::size_t non_finite = 0;  ///< elements where q is NaN or Inf (left out of the sums)
};

ErrorStats measure_error(const float* x, const float* q, std::size_t n);

}  // namespace fastsim::bfp
