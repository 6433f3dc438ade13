// SPDX-License-Identifier: MIT
#include "bfp/packing.h"

namespace fastsim::bfp {
namespace {

class BitWriter {
public:
    explicit BitWriter(std::vector<std::uint64_t>& words) : m_words(words) {}
    void put(std::uint64_t value, int bits) {
        for (int b = 0; b < bits; ++b, ++m_position) {
            if (m_position % 64 == 0) m_words.push_back(0);
            m_words.back() |= ((value >> b) & 1u) << (m_position % 64);
        }
    }
    [[nodiscard]] std::uint64_t position() const { return m_position; }

private:
    std::vector<std::uint64_t>& m_words;
    std::uint64_t m_position = 0;
};

class BitReader {
public:
    explicit BitReader(const std::vector<std::uint64_t>& words) : m_words(words) {}
    std::uint64_t get(int bits) {
        std::uint64_t value = 0;
        for (int b = 0; b < bits; ++b, ++m_position)
            value |= ((m_words[m_position / 64] >> (m_position % 64)) & 1u) << b;
        return value;
    }

private:
    const std::vector<std::uint64_t>& m_words;
    std::uint64_t m_position = 0;
};

}  // namespace

PackedTensor pack(const BfpTensor& tensor) {
    const Format& f = tensor.format;
    const auto g = static_cast<std::size_t>(f.group_size);
    const std::uint64_t nan_field = (std::uint64_t{1} << f.exponent_bits) - 1;
    PackedTensor out;
    out.format = f;
    out.size = tensor.size;
    out.groups = tensor.group_count();
    BitWriter exponents(out.exponent_plane);
    BitWriter mantissas(out.mantissa_plane);
    for (std::size_t q = 0; q < out.groups; ++q) {
        exponents.put(
            tensor.is_nan_group(q) ? nan_field : static_cast<std::uint64_t>(tensor.exponents[q] - f.min_exponent()),
            f.exponent_bits);
        for (int c = 0; c < f.chunks_per_element(); ++c) {
            const int chunk_shift = 2 * (f.chunks_per_element() - 1 - c);  // most significant chunk first
            for (std::size_t j = 0; j < g; ++j) {
                const std::size_t i = q * g + j;
                const std::uint64_t chunk = (tensor.magnitudes[i] >> chunk_shift) & 3u;
                mantissas.put((std::uint64_t{tensor.negative[i]} << 2) | chunk, 3);
            }
        }
    }
    out.exponent_plane_bits = exponents.position();
    out.mantissa_plane_bits = mantissas.position();
    return out;
}

BfpTensor unpack(const PackedTensor& packed) {
    const Format& f = packed.format;
    const auto g = static_cast<std::size_t>(f.group_size);
    const std::uint64_t nan_field = (std::uint64_t{1} << f.exponent_bits) - 1;
    BfpTensor out;
    out.format = f;
    out.size = packed.size;
    out.exponents.resize(packed.groups);
    out.magnitudes.assign(packed.groups * g, 0);
    out.negative.assign(packed.groups * g, 0);
    BitReader exponents(packed.exponent_plane);
    BitReader mantissas(packed.mantissa_plane);
    for (std::size_t q = 0; q < packed.groups; ++q) {
        const std::uint64_t field = exponents.get(f.exponent_bits);
        out.exponents[q] =
            field == nan_field ? kNanExponent : static_cast<std::int16_t>(static_cast<int>(field) + f.min_exponent());
        for (int c = 0; c < f.chunks_per_element(); ++c) {
            const int chunk_shift = 2 * (f.chunks_per_element() - 1 - c);  // most significant chunk first
            for (std::size_t j = 0; j < g; ++j) {
                const std::size_t i = q * g + j;
                const std::uint64_t bits = mantissas.get(3);
                out.magnitudes[i] = static_cast<std::uint16_t>(out.magnitudes[i] | ((bits & 3u) << chunk_shift));
                if (c == 0) out.negative[i] = static_cast<std::uint8_t>(bits >> 2);
            }
        }
    }
    return out;
}

}  // namespace fastsim::bfp
