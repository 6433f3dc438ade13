// SPDX-License-Identifier: MIT
#include "interconnect/link.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include "common/checked.h"

namespace fastsim::interconnect {

const EnumNames<Switching, 2>& enum_names(Switching) {
    static constexpr EnumNames<Switching, 2> kNames{{
        {"cut_through", Switching::cut_through},
        {"store_and_forward", Switching::store_and_forward},
    }};
    return kNames;
}
namespace {

__extension__ using Uint128 = unsigned __int128;

constexpr std::uint64_t kPsPerSecond = 1'000'000'000'000ull;

}  // namespace

LinkTiming link_timing(const LinkParams& params) {
    const double bits_per_s = params.bandwidth_gb_per_s * 8e9;
    if (!std::isfinite(bits_per_s) || !(bits_per_s >= 0.5) || bits_per_s > 9e18)
        throw std::invalid_argument("link bandwidth_gb_per_s must be finite and positive (at least 1 bit/s), got " +
                                    std::to_string(params.bandwidth_gb_per_s));
    if (!std::isfinite(params.latency_ns) || params.latency_ns < 0 || params.latency_ns > 1.8e13)
        throw std::invalid_argument("link latency_ns must be finite and >= 0, got " +
                                    std::to_string(params.latency_ns));
    if (!std::isfinite(params.energy_pj_per_bit) || params.energy_pj_per_bit < 0)
        throw std::invalid_argument("link energy_pj_per_bit must be finite and >= 0, got " +
                                    std::to_string(params.energy_pj_per_bit));
    LinkTiming t;
    t.bits_per_s = static_cast<std::uint64_t>(std::llround(bits_per_s));
    t.latency_ps = Picoseconds(static_cast<std::uint64_t>(std::llround(params.latency_ns * 1000.0)));
    return t;
}

Picoseconds occupancy_ps(std::uint64_t bytes, std::uint64_t bits_per_s) {
    if (bits_per_s == 0) throw std::invalid_argument("occupancy_ps: zero bandwidth");
    const Uint128 scaled = Uint128{bytes} * 8u * kPsPerSecond;  // < 2^64 * 2^3 * 2^40
    const Uint128 ps = (scaled + bits_per_s - 1) / bits_per_s;
    if (ps > std::numeric_limits<std::uint64_t>::max()) throw SizeOverflow("picoseconds a link is busy");
    return Picoseconds(static_cast<std::uint64_t>(ps));
}

}  // namespace fastsim::interconnect
