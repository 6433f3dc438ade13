// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <vector>

#include "bfp/error_stats.h"
#include "bfp/format.h"
#include "config/params.h"
#include "run/work.h"

namespace fastsim::run {

/// Quantisation error of one tensor at one mantissa width and rounding mode.
struct ErrorReportRow {
    std::string tensor;
    config::Distribution distribution;
    int mantissa_bits;
    bfp::Rounding rounding;
    bfp::ErrorStats stats;
};

/// For every tensor of params.bfp_report x mantissa width x rounding mode (in that nesting
/// order): generate the tensor, quantise it with params.bfp, measure the error. `progress`
/// hears the fraction of rows done after each.
std::vector<ErrorReportRow> bfp_error_report(const config::Params& params, const WorkProgress& progress = {});

}  // namespace fastsim::run
