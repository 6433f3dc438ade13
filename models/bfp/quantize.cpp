// SPDX-License-Identifier: MIT
#include "bfp/quantize.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

namespace fastsim::bfp {
namespace {

std::uint32_t float_bits(float x) {
    std::uint32_t u;
    std::memcpy(&u, &x, sizeof u);
    return u;
}

/// |x| = significand * 2^lsb_exponent for the magnitude bits of a finite float32.
struct Decomposed {
    std::uint32_t significand;  ///< < 2^24
    int lsb_exponent;           ///< -149 for subnormals
};

Decomposed decompose(std::uint32_t magnitude_bits) {
    const auto biased = static_cast<int>(magnitude_bits >> 23);
    const std::uint32_t fraction = magnitude_bits & 0x7FFFFFu;
    if (biased == 0) return {fraction, -149};
    return {fraction | 0x800000u, biased - 150};
}

int bit_width(std::uint32_t v) { return v == 0 ? 0 : 32 - __builtin_clz(v); }

/// floor(log2) of the magnitude bits of a finite nonzero float32.
int floor_log2_bits(std::uint32_t magnitude_bits) {
    const auto biased = static_cast<int>(magnitude_bits >> 23);
    if (biased != 0) return biased - 127;
    return bit_width(magnitude_bits & 0x7FFFFFu) - 1 - 149;
}

/// Integer part and sub-LSB remainder of t = significand / 2^shift, for shift in [1, 62].
template <Rounding R>
std::uint64_t round_scaled(std::uint64_t significand, int shift, std::uint32_t noise, int noise_bits) {
    const std::uint64_t integer = significand >> shift;
    const std::uint64_t remainder = significand & ((std::uint64_t{1} << shift) - 1);
    if constexpr (R == Rounding::truncate) {
        return integer;
    } else if constexpr (R == Rounding::nearest) {
        return integer + (remainder >= (std::uint64_t{1} << (shift - 1)) ? 1 : 0);
    } else if constexpr (R == Rounding::even) {
        const std::uint64_t half = std::uint64_t{1} << (shift - 1);
        return integer + ((remainder > half || (remainder == half && (integer & 1))) ? 1 : 0);
    } else {
        // Keep n bits below the LSB (the hardware's aligned, truncated mantissa), add the
        // n-bit noise, carry into the LSB: floor(t + noise / 2^n), exactly.
        const std::uint64_t fraction =
            shift >= noise_bits ? remainder >> (shift - noise_bits) : remainder << (noise_bits - shift);
        return integer + ((fraction + noise) >> noise_bits);
    }
}

/// Per-lane noise of one group (stochastic rounding): every lane draws once per group,
/// whatever the group holds, as a hardware converter's lanes do. Element j of the group
/// uses lane j mod lanes. A stack buffer holds up to 64 lanes, the heap any more.
class GroupNoise {
public:
    GroupNoise() = default;
    GroupNoise(const GroupNoise&) = delete;  // m_data may point into m_stack
    GroupNoise& operator=(const GroupNoise&) = delete;

