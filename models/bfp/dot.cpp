// SPDX-License-Identifier: MIT
#include "bfp/dot.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>

namespace fastsim::bfp {

int group_accumulator_bits(int mantissa_bits_a, int mantissa_bits_b, int group_size) {
    int log2_g = 0;
    while ((1 << log2_g) < group_size) ++log2_g;
    return mantissa_bits_a + mantissa_bits_b + log2_g + 1;
}

std::int64_t dot_integer(const std::int32_t* a, const std::int32_t* b, int group_size) {
    std::int64_t sum = 0;
    for (int l = 0; l < group_size; ++l) sum += std::int64_t{a[l]} * b[l];
    return sum;
}

ChunkedDot dot_chunked(const std::uint16_t* magnitudes_a, const std::uint8_t* negative_a, int mantissa_bits_a,
                       const std::uint16_t* magnitudes_b, const std::uint8_t* negative_b, int mantissa_bits_b,
                       int group_size) {
    const auto signed_chunk = [](std::uint16_t magnitude, std::uint8_t negative, int chunk) {
        const int c = (magnitude >> (2 * chunk)) & 3;
        return negative ? -c : c;
    };
    ChunkedDot result;
    for (int i = 0; i < (mantissa_bits_a + 1) / 2; ++i) {
        for (int j = 0; j < (mantissa_bits_b + 1) / 2; ++j) {
            std::int64_t tree = 0;
            for (int l = 0; l < group_size; ++l)
                tree +=
                    signed_chunk(magnitudes_a[l], negative_a[l], i) * signed_chunk(magnitudes_b[l], negative_b[l], j);
            result.sum += tree * (std::int64_t{1} << (2 * (i + j)));
            ++result.passes;
        }
    }
    return result;
}

float group_product_to_float(std::int64_t sum, int scale_exponent) {
    // |sum| < 2^53 (Format limits) and |scale_exponent| < 600, so sum * 2^scale_exponent is an
    // exact double (2^e built from its exponent bits); then one rounding to float.
    const auto biased = static_cast<std::uint64_t>(scale_exponent + 1023);
    double power;
    const std::uint64_t bits = biased << 52;
    std::memcpy(&power, &bits, sizeof power);
    return static_cast<float>(static_cast<double>(sum) * power);
}

BfpMatrix quantize_rows(const float* values, std::size_t rows, std::size_t cols, std::size_t row_stride,
                        std::size_t col_stride, Quantizer& quantizer) {
    const auto g = static_cast<std::size_t>(quantizer.format().group_size);
    BfpMatrix out;
    out.rows = rows;
    out.cols = cols;
    out.groups_per_row = (cols + g - 1) / g;
    const std::size_t groups = rows * out.groups_per_row;
    out.data.format = quantizer.format();
    out.data.size = groups * g;
    out.data.exponents.resize(groups);
    out.data.magnitudes.resize(groups * g);
    out.data.negative.resize(groups * g);
    std::vector<float> gathered(g);
    for (std::size_t r = 0; r < rows; ++r) {
        for (std::size_t q = 0; q < out.groups_per_row; ++q) {
            const std::size_t first_col = q * g;
            const std::size_t count = std::min(g, cols - first_col);
            for (std::size_t j = 0; j < count; ++j) gathered[j] = values[r * row_stride + (first_col + j) * col_stride];
            const std::size_t group = r * out.groups_per_row + q;
            quantizer.quantize_group(gathered.data(), count, out.data.exponents[group], &out.data.magnitudes[group * g],
                                     &out.data.negative[group * g]);
        }
    }
    return out;
}

namespace {

template <typename Acc>
void gemm_kernel(const BfpMatrix& a, const BfpMatrix& bt, const std::vector<std::int32_t>& sa,
                 const std::vector<std::int32_t>& sb, std::vector<float>& c) {
    const auto g = static_cast<std::size_t>(a.data.format.group_size);
    const int lsb_offset = (a.data.format.mantissa_bits - 1) + (bt.data.format.mantissa_bits - 1);
    const std::size_t groups = a.groups_per_row;
    for (std::size_t i = 0; i < a.rows; ++i) {
        for (std::size_t j = 0; j < bt.rows; ++j) {
            float acc = 0.0f;
            for (std::size_t q = 0; q < groups; ++q) {
                const std::size_t ga = i * groups + q;
                const std::size_t gb = j * groups + q;
                if (a.data.is_nan_group(ga) || bt.data.is_nan_group(gb)) {
                    acc += std::numeric_limits<float>::quiet_NaN();
                    continue;
                }
                const std::int32_t* x = &sa[ga * g];
                const std::int32_t* y = &sb[gb * g];
                Acc sum = 0;
                for (std::size_t l = 0; l < g; ++l) sum += static_cast<Acc>(x[l]) * static_cast<Acc>(y[l]);
                const int scale = a.data.exponents[ga] + bt.data.exponents[gb] - lsb_offset;
                acc += group_product_to_float(static_cast<std::int64_t>(sum), scale);
            }
            c[i * bt.rows + j] = canonical_nan(acc);
        }
    }
}

std::vector<std::int32_t> signed_magnitudes(const BfpTensor& t) {
    std::vector<std::int32_t> out(t.magnitudes.size());
    for (std::size_t i = 0; i < out.size(); ++i) out[i] = t.signed_magnitude(i);
    return out;
}

}  // namespace

std::vector<float> gemm(const BfpMatrix& a, const BfpMatrix& b_transposed) {
    if (a.cols != b_transposed.cols)
        throw std::invalid_argument("gemm: A has " + std::to_string(a.cols) + " columns but B has " +
                                    std::to_string(b_transposed.cols) + " rows");
    if (a.data.format.group_size != b_transposed.data.format.group_size)
        throw std::invalid_argument("gemm: A and B must share the group size");
    std::vector<float> c(a.rows * b_transposed.rows);
    const auto sa = signed_magnitudes(a.data);
    const auto sb = signed_magnitudes(b_transposed.data);
    // An int32 accumulator is exact when the group sum fits (m <= 8 with g <= 2^14, say).
    if (group_accumulator_bits(a.data.format.mantissa_bits, b_transposed.data.format.mantissa_bits,
                               a.data.format.group_size) <= 32)
        gemm_kernel<std::int32_t>(a, b_transposed, sa, sb, c);
    else
        gemm_kernel<std::int64_t>(a, b_transposed, sa, sb, c);
    return c;
}

std::vector<float> gemm(const float* a, const float* b, std::size_t m, std::size_t k, std::size_t n,
                        Quantizer& quantizer_a, Quantizer& quantizer_b) {
    const BfpMatrix qa = quantize_rows(a, m, k, k, 1, quantizer_a);
    const BfpMatrix qb = quantize_rows(b, n, k, 1, n, quantizer_b);
    return gemm(qa, qb);
}

}  // namespace fastsim::bfp
