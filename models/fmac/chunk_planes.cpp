// SPDX-License-Identifier: MIT
#include "fmac/chunk_planes.h"

namespace fastsim::fmac {

ChunkPlanes::ChunkPlanes(const bfp::BfpMatrix& matrix)
    : m_exponents(matrix.data.exponents),
      m_group_size(static_cast<std::size_t>(matrix.data.format.group_size)),
      m_lane_stride((m_group_size + kLaneBlock - 1) / kLaneBlock * kLaneBlock),
      m_rows(matrix.rows),
      m_groups_per_row(matrix.groups_per_row),
      m_mantissa_bits(matrix.data.format.mantissa_bits),
      m_chunks_per_element(matrix.data.format.chunks_per_element()) {
    const std::size_t groups = m_exponents.size();
    m_chunks.assign(groups * static_cast<std::size_t>(m_chunks_per_element) * m_lane_stride, 0);
    for (std::size_t q = 0; q < groups; ++q)
        for (int i = 0; i < m_chunks_per_element; ++i) {
            std::int16_t* lanes =
                &m_chunks[(q * static_cast<std::size_t>(m_chunks_per_element) + static_cast<std::size_t>(i)) *
                          m_lane_stride];
            for (std::size_t l = 0; l < m_group_size; ++l) {
                const std::size_t e = q * m_group_size + l;
                const int c = (matrix.data.magnitudes[e] >> (2 * i)) & 3;
                lanes[l] = static_cast<std::int16_t>(matrix.data.negative[e] ? -c : c);
            }
        }
}

}  // namespace fastsim::fmac
