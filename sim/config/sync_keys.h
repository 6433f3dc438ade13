// SPDX-License-Identifier: MIT
#pragma once

// Key lists shared by the cluster and the training configs: a link, and a gradient
// synchronisation (docs/config.md#cluster, docs/fast-training.md "Workers").

#include <set>
#include <string>
#include <string_view>

#include "config/keys.h"
#include "config/params.h"
#include "config/ranges.h"

namespace fastsim::config {

/// `prefix` + `leaf` as a KeyDoc path: the spelled-out paths stay alive for the program's life.
inline std::string_view key_path(const char* prefix, const char* leaf) {
    static std::set<std::string, std::less<>> paths;
    return *paths.insert(std::string(prefix) + leaf).first;
}

template <typename Visit, typename L>
void link_keys(Visit& visit, L& l, const char* prefix = "") {
    const auto key = [prefix](const char* leaf) { return key_path(prefix, leaf); };
    visit(l.bandwidth_gb_per_s,
          {key("link.bandwidth_gb_per_s"), "per direction of every link (links are full duplex)", &kBandwidthGbPerS});
    visit(l.latency_ns, {key("link.latency_ns"), "per hop", &kLatencyNs});
    visit(l.energy_pj_per_bit, {key("link.energy_pj_per_bit"), "per bit per hop", &kLinkEnergyPjPerBit});
    visit(l.switching, {key("link.switching"),
                        "how a message crosses each vertex: `cut_through`, its head going on as it arrives (real "
                        "switches pipeline packets), or `store_and_forward`, received whole first "
                        "([interconnect.md](interconnect.md#links-and-the-timing-rule))"});
}

/// Which of the compression parameters a scheme takes (docs/compression.md): the others mean
/// nothing to it, are refused when given and left out of a dump.
struct SchemeParameters {
    bool density, rank, threshold, error_feedback;
};
inline SchemeParameters scheme_parameters(compression::Scheme s) {
    using compression::Scheme;
    return {s == Scheme::topk || s == Scheme::dgc || s == Scheme::threshold, s == Scheme::powersgd,
            s == Scheme::threshold,
            s == Scheme::topk || s == Scheme::threshold || s == Scheme::onebit || s == Scheme::powersgd};
}

/// The keys of a gradient synchronisation under `prefix` (cluster.gradient_sync, train.gradient_sync).
template <typename Visit, typename G>
void gradient_sync_keys(Visit& visit, G& g, const char* prefix) {
    const auto key = [prefix](const char* leaf) { return key_path(prefix, leaf); };
    visit(g.algorithm, {key("algorithm"),
                        "an all-reduce of the weight gradients "
                        "([interconnect.md](interconnect.md#collectives-per-dimension); `best` chooses per all-reduce "
                        "the lowest measured α–β cost, per dimension over a whole multi-dimensional group, `direct` "
                        "only up to 64 nodes; over such a group each algorithm runs dimension by dimension, "
                        "`flat_ring` is one ring in node order anywhere), or `parameter_server` "
                        "([compression.md](compression.md#parameter-servers))"});
    const bool server = g.algorithm == GradientSyncAlgorithm::parameter_server;
    if (Visit::kEveryKey || server)
        visit(g.servers, {key("servers"),
                          "`parameter_server`: server nodes, each owning an equal shard of every gradient "
                          "(1 = central, more = sharded)",
                          &kSyncServers});
    if (Visit::kEveryKey || (server && !g.server_nodes.empty()))
        visit(g.server_nodes, {key("server_nodes"), "`parameter_server`: the servers' node ids, as many as `servers`",
                               &kSyncServerNodes, "[] (spread evenly: node ⌊s · nodes / servers⌋)"});
    visit(g.scheme, {key("compression.scheme"), "gradient compression ([compression.md](compression.md))"});
    // A scheme's own parameters, written only for it (another scheme refuses them).
    const SchemeParameters takes = scheme_parameters(g.scheme);
    if (Visit::kEveryKey || takes.density)
        visit(g.density, {key("compression.density"),
                          "`topk`, `dgc`, `threshold`: the fraction of gradient values sent", &kSyncDensity});
    if (Visit::kEveryKey || takes.rank)
        visit(g.rank, {key("compression.rank"), "`powersgd`: the rank r of the factors", &kPowerSgdRank});
    if (Visit::kEveryKey || takes.threshold)
        visit(g.threshold, {key("compression.threshold"),
                            "`threshold`: the magnitude above which a value is sent, in training (a cluster run "
                            "costs `density` of the values)",
                            &kSyncThreshold});
    if (Visit::kEveryKey || takes.error_feedback)
        visit(g.error_feedback,
              {key("compression.error_feedback"),
               "`topk`, `threshold`, `onebit`, `powersgd`: carry what was not sent into the next step's gradient "
               "(DGC always does; TernGrad never: it is unbiased)"});
    visit(g.bucket_mib, {key("bucket_mib"),
                         "gradient buckets, as PyTorch DDP's `bucket_cap_mb`: gradients join their replica set's "
                         "bucket in backward order, and a bucket is synchronised as one message once it holds this "
                         "much (the rest at the end of the backward pass); 0 synchronises each layer on its own "
                         "([compression.md](compression.md#gradient-buckets))",
                         &kSyncBucketMib});
    visit(g.message_level_max_ranks,
          {key("message_level_max_ranks"),
           "an all-reduce (uncompressed, not by a parameter server) over more ranks than this is not simulated "
           "message by message: every member waits for the last to be ready, then all take the collective's "
           "cost alone, as the chooser measures it, and its traffic books no link (the report counts these "
           "`flow_level_all_reduces`; [planner.md](planner.md#gradient-synchronisation))",
           &kSyncMessageLevelMaxRanks});
    visit(g.staleness, {key("staleness"),
                        "delayed update: iteration i applies the gradients of iteration i − D, so the "
                        "exchange overlaps D iterations ([compression.md](compression.md#delayed-updates))",
                        &kSyncStaleness});
}

}  // namespace fastsim::config
