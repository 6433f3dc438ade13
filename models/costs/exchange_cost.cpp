// SPDX-License-Identifier: MIT
#include "costs/exchange_cost.h"

#include <algorithm>
#include <tuple>

#include "common/units.h"

namespace fastsim::costs {

planner::ExchangeCost exchange_cost(const interconnect::Topology& topology, const std::vector<std::size_t>& side_a,
                                    const std::vector<std::size_t>& side_b) {
    const std::size_t pairs = std::max(side_a.size(), side_b.size());
    // Per channel, the share of each direction's bytes it carries; a channel both directions
    // use is charged their sum in both (exact when the two volumes are equal). Each crossing is
    // listed, then summed per channel: the channels the exchange touches, not all of them.
    struct Crossing {
        interconnect::ChannelId channel;
        bool towards_a;
    };
    std::vector<Crossing> crossings;
    Picoseconds latency_ps{0};
    // Store-and-forward: each hop but the last holds a message until its tail is in, so a
    // pair's bytes cross those hops one after another (seconds per byte of the whole exchange).
    double forwarded_to_a = 0, forwarded_to_b = 0;
    std::vector<interconnect::ChannelId> route;
    const double share = 1.0 / static_cast<double>(pairs);
    for (std::size_t i = 0; i < pairs; ++i) {
        const std::size_t a = side_a[i % side_a.size()], b = side_b[i % side_b.size()];
        for (const auto& [from, to, towards_a] : {std::tuple{a, b, false}, std::tuple{b, a, true}}) {
            topology.route_into(from, to, route);
            Picoseconds path_ps{0};
            double forwarded = 0;
            for (std::size_t k = 0; k < route.size(); ++k) {
                const interconnect::Channel& ch = topology.channel(route[k]);
                crossings.push_back({route[k], towards_a});
                path_ps += ch.timing.latency_ps;
                if (k + 1 < route.size() && ch.params.switching == interconnect::Switching::store_and_forward)
                    forwarded += share * 8 / static_cast<double>(ch.timing.bits_per_s);
            }
            latency_ps = std::max(latency_ps, path_ps);
            double& most = towards_a ? forwarded_to_a : forwarded_to_b;
            most = std::max(most, forwarded);
        }
    }
    planner::ExchangeCost cost;
    cost.latency_s = to_seconds(latency_ps);
    // Each channel's loads, summed in the crossings' order either way (the same sums), then the
    // channels in id order: dense arrays when the crossings outnumber the channels (long routes),
    // else the crossings sorted by channel.
    const auto consider = [&](interconnect::ChannelId c, double load_to_a, double load_to_b) {
        const double bits_per_s = static_cast<double>(topology.channel(c).timing.bits_per_s);
        const double both = (load_to_a + load_to_b) * 8 / bits_per_s;
        if (load_to_a > 0 && both > cost.seconds_per_byte_to_a) {
            cost.seconds_per_byte_to_a = both;
            cost.bottleneck_share_to_a = load_to_a;
        }
        if (load_to_b > 0 && both > cost.seconds_per_byte_to_b) {
            cost.seconds_per_byte_to_b = both;
            cost.bottleneck_share_to_b = load_to_b;
        }
    };
    if (crossings.size() > topology.channel_count()) {
        std::vector<double> to_a(topology.channel_count(), 0.0), to_b(topology.channel_count(), 0.0);
        for (const Crossing& x : crossings) (x.towards_a ? to_a : to_b)[x.channel] += share;
        for (std::size_t c = 0; c < to_a.size(); ++c)
            if (to_a[c] > 0 || to_b[c] > 0) consider(static_cast<interconnect::ChannelId>(c), to_a[c], to_b[c]);
    } else {
        std::stable_sort(crossings.begin(), crossings.end(),
                         [](const Crossing& x, const Crossing& y) { return x.channel < y.channel; });
        for (std::size_t i = 0; i < crossings.size();) {
            const interconnect::ChannelId c = crossings[i].channel;
            double load_to_a = 0, load_to_b = 0;
            for (; i < crossings.size() && crossings[i].channel == c; ++i)
                (crossings[i].towards_a ? load_to_a : load_to_b) += share;
            consider(c, load_to_a, load_to_b);
        }
    }
    cost.seconds_per_byte_to_a += forwarded_to_a;
    cost.seconds_per_byte_to_b += forwarded_to_b;
    return cost;
}

}  // namespace fastsim::costs