    void draw(std::size_t g, const NoiseSpec& noise, LfsrBank& lfsr) {
        if (g > kStackLanes) {
            m_wide.resize(g);
            m_data = m_wide.data();
        }
        const auto lanes = static_cast<std::size_t>(lfsr.lanes());
        if (g <= lanes) {
            lfsr.draw_lanes(noise.noise_bits, static_cast<int>(g), m_data);
        } else {
            for (std::size_t j = 0; j < g; ++j) m_data[j] = lfsr.draw(static_cast<int>(j % lanes), noise.noise_bits);
        }
    }
    [[nodiscard]] const std::uint32_t* data() const { return m_data; }

private:
    static constexpr std::size_t kStackLanes = 64;
    std::uint32_t m_stack[kStackLanes];
    std::vector<std::uint32_t> m_wide;
    std::uint32_t* m_data = m_stack;
};

/// The largest magnitude bits of a group: they compare like the magnitudes, and Inf and
/// NaN lie above every finite value.
inline __attribute__((always_inline)) std::uint32_t max_magnitude_bits(const float* values, std::size_t count) {
    constexpr std::size_t kLanes = 8;  // one AVX2 register: independent maxima, combined at the end
    if (count % kLanes == 0) {
        std::uint32_t lane[kLanes] = {};
        for (std::size_t i = 0; i < count; i += kLanes)
            for (std::size_t j = 0; j < kLanes; ++j)
                lane[j] = std::max(lane[j], float_bits(values[i + j]) & 0x7FFFFFFFu);
        std::uint32_t max_bits = 0;
        for (std::uint32_t v : lane) max_bits = std::max(max_bits, v);
        return max_bits;
    }
    std::uint32_t max_bits = 0;
    for (std::size_t i = 0; i < count; ++i) max_bits = std::max(max_bits, float_bits(values[i]) & 0x7FFFFFFFu);
    return max_bits;
}

/// Shared exponent E of a group from its largest magnitude bits: clamped below the range;
/// above it the group overflows (saturates to the maximum, or is NaN). NaN also for Inf/NaN.
struct SharedExponent {
    bool nan = false;
    int e = 0;
};
inline __attribute__((always_inline)) SharedExponent shared_exponent(std::uint32_t max_bits, const Format& format) {
    const bool non_finite = max_bits >= 0x7F800000u;
    const int e = max_bits == 0 ? format.min_exponent() : std::max(floor_log2_bits(max_bits), format.min_exponent());
    const bool overflow = !non_finite && max_bits != 0 && e > format.max_exponent();
    if (non_finite || (overflow && format.overflow == Overflow::nan)) return {true, 0};
    return {false, overflow ? format.max_exponent() : e};
}

template <Rounding R>
void quantize_group_impl(const float* values, std::size_t count, const Format& format, const NoiseSpec& noise,
                         LfsrBank& lfsr, std::int16_t& exponent, std::uint16_t* magnitudes, std::uint8_t* negative) {
    const auto g = static_cast<std::size_t>(format.group_size);
    const std::uint64_t max_k = format.max_magnitude();

    GroupNoise noise_buffer;
    if constexpr (R == Rounding::stochastic) noise_buffer.draw(g, noise, lfsr);
    const std::uint32_t* noise_of_lane = noise_buffer.data();
    const SharedExponent shared = shared_exponent(max_magnitude_bits(values, count), format);
    if (shared.nan) {
        exponent = kNanExponent;
        std::fill(magnitudes, magnitudes + g, std::uint16_t{0});
        std::fill(negative, negative + g, std::uint8_t{0});
        return;
    }
    const int e = shared.e;
    exponent = static_cast<std::int16_t>(e);

    // (4) Each element: t = |x| / 2^(E-(m-1)), rounded, saturated at 2^m - 1.
    const int lsb_exponent = e - (format.mantissa_bits - 1);
    for (std::size_t i = 0; i < g; ++i) {
        if (i >= count) {
            magnitudes[i] = 0;
            negative[i] = 0;
            continue;
        }
        const std::uint32_t bits = float_bits(values[i]);
        negative[i] = static_cast<std::uint8_t>(bits >> 31);
        const Decomposed d = decompose(bits & 0x7FFFFFFFu);
        const int shift = lsb_exponent - d.lsb_exponent;
        std::uint64_t k;
        if (d.significand == 0) {
            k = 0;
        } else if (shift <= 0) {  // t is an integer; shift < 0 only when saturating
            k = -shift >= 40 ? max_k : std::uint64_t{d.significand} << -shift;
        } else {
            k = round_scaled<R>(d.significand, std::min(shift, 62), noise_of_lane[i], noise.noise_bits);
        }
        magnitudes[i] = static_cast<std::uint16_t>(std::min(k, max_k));
    }
}

}  // namespace

int floor_log2(float x) { return floor_log2_bits(float_bits(x) & 0x7FFFFFFFu); }

namespace {

const Format& checked(const Format& format, const NoiseSpec& noise) {
    if (auto error = validate(format)) throw std::invalid_argument("BFP format: " + *error);
    if (auto error = validate(noise)) throw std::invalid_argument("BFP noise: " + *error);
    return format;
}

}  // namespace

Quantizer::Quantizer(const Format& format, Rounding rounding, const NoiseSpec& noise)
    : m_format(checked(format, noise)),
      m_rounding(rounding),
      m_noise(noise),
      m_lfsr(noise.lfsr_bits, noise.seed, format.group_size) {}

void Quantizer::quantize_group(const float* values, std::size_t count, std::int16_t& exponent,
                               std::uint16_t* magnitudes, std::uint8_t* negative) {
    switch (m_rounding) {
    case Rounding::nearest:
        return quantize_group_impl<Rounding::nearest>(values, count, m_format, m_noise, m_lfsr, exponent, magnitudes,
                                                      negative);
    case Rounding::even:
        return quantize_group_impl<Rounding::even>(values, count, m_format, m_noise, m_lfsr, exponent, magnitudes,
                                                   negative);
    case Rounding::truncate:
        return quantize_group_impl<Rounding::truncate>(values, count, m_format, m_noise, m_lfsr, exponent, magnitudes,
                                                       negative);
    case Rounding::stochastic:
        return quantize_group_impl<Rounding::stochastic>(values, count, m_format, m_noise, m_lfsr, exponent, magnitudes,
                                                         negative);
    }
}

BfpTensor Quantizer::quantize(const float* values, std::size_t count) {
    const auto g = static_cast<std::size_t>(m_format.group_size);
    const std::size_t groups = (count + g - 1) / g;
    BfpTensor out;
    out.format = m_format;
    out.size = count;
    out.exponents.resize(groups);
    out.magnitudes.resize(groups * g);
    out.negative.resize(groups * g);
    for (std::size_t q = 0; q < groups; ++q) {
        const std::size_t first = q * g;
        quantize_group(values + first, std::min(g, count - first), out.exponents[q], &out.magnitudes[first],
                       &out.negative[first]);
    }
    return out;
}

namespace {

/// 2^e as a double, for |e| < 1000, from its exponent bits (std::ldexp is a libm call).
inline __attribute__((always_inline)) double power_of_two(int e) {
    const std::uint64_t bits = static_cast<std::uint64_t>(e + 1023) << 52;
    double v;
    std::memcpy(&v, &bits, sizeof v);
    return v;
}

/// quantize_group_impl followed by dequantisation, for one group, with the same noise draws
/// and shared exponent: t = |x| * 2^-lsb is exact (a float32 times a power of two), and so
/// are floor(t), the fraction t - floor(t) and k * lsb, so k is the integer the bit-level
/// rules give. In float where 2^-lsb and 2^lsb are normal floats, else in double.
template <Rounding R>
inline __attribute__((always_inline)) void quantize_dequantize_group(const float* values, std::size_t count,
                                                                     const Format& format, const NoiseSpec& noise,
                                                                     const std::uint32_t* noise_of_lane, float* out) {
    const std::uint32_t max_bits = max_magnitude_bits(values, count);
    if (max_bits == 0) {  // every value is +-0 and so is every k * 2^lsb, with its sign (common: ReLU, padding)
        if (out != values) std::copy_n(values, count, out);
        return;
    }
    const SharedExponent shared = shared_exponent(max_bits, format);
    if (shared.nan) {
        std::fill(out, out + count, std::numeric_limits<float>::quiet_NaN());
        return;
    }
    const int e = shared.e;
    const int lsb_exponent = e - (format.mantissa_bits - 1);
    const double down = power_of_two(-lsb_exponent);
    const double up = power_of_two(lsb_exponent);
    const auto max_k = static_cast<double>(format.max_magnitude());
    if (lsb_exponent >= -126 && lsb_exponent <= 126 && (R != Rounding::stochastic || noise.noise_bits <= 24)) {
        // The same steps in float, twice as wide per vector: 2^-lsb and 2^lsb are normal
        // floats, |x| * 2^-lsb is exact unless it falls below 2^-126 (where k = 0 either
        // way), t - floor(t) is exact, and k * 2^lsb is a grid value (validate(Format)).
        const auto down_f = static_cast<float>(down), up_f = static_cast<float>(up);
        const auto max_kf = static_cast<float>(format.max_magnitude());
        const auto noise_scale_f = static_cast<float>(power_of_two(noise.noise_bits));
        for (std::size_t i = 0; i < count; ++i) {
            float t = std::fabs(values[i]) * down_f;
            t = t < max_kf ? t : max_kf;
            const auto whole = static_cast<std::int32_t>(t);
            const float fraction = t - static_cast<float>(whole);
            std::int32_t k;
            if constexpr (R == Rounding::nearest) {
                k = whole + static_cast<std::int32_t>(fraction >= 0.5f);
            } else if constexpr (R == Rounding::truncate) {
                k = whole;
            } else if constexpr (R == Rounding::even) {
                k = whole + static_cast<std::int32_t>((fraction > 0.5f) | ((fraction == 0.5f) & ((whole & 1) != 0)));
            } else {
                const auto kept = static_cast<std::int32_t>(fraction * noise_scale_f);  // n bits below the LSB
                k = whole + ((kept + static_cast<std::int32_t>(noise_of_lane[i])) >> noise.noise_bits);
            }
            out[i] = std::copysign(static_cast<float>(k) * up_f, values[i]);
        }
        return;
    }
    const double noise_scale = power_of_two(noise.noise_bits);
    // t <= 2^m - 1 < 2^16 (clamped: saturating overflow can put |x| / lsb far above it, and
    // the clamp leaves k unchanged), so int32 holds every k.
    for (std::size_t i = 0; i < count; ++i) {
        const double t = std::min(std::fabs(static_cast<double>(values[i])) * down, max_k);
        double k;
        if constexpr (R == Rounding::nearest) {
            k = static_cast<double>(static_cast<std::int32_t>(t + 0.5));
        } else if constexpr (R == Rounding::truncate) {
            k = static_cast<double>(static_cast<std::int32_t>(t));
        } else if constexpr (R == Rounding::even) {
            constexpr double kTwo52 = 4503599627370496.0;
            k = (t + kTwo52) - kTwo52;  // the FPU's own round-half-to-even
        } else {
            const auto whole = static_cast<std::int64_t>(t);
            const auto kept =
                static_cast<std::int64_t>((t - static_cast<double>(whole)) * noise_scale);  // n bits below the LSB
            k = static_cast<double>(whole + ((kept + static_cast<std::int64_t>(noise_of_lane[i])) >> noise.noise_bits));
        }
        out[i] = std::copysign(static_cast<float>(k * up), values[i]);
    }
}

/// All groups of `count` values; full groups of FAST's g = 16 get a constant trip count,
/// which lets the compiler unroll and vectorise the element loops without remainders.
template <Rounding R>
inline __attribute__((always_inline)) void quantize_dequantize_all(const float* values, std::size_t count,
                                                                   const Format& format, const NoiseSpec& noise,
                                                                   LfsrBank& lfsr, float* out) {
    const auto g = static_cast<std::size_t>(format.group_size);
    GroupNoise noise_buffer;  // one buffer for all groups
    for (std::size_t first = 0; first < count; first += g) {
        const std::size_t n = std::min(g, count - first);
        if constexpr (R == Rounding::stochastic) noise_buffer.draw(g, noise, lfsr);
        constexpr std::size_t kFastGroupSize = 16;  // FAST's g
        if (n == kFastGroupSize)
            quantize_dequantize_group<R>(values + first, kFastGroupSize, format, noise, noise_buffer.data(),
                                         out + first);
        else
            quantize_dequantize_group<R>(values + first, n, format, noise, noise_buffer.data(), out + first);
    }
}

#if defined(__x86_64__) && defined(__GNUC__)
#define FASTSIM_AVX2_KERNEL 1

/// The per-quantiser constants of the AVX2 kernel.
struct Avx2Constants {
    __m256i magnitude_mask, one_bit;
    __m256 max_k, half, one, noise_scale;
    __m128i noise_shift;
};

/// k * 2^lsb with x's sign for the 8 values v (magnitude bits a), each lane's noise in
/// lane_noise: the float path's steps.
template <Rounding R>
__attribute__((target("avx2"), always_inline)) inline __m256 rounded_avx2(__m256 v, __m256i a, __m256 down, __m256 up,
                                                                          __m256i lane_noise, const Avx2Constants& c) {
    const __m256 t = _mm256_min_ps(_mm256_mul_ps(_mm256_castsi256_ps(a), down), c.max_k);
    const __m256i whole = _mm256_cvttps_epi32(t);
    const __m256 whole_f = _mm256_cvtepi32_ps(whole);
    const __m256 fraction = _mm256_sub_ps(t, whole_f);
    __m256 k;
    if constexpr (R == Rounding::nearest) {
        k = _mm256_add_ps(whole_f, _mm256_and_ps(_mm256_cmp_ps(fraction, c.half, _CMP_GE_OQ), c.one));
    } else if constexpr (R == Rounding::truncate) {
        k = whole_f;
    } else if constexpr (R == Rounding::even) {
        const __m256 odd = _mm256_castsi256_ps(_mm256_cmpeq_epi32(_mm256_and_si256(whole, c.one_bit), c.one_bit));
        const __m256 up_tie = _mm256_or_ps(_mm256_cmp_ps(fraction, c.half, _CMP_GT_OQ),
                                           _mm256_and_ps(_mm256_cmp_ps(fraction, c.half, _CMP_EQ_OQ), odd));
        k = _mm256_add_ps(whole_f, _mm256_and_ps(up_tie, c.one));
    } else {
        const __m256i kept = _mm256_cvttps_epi32(_mm256_mul_ps(fraction, c.noise_scale));  // n bits below the LSB
        k = _mm256_cvtepi32_ps(
            _mm256_add_epi32(whole, _mm256_srl_epi32(_mm256_add_epi32(kept, lane_noise), c.noise_shift)));
    }
    const __m256 sign = _mm256_andnot_ps(_mm256_castsi256_ps(c.magnitude_mask), v);
    return _mm256_or_ps(_mm256_mul_ps(k, up), sign);
}

/// 2^e as 8 floats, for normal e.
__attribute__((target("avx2"), always_inline)) inline __m256 float_power_avx2(int e) {
    return _mm256_castsi256_ps(_mm256_set1_epi32((e + 127) << 23));
}

/// FAST's g = 16 in AVX2 registers, one group in two vectors: the steps of the float path of
/// quantize_dequantize_group, instruction for instruction the same IEEE single-precision
/// operations (no FMA), so the bits are the same. A group whose maximum is subnormal or
/// non-finite, that overflows, or whose 2^+-lsb are not normal floats takes the generic group
/// code with the noise already drawn. `rows` rows of `count` values each, every row grouped
/// from its start; a short last group is read and written through masks.
/// Stochastic rounding needs noise.noise_bits <= 24 (the float path's limit).
template <Rounding R>
__attribute__((target("avx2"))) void quantize_dequantize_g16_avx2(const float* values, std::size_t rows,
                                                                  std::size_t count, const Format& format,
                                                                  const NoiseSpec& noise, LfsrBank& lfsr, float* out) {
    constexpr std::size_t kGroup = 16;
    const Avx2Constants c{_mm256_set1_epi32(0x7FFFFFFF),
                          _mm256_set1_epi32(1),
                          _mm256_set1_ps(static_cast<float>(format.max_magnitude())),
                          _mm256_set1_ps(0.5f),
                          _mm256_set1_ps(1.0f),
                          _mm256_set1_ps(static_cast<float>(power_of_two(noise.noise_bits))),
                          _mm_cvtsi32_si128(noise.noise_bits)};
    const int min_exponent = format.min_exponent(), max_exponent = format.max_exponent();
    const int mantissa_bits = format.mantissa_bits;
    // Stochastic rounding: each lane's draws for up to 32 / n successive groups come from one
    // leap of n * draws steps (first draw in the top bits); group j of them shifts its draw down.
    const int noise_bits = noise.noise_bits;
    const int draws_per_leap = 32 / noise_bits;
    const __m256i noise_mask =
        _mm256_set1_epi32(static_cast<int>(noise_bits == 32 ? 0xFFFFFFFFu : (1u << noise_bits) - 1u));
    alignas(32) std::uint32_t leap_bits[kGroup];
    __m256i leap_low = _mm256_setzero_si256(), leap_high = leap_low;
    int draws_left = 0;  // in leap_bits

    const std::size_t groups_per_row = (count + kGroup - 1) / kGroup;
    std::size_t groups_left = rows * groups_per_row;
    for (std::size_t row = 0; row < rows; ++row, values += count, out += count) {
        for (std::size_t first = 0; first < count; first += kGroup, --groups_left) {
            const std::size_t n = std::min(kGroup, count - first);
            __m256i noise_low = _mm256_setzero_si256(), noise_high = noise_low;
            if constexpr (R == Rounding::stochastic) {
                if (draws_left == 0) {
                    draws_left =
                        static_cast<int>(std::min<std::size_t>(static_cast<std::size_t>(draws_per_leap), groups_left));
                    lfsr.draw_lanes(noise_bits * draws_left, kGroup, leap_bits);
                    leap_low = _mm256_load_si256(reinterpret_cast<const __m256i*>(leap_bits));
                    leap_high = _mm256_load_si256(reinterpret_cast<const __m256i*>(leap_bits + 8));
                }
                --draws_left;
                const __m128i shift = _mm_cvtsi32_si128(noise_bits * draws_left);
                noise_low = _mm256_and_si256(_mm256_srl_epi32(leap_low, shift), noise_mask);
                noise_high = _mm256_and_si256(_mm256_srl_epi32(leap_high, shift), noise_mask);
            }
            const float* x = values + first;
            float* y = out + first;
            __m256i mask_low = _mm256_set1_epi32(-1), mask_high = mask_low;
            __m256 v0, v1;
            if (n == kGroup) {
                v0 = _mm256_loadu_ps(x);
                v1 = _mm256_loadu_ps(x + 8);
            } else {
                const __m256i index = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
                mask_low = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), index);
                mask_high = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n) - 8), index);
                v0 = _mm256_maskload_ps(x, mask_low);
                v1 = _mm256_maskload_ps(x + 8, mask_high);
            }
            const __m256i a0 = _mm256_and_si256(_mm256_castps_si256(v0), c.magnitude_mask);
            const __m256i a1 = _mm256_and_si256(_mm256_castps_si256(v1), c.magnitude_mask);
            __m256i m = _mm256_max_epu32(a0, a1);
            m = _mm256_max_epu32(m, _mm256_permute2x128_si256(m, m, 1));
            m = _mm256_max_epu32(m, _mm256_shuffle_epi32(m, 0x4E));
            m = _mm256_max_epu32(m, _mm256_shuffle_epi32(m, 0xB1));
            const auto max_bits = static_cast<std::uint32_t>(_mm256_cvtsi256_si32(m));
            const int biased = static_cast<int>(max_bits >> 23);
            const int e = std::max(biased - 127, min_exponent);
            // An all-zero group (common: ReLU, padding) needs no branch of its own: any normal
            // 2^lsb (here 1) rounds +-0 to +-0, signs kept, as the generic code copies it.
            const int lsb_exponent = max_bits == 0 ? 0 : e - (mantissa_bits - 1);
            const bool subnormal_max = (biased == 0) & (max_bits != 0);
            if (subnormal_max | (biased == 255) | (e > max_exponent) | (lsb_exponent < -126) | (lsb_exponent > 126)) {
                alignas(32) std::uint32_t noise_of_lane[kGroup];
                _mm256_store_si256(reinterpret_cast<__m256i*>(noise_of_lane), noise_low);
                _mm256_store_si256(reinterpret_cast<__m256i*>(noise_of_lane + 8), noise_high);
                quantize_dequantize_group<R>(x, n, format, noise, noise_of_lane, y);
                continue;
            }
            const __m256 down = float_power_avx2(-lsb_exponent), up = float_power_avx2(lsb_exponent);
            const __m256 r0 = rounded_avx2<R>(v0, a0, down, up, noise_low, c);
            const __m256 r1 = rounded_avx2<R>(v1, a1, down, up, noise_high, c);
            if (n == kGroup) {
                _mm256_storeu_ps(y, r0);
                _mm256_storeu_ps(y + 8, r1);
            } else {
                _mm256_maskstore_ps(y, mask_low, r0);
                _mm256_maskstore_ps(y + 8, mask_high, r1);
            }
        }
    }
}

