// SPDX-License-Identifier: MIT
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "common/checked.h"
#include "common/errors.h"
#include "config/params.h"

namespace fastsim::config {

/// Reads `path`, applies each `key.path=value` override in order, checks every key and
/// value, and returns the resolved Params. Throws ConfigError (file, line, key path).
Params load(const std::string& path, const std::vector<std::string>& overrides = {});

/// load() of `text` as the contents of a config file at `path` (relative paths in it are
/// taken from path's folder; errors name path).
Params load_text(const std::string& text, const std::string& path, const std::vector<std::string>& overrides = {});

/// The network of `path`'s `cluster:` section alone (fastsim collective): its groups, upper
/// level, links and gradient_sync resolved into params.cluster (topology, node numbering), with
/// each `-p` override applied first. Nothing else is read: the file may hold a run config's other
/// sections, and a group's node_type need not name a node type. Throws ConfigError as load()
/// does, and for a top-level key that is no config section or a `-p` key outside
/// `cluster.groups` and `cluster.upper`.
Params load_network(const std::string& path, const std::vector<std::string>& overrides = {});

/// The error for a layer whose sizes at `batch` do not fit 64 bits (`overflow` says which),
/// located at the layer in its trace and naming workload.batch at `batch_where`.
ConfigError layer_size_error(const workload::Layer& layer, std::uint64_t batch, const Location& batch_where,
                             const SizeOverflow& overflow);

/// The effective config as YAML, every default spelled out. load() of it gives the same Params.
std::string dump(const Params& params);

/// docs/config.md's key tables, generated from the sections' key lists: (marker name, Markdown),
/// each table between `<!-- keys:NAME:begin -->` and `<!-- keys:NAME:end -->`.
std::vector<std::pair<std::string, std::string>> key_tables();

}  // namespace fastsim::config
