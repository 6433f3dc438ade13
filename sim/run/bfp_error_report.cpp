// SPDX-License-Identifier: MIT
#include "run/bfp_error_report.h"

#include "bfp/lfsr.h"
#include "bfp/quantize.h"
#include "run/synthetic_tensors.h"

namespace fastsim::run {

std::vector<ErrorReportRow> bfp_error_report(const config::Params& params, const WorkProgress& progress) {
    const auto& report = params.bfp_report;
    std::vector<ErrorReportRow> rows;
    const double all_rows =
        static_cast<double>(report.tensors.size() * report.mantissa_bits.size() * report.roundings.size());
    for (std::size_t t = 0; t < report.tensors.size(); ++t) {
        const auto& spec = report.tensors[t];
        const std::uint64_t tensor_seed = bfp::splitmix64(params.run.seed + t);
        const std::vector<float> x = synthetic_tensor(spec, tensor_seed);
        for (const int m : report.mantissa_bits) {
            for (const bfp::Rounding rounding : report.roundings) {
                bfp::Quantizer quantizer(params.bfp.format(m), rounding,
                                         params.bfp.noise(bfp::splitmix64(tensor_seed)));
                const std::vector<float> q = bfp::dequantize(quantizer.quantize(x.data(), x.size()));
                rows.push_back(
                    {spec.name, spec.distribution, m, rounding, bfp::measure_error(x.data(), q.data(), x.size())});
                if (progress) progress(static_cast<double>(rows.size()) / all_rows);
            }
        }
    }
    return rows;
}

}  // namespace fastsim::run