/// Whether the g = 16 AVX2 kernel can run this quantiser on this CPU.
bool avx2_kernel_applies(const Format& format, Rounding rounding, const NoiseSpec& noise) {
    static const bool cpu_has_avx2 = __builtin_cpu_supports("avx2") != 0;
    return cpu_has_avx2 && format.group_size == 16 && (rounding != Rounding::stochastic || noise.noise_bits <= 24);
}
#endif

// The element loops vectorise; on x86-64 they are also compiled for AVX2 (twice SSE2's
// width, and unsigned max for the shared exponent), chosen at load time by the CPU. The
// arithmetic is the same IEEE single precision either way (no FMA), so the bits are too.
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__SANITIZE_ADDRESS__)
#define FASTSIM_VECTOR_CLONES __attribute__((target_clones("avx2", "default")))
#else
#define FASTSIM_VECTOR_CLONES
#endif

FASTSIM_VECTOR_CLONES void quantize_dequantize_rounding(Rounding rounding, const float* values, std::size_t count,
                                                        const Format& format, const NoiseSpec& noise, LfsrBank& lfsr,
                                                        float* out) {
    switch (rounding) {
    case Rounding::nearest: return quantize_dequantize_all<Rounding::nearest>(values, count, format, noise, lfsr, out);
    case Rounding::even: return quantize_dequantize_all<Rounding::even>(values, count, format, noise, lfsr, out);
    case Rounding::truncate:
        return quantize_dequantize_all<Rounding::truncate>(values, count, format, noise, lfsr, out);
    case Rounding::stochastic:
        return quantize_dequantize_all<Rounding::stochastic>(values, count, format, noise, lfsr, out);
    }
}

}  // namespace

