// SPDX-License-Identifier: MIT
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <vector>

#include "bfp/format.h"
#include "bfp/lfsr.h"

namespace fastsim::bfp {

/// Exponent stored for a group that is NaN (an input NaN/Inf, or overflow under Overflow::nan).
inline constexpr std::int16_t kNanExponent = std::numeric_limits<std::int16_t>::min();

/// A quantised tensor: `size` logical elements in ceil(size / g) groups; the last group is
/// zero-padded to g elements. Elements are sign-magnitude, so -0 is kept.
struct BfpTensor {
    Format format;
    std::size_t size = 0;                   ///< logical element count
    std::vector<std::int16_t> exponents;    ///< E per group, or kNanExponent
    std::vector<std::uint16_t> magnitudes;  ///< k per element slot, groups * g entries
    std::vector<std::uint8_t> negative;     ///< sign bit per element slot

    [[nodiscard]] std::size_t group_count() const { return exponents.size(); }
    [[nodiscard]] bool is_nan_group(std::size_t group) const { return exponents[group] == kNanExponent; }
    /// (-1)^s * k of element slot i.
    [[nodiscard]] std::int32_t signed_magnitude(std::size_t i) const {
        return negative[i] ? -static_cast<std::int32_t>(magnitudes[i]) : static_cast<std::int32_t>(magnitudes[i]);
    }

    friend bool operator==(const BfpTensor& a, const BfpTensor& b) {
        return a.format == b.format && a.size == b.size && a.exponents == b.exponents && a.magnitudes == b.magnitudes &&
               a.negative == b.negative;
    }
};

/// Converts float32 values to BFP, rule by rule as docs/bfp.md §1-§4 defines:
/// E0 = floor(log2 max|x|) from the exponent bits; E = max(E0, min_exponent) or overflow;
/// k = round(|x| / 2^(E-(m-1))) by `rounding`, then k = min(k, 2^m - 1).
///
/// Stochastic rounding draws noise_bits from lane j of an LfsrBank (one LFSR per element
/// position j of a group); every lane draws once per converted group, whatever the values,
/// as a hardware converter's lanes do. Other modes never touch the LFSRs.
class Quantizer {
public:
    /// Throws std::invalid_argument if `format` or `noise` fails validate().
    Quantizer(const Format& format, Rounding rounding, const NoiseSpec& noise = {});

    /// Quantises `count` values (contiguous).
    BfpTensor quantize(const float* values, std::size_t count);

    /// dequantize(quantize(values, count)) written to `out` (count floats), bit for bit,
    /// drawing the same LFSR noise, without building the BfpTensor: the fast path of BFP
    /// training, whose GEMMs multiply these exactly representable values in fp32.
    void quantize_dequantize(const float* values, std::size_t count, float* out);
    /// quantize_dequantize of each of `rows` rows of k contiguous values, in order (each row's
    /// groups start at its first value): the operand of a GEMM grouped along k.
    void quantize_dequantize_rows(const float* values, std::size_t rows, std::size_t k, float* out);

    /// Changes m, keeping g, e, the rounding and the LFSR state (a converter switching
    /// precision). Throws std::invalid_argument if the new format fails validate().
    void set_mantissa_bits(int mantissa_bits);

    /// Quantises one group: `count` <= g inputs, the remaining slots zero-padded.
    /// Writes the exponent and g magnitudes/signs.
    void quantize_group(const float* values, std::size_t count, std::int16_t& exponent, std::uint16_t* magnitudes,
                        std::uint8_t* negative);

    [[nodiscard]] const Format& format() const { return m_format; }
    [[nodiscard]] Rounding rounding() const { return m_rounding; }
    [[nodiscard]] const NoiseSpec& noise() const { return m_noise; }
    [[nodiscard]] const LfsrBank& lfsr() const { return m_lfsr; }

private:
    Format m_format;
    Rounding m_rounding;
    NoiseSpec m_noise;
    LfsrBank m_lfsr;
};

/// Exact float32 value of element slot i (NaN for a NaN group).
float dequantize_element(const BfpTensor& tensor, std::size_t i);

/// The `size` logical elements as float32, exactly (the grid is float32-representable).
std::vector<float> dequantize(const BfpTensor& tensor);

/// floor(log2 |x|) of a finite nonzero float32, exact for normals and subnormals.
int floor_log2(float x);

}  // namespace fastsim::bfp
