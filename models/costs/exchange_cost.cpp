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
    // use is charged their sum in both (exact when the two volumes are equal).
    std::vector<double> load_to_a(topology.channel_count(), 0.0), load_to_b(topology.channel_count(), 0.0);
    Picoseconds latency_ps{0};
    std::vector<interconnect::ChannelId> route;
    const double share = 1.0 / static_cast<double>(pairs);
    for (std::size_t i = 0; i < pairs; ++i) {
        const std::size_t a = side_a[i % side_a.size()], b = side_b[i % side_b.size()];
        for (const auto& [from, to, towards_a] : {std::tuple{a, b, false}, std::tuple{b, a, true}}) {
            topology.route_into(from, to, route);
            Picoseconds path_ps{0};
            for (interconnect::ChannelId c : route) {
                (towards_a ? load_to_a : load_to_b)[c] += share;
                path_ps += topology.channel(c).timing.latency_ps;
            }
            latency_ps = std::max(latency_ps, path_ps);
        }
    }
    planner::ExchangeCost cost;
    cost.latency_s = to_seconds(latency_ps);
    for (std::size_t c = 0; c < load_to_a.size(); ++c) {
        const double bits_per_s =
            static_cast<double>(topology.channel(static_cast<interconnect::ChannelId>(c)).timing.bits_per_s);
        const double both = (load_to_a[c] + load_to_b[c]) * 8 / bits_per_s;
        if (load_to_a[c] > 0 && both > cost.seconds_per_byte_to_a) {
            cost.seconds_per_byte_to_a = both;
            cost.bottleneck_share_to_a = load_to_a[c];
        }
        if (load_to_b[c] > 0 && both > cost.seconds_per_byte_to_b) {
            cost.seconds_per_byte_to_b = both;
            cost.bottleneck_share_to_b = load_to_b[c];
        }
    }
    return cost;
}

}  // namespace fastsim::costs