void Quantizer::quantize_dequantize(const float* values, std::size_t count, float* out) {
    quantize_dequantize_rows(values, 1, count, out);
}

void Quantizer::quantize_dequantize_rows(const float* values, std::size_t rows, std::size_t k, float* out) {
#ifdef FASTSIM_AVX2_KERNEL
    if (avx2_kernel_applies(m_format, m_rounding, m_noise)) {
        switch (m_rounding) {
        case Rounding::nearest:
            return quantize_dequantize_g16_avx2<Rounding::nearest>(values, rows, k, m_format, m_noise, m_lfsr, out);
        case Rounding::even:
            return quantize_dequantize_g16_avx2<Rounding::even>(values, rows, k, m_format, m_noise, m_lfsr, out);
        case Rounding::truncate:
            return quantize_dequantize_g16_avx2<Rounding::truncate>(values, rows, k, m_format, m_noise, m_lfsr, out);
        case Rounding::stochastic:
            return quantize_dequantize_g16_avx2<Rounding::stochastic>(values, rows, k, m_format, m_noise, m_lfsr, out);
        }
    }
#endif
    for (std::size_t r = 0; r < rows; ++r)
        quantize_dequantize_rounding(m_rounding, values + r * k, k, m_format, m_noise, m_lfsr, out + r * k);
}

