// SPDX-License-Identifier: MIT
#pragma once

#include <cstdint>
#include <optional>
#include <queue>
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

/// The order in which messages whose heads reach a channel at the same time are served: the
/// sender's node, its stream, then its own posting order (a NIC's FIFO). Never the order in which
/// a simulator happens to walk programs or threads.
struct PostKey {
    std::uint64_t node = 0;
    std::uint64_t stream = 0;
    std::uint64_t seq = 0;
    friend bool operator<(const PostKey& a, const PostKey& b) {
        return a.node != b.node ? a.node < b.node : a.stream != b.stream ? a.stream < b.stream : a.seq < b.seq;
    }
};

/// A message whose tail has been scheduled all the way: `cookie` as posted, and when it arrives.
struct Delivery {
    std::uint64_t cookie = 0;
    Picoseconds arrival_ps{0};
};

/// A channel reservation made by advance(): the message's cookie and the interval.
struct Reservation {
    std::uint64_t cookie = 0;
    HopInterval hop;
};

/// Link state over a Topology: each directed channel keeps the time it is free at, and serves
/// the messages that reach it in the order their heads arrive (ties in PostKey order). A posted
/// message books one hop at a time, when its head reaches that hop (advance), so a message
/// posted later but reaching a channel earlier goes first.
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
class Network {
public:
    /// Keeps a reference: `topology` must outlive the Network and not gain links meanwhile.
    explicit Network(const Topology& topology);

    /// A message from vertex `src` to `dst` of `bytes`, ready at `ready_ps`. Its hops are booked
    /// by advance(); `cookie` names it there. The order holds for messages ready no earlier than
    /// the heads already booked; one ready earlier (a replay that starts again on a network an
    /// earlier one left busy) queues behind what those heads booked.
    void post(std::size_t src, std::size_t dst, std::uint64_t bytes, Picoseconds ready_ps, PostKey key,
              std::uint64_t cookie);
    /// When the earliest head of a posted message reaches its next channel; none if none is pending.
    [[nodiscard]] std::optional<Picoseconds> next_head_ps() const;
    /// Books, in (head time, PostKey) order, every hop whose head arrives at or before
    /// `until_ps`; appends each message booked to its last hop to `delivered` (arrival after
    /// `until_ps` when a latency follows), and each reservation to `reserved` if given.
    void advance(Picoseconds until_ps, std::vector<Delivery>& delivered, std::vector<Reservation>* reserved = nullptr);

    /// One message booked on its own (std::logic_error if others are pending): post, then
    /// advance until it is delivered; returns its arrival. With `hops`, also fills it (cleared first)
    /// with the interval each channel of its route is held, in route order.
    Picoseconds transfer(std::size_t src, std::size_t dst, std::uint64_t bytes, Picoseconds ready_ps,
                         std::vector<HopInterval>* hops = nullptr);

    [[nodiscard]] const std::vector<ChannelStats>& stats() const { return m_stats; }
    [[nodiscard]] Picoseconds free_at_ps(ChannelId channel) const { return m_free_at_ps.at(channel); }
    [[nodiscard]] const Topology& topology() const { return m_topology; }

    /// All channels free at 0, all stats zero, nothing pending. Takes time in the channels used
    /// since the last reset.
    void reset();

private:
    /// A posted message on its way: its route and where its head is.
    struct InFlight {
        std::vector<ChannelId> route;
        std::size_t hop = 0;  ///< the next channel to book
        Picoseconds head{0}, tail_in{0};
        std::uint64_t bytes = 0;
        PostKey key;
        std::uint64_t cookie = 0;
    };
    struct Pending {  ///< a head reaching its next channel
        Picoseconds head;
        PostKey key;
        std::size_t slot;
        friend bool operator>(const Pending& a, const Pending& b) {
            return a.head != b.head ? a.head > b.head : b.key < a.key;
        }
    };
    /// Books message `slot`'s next hop; true when that was its last.
    bool book_hop(InFlight& m, std::vector<Reservation>* reserved);

    const Topology& m_topology;
    std::vector<Picoseconds> m_free_at_ps;
    std::vector<ChannelStats> m_stats;
    std::vector<ChannelId> m_used;  ///< channels with a transfer since the last reset
    std::vector<InFlight> m_in_flight;
    std::vector<std::size_t> m_free_slots;
    std::priority_queue<Pending, std::vector<Pending>, std::greater<>> m_pending;
};

}  // namespace fastsim::interconnect
