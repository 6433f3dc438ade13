// SPDX-License-Identifier: MIT
// cluster.gradient_sync (and train.gradient_sync) resolved: the parameter server's nodes, and
// compression keys checked against the scheme they belong to (docs/compression.md).
#include "config/sections.h"

#include <algorithm>
#include <string>

#include "compression/compression.h"
#include "config/sync_keys.h"

namespace fastsim::config {
namespace {

/// A compression key given for a scheme it means nothing to is an error, not ignored.
void check_scheme_keys(const GradientSyncParams& g, const KeyReader& keys, const std::string& prefix) {
    const SchemeParameters takes = scheme_parameters(g.scheme);
    const struct {
        const char* key;
        bool applies;
        const char* schemes;
        const char* note;
    } rules[] = {
        {"compression.density", takes.density, "topk, dgc and threshold", ""},
        {"compression.rank", takes.rank, "powersgd", ""},
        {"compression.threshold", takes.threshold, "threshold", ""},
        {"compression.error_feedback", takes.error_feedback, "topk, threshold, onebit and powersgd",
         " (dgc always carries what it did not send, terngrad never: it is unbiased)"},
    };
    for (const auto& r : rules)
        if (keys.given(prefix + r.key) && !r.applies)
            throw ConfigError(keys.where(prefix + r.key),
                              std::string(r.key) + " applies to " + r.schemes + ", not to compression.scheme '" +
                                  std::string(compression::to_string(g.scheme)) + "'" + r.note);
}

}  // namespace

void resolve_gradient_sync(GradientSyncParams& g, std::size_t nodes, const KeyReader& keys, const std::string& prefix) {
    check_scheme_keys(g, keys, prefix);
    g.server_ids.clear();
    if (g.algorithm != GradientSyncAlgorithm::parameter_server) {
        for (const char* key : {"servers", "server_nodes"})
            if (keys.given(prefix + key))
                throw ConfigError(keys.where(prefix + key), std::string(key) +
                                                                " applies to algorithm parameter_server, not '" +
                                                                std::string(to_string(g.algorithm)) + "'");
        return;
    }
    if (g.server_nodes.empty()) {
        if (g.servers > nodes)
            throw ConfigError(keys.where(prefix + "servers"), "expected at most one server per node (" +
                                                                  std::to_string(nodes) + " nodes), got " +
                                                                  std::to_string(g.servers));
        for (std::uint64_t s = 0; s < g.servers; ++s)
            g.server_ids.push_back(static_cast<std::size_t>(s * nodes / g.servers));
        return;
    }
    if (keys.given(prefix + "servers") && g.servers != g.server_nodes.size())
        throw ConfigError(keys.where(prefix + "server_nodes"), "expected " + std::to_string(g.servers) +
                                                                   " node ids (servers), got " +
                                                                   std::to_string(g.server_nodes.size()));
    for (const int id : g.server_nodes) {
        if (static_cast<std::size_t>(id) >= nodes)
            throw ConfigError(keys.where(prefix + "server_nodes"),
                              "node " + std::to_string(id) + " is not in the cluster (" + std::to_string(nodes) +
                                  " nodes, ids 0 to " + std::to_string(nodes - 1) + ")");
        if (std::find(g.server_ids.begin(), g.server_ids.end(), static_cast<std::size_t>(id)) != g.server_ids.end())
            throw ConfigError(keys.where(prefix + "server_nodes"), "node " + std::to_string(id) + " is listed twice");
        g.server_ids.push_back(static_cast<std::size_t>(id));
    }
    g.servers = g.server_ids.size();
}

}  // namespace fastsim::config
