// SPDX-License-Identifier: MIT
#include "interconnect/network.h"

#include <algorithm>

namespace fastsim::interconnect {

Network::Network(const Topology& topology)
    : m_topology(topology), m_free_at_ps(topology.channel_count(), Picoseconds(0)), m_stats(topology.channel_count()) {}

Picoseconds Network::transfer(std::size_t src, std::size_t dst, std::uint64_t bytes, Picoseconds ready_ps,
                              std::vector<HopInterval>* hops) {
    m_topology.route_into(src, dst, m_route);
    if (hops) hops->clear();
    Picoseconds head = ready_ps, tail_in = ready_ps, arrival = ready_ps;
    for (const ChannelId id : m_route) {
        const Channel& ch = m_topology.channels()[id];
        const Picoseconds start = std::max(head, m_free_at_ps[id]);
        const Picoseconds end = std::max(start + occupancy_ps(bytes, ch.timing.bits_per_s), tail_in);
        m_free_at_ps[id] = end;
        if (hops) hops->push_back({id, start, end});
        ChannelStats& s = m_stats[id];
        if (s.transfers == 0) m_used.push_back(id);
        s.busy_ps += end - start;
        s.bytes += bytes;
        s.transfers += 1;
        s.energy_pj += static_cast<double>(bytes) * 8.0 * ch.params.energy_pj_per_bit;
        head = start + ch.timing.latency_ps;
        tail_in = end + ch.timing.latency_ps;
        arrival = tail_in;
    }
    return arrival;
}

void Network::reset() {
    for (const ChannelId id : m_used) {
        m_free_at_ps[id] = Picoseconds(0);
        m_stats[id] = ChannelStats{};
    }
    m_used.clear();
}

}  // namespace fastsim::interconnect
