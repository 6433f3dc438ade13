// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <vector>

#include "common/units.h"
#include "interconnect/topology.h"

namespace fastsim::interconnect {

/// What one directed channel carried.
struct ChannelStats {
    Picoseconds busy_ps{0};  ///< sum of reserved intervals (occupancy, stretched by a slower upstream hop)
    std::uint64_t bytes = 0;
    std::uint64_t transfers = 0;
    double energy_pj = 0;  ///< bits * energy_pj_per_bit
};

/// When a transfer held one directed channel of its route: [start_ps, end_ps) = [start_k, end_k)
/// of the timing below.
struct HopInterval {
    ChannelId channel = 0;
    Picoseconds start_ps{0};
    Picoseconds end_ps{0};
};

/// Link state over a Topology, loosely timed: each directed channel keeps the time it is free
/// at, and a transfer reserves the channels of its route when it is issued.
///
/// Timing of transfer(src, dst, bytes, ready) over route channels c_0 .. c_{h-1}, with
/// occupancy O_k = ceil(bits * 1e12 / bits_per_s(c_k)) ps and latency L_k (cut-through):
///   head_0 = ready;  tail_in_0 = ready
///   start_k = max(head_k, free_at(c_k))          the head enters hop k
///   end_k   = max(start_k + O_k, tail_in_k)      the tail leaves; not before it entered the hop
///   free_at(c_k) = end_k;  head_{k+1} = start_k + L_k;  tail_in_{k+1} = end_k + L_k
///   arrival = end_{h-1} + L_{h-1}
/// One uncontended hop takes L + O; h equal uncontended hops take h L + O. src == dst arrives at
/// `ready` and uses no channel; zero bytes take the latencies only (still waiting for busy
/// channels).
///
/// Loosely-timed caveat: reservations are made in call order, so a transfer reserved for a
/// later time can delay one issued afterwards that would have started earlier.
class Network {
public:
    /// Keeps a reference: `topology` must outlive the Network and not gain links meanwhile.
    explicit Network(const Topology& topology);

    /// Reserves the route from vertex `src` to `dst` for `bytes` ready at `ready_ps`; returns
    /// the time the tail arrives at dst. With `hops`, also fills it (cleared first) with the
    /// interval each channel of the route is held, in route order.
    Picoseconds transfer(std::size_t src, std::size_t dst, std::uint64_t bytes, Picoseconds ready_ps,
                         std::vector<HopInterval>* hops = nullptr);

    [[nodiscard]] const std::vector<ChannelStats>& stats() const { return m_stats; }
    [[nodiscard]] Picoseconds free_at_ps(ChannelId channel) const { return m_free_at_ps.at(channel); }
    [[nodiscard]] const Topology& topology() const { return m_topology; }

    /// All channels free at 0, all stats zero. Takes time in the channels used since the last reset.
    void reset();

private:
    const Topology& m_topology;
    std::vector<Picoseconds> m_free_at_ps;
    std::vector<ChannelStats> m_stats;
    std::vector<ChannelId> m_route;  ///< scratch, reused by every transfer
    std::vector<ChannelId> m_used;   ///< channels with a transfer since the last reset
};

}  // namespace fastsim::interconnect
