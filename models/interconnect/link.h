// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>

#include "common/enum_names.h"
#include "common/units.h"

namespace fastsim::interconnect {

/// How a message crosses the vertex at the end of a channel (link.switching): cut-through, its
/// head going on as soon as it arrives (real switches pipeline packets), or store-and-forward,
/// the whole message received first (ASTRA-sim's congestion-aware backend).
enum class Switching : std::uint8_t { cut_through, store_and_forward };
const EnumNames<Switching, 2>& enum_names(Switching);

/// One full-duplex link: two directed channels, each with these parameters and its own
/// "free at" time (docs/interconnect.md).
struct LinkParams {
    double bandwidth_gb_per_s = 0;  ///< per direction; GB = 1e9 bytes
    double latency_ns = 0;          ///< head latency of one hop
    double energy_pj_per_bit = 0;   ///< per bit carried by one channel
    Switching switching = Switching::cut_through;
};

/// A link's parameters in the integer units the timing uses, each rounded once from LinkParams.
struct LinkTiming {
    std::uint64_t bits_per_s = 0;  ///< llround(bandwidth_gb_per_s * 8e9), >= 1
    Picoseconds latency_ps{0};     ///< llround(latency_ns * 1000)
};

/// Checks `params` (bandwidth finite and > 0 and at least 1 bit/s, latency and energy finite
/// and >= 0) and converts it; throws std::invalid_argument naming the bad field.
LinkTiming link_timing(const LinkParams& params);

/// Time a channel of `bits_per_s` is busy carrying `bytes`: ceil(bytes * 8 * 1e12 / bits_per_s)
/// ps, exact in 128-bit integers. Throws SizeOverflow if the result exceeds 64 bits.
Picoseconds occupancy_ps(std::uint64_t bytes, std::uint64_t bits_per_s);

}  // namespace fastsim::interconnect
