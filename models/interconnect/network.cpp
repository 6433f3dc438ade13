// SPDX-License-Identifier: MIT
#include "interconnect/network.h"

#include <algorithm>
#include <stdexcept>

namespace fastsim::interconnect {

Network::Network(const Topology& topology)
    : m_topology(topology), m_free_at_ps(topology.channel_count(), Picoseconds(0)), m_stats(topology.channel_count()) {}

void Network::post(std::size_t src, std::size_t dst, std::uint64_t bytes, Picoseconds ready_ps, PostKey key,
                   std::uint64_t cookie) {
    std::size_t slot;
    if (m_free_slots.empty()) {
        slot = m_in_flight.size();
        m_in_flight.emplace_back();
    } else {
        slot = m_free_slots.back();
        m_free_slots.pop_back();
    }
    InFlight& m = m_in_flight[slot];
    m_topology.route_into(src, dst, m.route);
    m.hop = 0;
    m.head = m.tail_in = ready_ps;
    m.bytes = bytes;
    m.key = key;
    m.cookie = cookie;
    m_pending.push({ready_ps, key, slot});
}

std::optional<Picoseconds> Network::next_head_ps() const {
    if (m_pending.empty()) return std::nullopt;
    return m_pending.top().head;
}

bool Network::book_hop(InFlight& m, std::vector<Reservation>* reserved) {
    if (m.hop == m.route.size()) return true;  // src == dst: arrives when ready
    const ChannelId id = m.route[m.hop++];
    const Channel& ch = m_topology.channels()[id];
    const Picoseconds start = std::max(m.head, m_free_at_ps[id]);
    const Picoseconds end = std::max(start + occupancy_ps(m.bytes, ch.timing.bits_per_s), m.tail_in);
    m_free_at_ps[id] = end;
    if (reserved) reserved->push_back({m.cookie, {id, start, end}});
    ChannelStats& s = m_stats[id];
    if (s.transfers == 0) m_used.push_back(id);
    s.busy_ps += end - start;
    s.bytes += m.bytes;
    s.transfers += 1;
    s.energy_pj += static_cast<double>(m.bytes) * 8.0 * ch.params.energy_pj_per_bit;
    // Cut-through: the head goes on as it arrives; store-and-forward: once the tail is in.
    m.head = (ch.params.switching == Switching::store_and_forward ? end : start) + ch.timing.latency_ps;
    m.tail_in = end + ch.timing.latency_ps;
    return m.hop == m.route.size();
}

void Network::advance(Picoseconds until_ps, std::vector<Delivery>& delivered, std::vector<Reservation>* reserved) {
    while (!m_pending.empty() && m_pending.top().head <= until_ps) {
        const std::size_t slot = m_pending.top().slot;
        m_pending.pop();
        InFlight& m = m_in_flight[slot];
        if (book_hop(m, reserved)) {
            delivered.push_back({m.cookie, m.tail_in});
            m_free_slots.push_back(slot);
        } else {
            m_pending.push({m.head, m.key, slot});
        }
    }
}

Picoseconds Network::transfer(std::size_t src, std::size_t dst, std::uint64_t bytes, Picoseconds ready_ps,
                              std::vector<HopInterval>* hops) {
    if (!m_pending.empty()) throw std::logic_error("Network::transfer: other messages are still pending");
    post(src, dst, bytes, ready_ps, PostKey{}, 0);
    std::vector<Delivery> delivered;
    std::vector<Reservation> reserved;
    while (delivered.empty()) advance(*next_head_ps(), delivered, hops ? &reserved : nullptr);
    if (hops) {
        hops->clear();
        for (const Reservation& r : reserved) hops->push_back(r.hop);
    }
    return delivered.front().arrival_ps;
}

void Network::reset() {
    for (const ChannelId id : m_used) {
        m_free_at_ps[id] = Picoseconds(0);
        m_stats[id] = ChannelStats{};
    }
    m_used.clear();
    // Keep the slots (and their routes' buffers), handed out from slot 0 again as when new.
    m_free_slots.resize(m_in_flight.size());
    for (std::size_t i = 0; i < m_free_slots.size(); ++i) m_free_slots[i] = m_free_slots.size() - 1 - i;
    m_pending = {};
}

}  // namespace fastsim::interconnect