void Quantizer::set_mantissa_bits(int mantissa_bits) {
    Format next = m_format;
    next.mantissa_bits = mantissa_bits;
    if (auto error = validate(next)) throw std::invalid_argument("BFP format: " + *error);
    m_format = next;
}

float dequantize_element(const BfpTensor& tensor, std::size_t i) {
    const std::size_t group = i / static_cast<std::size_t>(tensor.format.group_size);
    if (tensor.is_nan_group(group)) return std::numeric_limits<float>::quiet_NaN();
    const int lsb_exponent = tensor.exponents[group] - (tensor.format.mantissa_bits - 1);
    const float magnitude = std::ldexp(static_cast<float>(tensor.magnitudes[i]), lsb_exponent);
    return tensor.negative[i] ? -magnitude : magnitude;
}

std::vector<float> dequantize(const BfpTensor& tensor) {
    std::vector<float> out(tensor.size);
    const auto g = static_cast<std::size_t>(tensor.format.group_size);
    for (std::size_t q = 0; q < tensor.group_count(); ++q) {
        const std::size_t first = q * g;
        const std::size_t last = std::min(first + g, tensor.size);
        if (tensor.is_nan_group(q)) {
            std::fill(out.begin() + static_cast<std::ptrdiff_t>(first), out.begin() + static_cast<std::ptrdiff_t>(last),
                      std::numeric_limits<float>::quiet_NaN());
            continue;
        }
        // 2^(E-(m-1)) >= 2^-149 by validate(Format), and k * 2^q is a float32: exact product.
        const float lsb = std::ldexp(1.0f, tensor.exponents[q] - (tensor.format.mantissa_bits - 1));
        for (std::size_t i = first; i < last; ++i) {
            const float magnitude = static_cast<float>(tensor.magnitudes[i]) * lsb;
            out[i] = tensor.negative[i] ? -magnitude : magnitude;
        }
    }
    return out;
}

}  // namespace fastsim::bfp
