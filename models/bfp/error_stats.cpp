// SPDX-License-Identifier: MIT
#include "bfp/error_stats.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace fastsim::bfp {

ErrorStats measure_error(const float* x, const float* q, std::size_t n) {
    ErrorStats s;
    s.count = n;
    double signal = 0, noise = 0, abs_sum = 0, rel_sum = 0;
    std::size_t finite = 0, nonzero = 0;
    for (std::size_t i = 0; i < n; ++i) {
        if (!std::isfinite(q[i]) || !std::isfinite(x[i])) {
            ++s.non_finite;
            continue;
        }
        const double xi = x[i];
        const double err = std::abs(static_cast<double>(q[i]) - xi);
        ++finite;
        abs_sum += err;
        s.max_abs_error = std::max(s.max_abs_error, err);
        signal += xi * xi;
        noise += err * err;
        if (xi != 0) {
            ++nonzero;
            const double rel = err / std::abs(xi);
            rel_sum += rel;
            s.max_rel_error = std::max(s.max_rel_error, rel);
        }
    }
    s.mean_abs_error = finite ? abs_sum / static_cast<double>(finite) : 0;
    s.mean_rel_error = nonzero ? rel_sum / static_cast<double>(nonzero) : 0;
    s.sqnr_db = noise > 0 ? 10 * std::log10(signal / noise) : std::numeric_limits<double>::infinity();
    return s;
}

}  // namespace fastsim::bfp
