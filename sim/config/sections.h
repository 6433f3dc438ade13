// SPDX-License-Identifier: MIT
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "config/keys.h"
#include "config/params.h"
#include "config/yaml_reader.h"

namespace fastsim::config {

// The sections of a config file (docs/config.md), one source file each: its key list, its
// resolution (defaults the key list cannot express, cross-field rules, unit conversion), its
// part of dump() and its docs tables. fastsim train's config shares bfp, node and energy.

// run_section.cpp: run, bfp, bfp_report
/// The `run:` map; the reader stays open for the locations of its keys (finished).
KeyReader read_run_section(MapReader& top, RunParams& run);
/// The optional `bfp:` map under `top` (docs/config.md#bfp); `bias_where`, if given, receives
/// where bfp.exponent_bias is (or would be).
BfpParams read_bfp_section(MapReader& top, Location* bias_where = nullptr);
/// The `bfp_report:` map, checked against the BFP settings (errors of the default widths at
/// `bias_where`).
BfpReportParams read_bfp_report_section(MapReader& top, const BfpParams& bfp, const Location& bias_where);
void dump_run_sections(YAML::Emitter& out, const Params& p);
/// ConfigError at `where` unless mantissa width `m` makes a valid format with the BFP settings.
void check_mantissa_format(const BfpParams& bfp, int m, const Location& where);

// node_section.cpp: node (and node_types' node keys), energy
/// Converts a node's keys into the models' units (cycles, bits) with the BFP settings.
void resolve_node(NodeConfig& node, const BfpParams& bfp);
/// Sets the node's SRAM banks' read latency from `table`'s access-time fit at their capacities
/// and the node's clock (docs/energy.md, "Read latency by capacity"); leaves 0 when the table
/// has none.
/// ConfigError at a bank's capacity key (located by `reader`) if the fit gives more than
/// energy::kMaxSramReadLatencyCycles.
void set_sram_read_latency(NodeConfig& node, const energy::EnergyTable& table, const KeyReader& reader);
/// Writes a node's keys into the map the caller opened on `out`.
void dump_node_keys(YAML::Emitter& out, const NodeConfig& node);
/// ConfigError at the failing bank's capacity key (located by `reader`) unless every phase tiles.
void check_tiling(const std::vector<node::StepPhase>& phases, const NodeConfig& node, const KeyReader& reader,
                  const workload::Workload& network);
/// The `energy:` map: the table's path, resolved against the config's folder (not loaded).
EnergyParams read_energy_section(MapReader& top);
/// ConfigError at energy.process_nm when it is given but `table` has no area section.
void check_process_nm(const EnergyParams& energy, const energy::EnergyTable& table);
void dump_energy_section(YAML::Emitter& out, const EnergyParams& energy);

/// The node as the `node:` map under `top` describes it (docs/config.md#training_step),
/// resolved with the BFP settings; the `energy:` map's table loaded for the node's DRAM
/// type (the built-in table when absent).
struct NodeSections {
    NodeConfig node;
    EnergyParams energy;
    std::optional<Location> fusion_given;  ///< where node.fusion was given, if it was
};
NodeSections read_node_sections(MapReader& top, const BfpParams& bfp);

// precision_log.cpp: precision.layers, and a precision.schedule given as a precision log
/// `out` with `overrides` (precision.layers) applied on top, in order.
void apply_overrides(std::vector<node::LayerPrecision>& out, const std::vector<PrecisionOverride>& overrides,
                     const std::vector<workload::Layer>& layers);
/// The segments of a `fastsim train` precision_log.csv: one row per iteration (0, 1, ... in
/// order, of `only_policy`, or of the log's one policy when empty), a `<layer>.<class>_bits`
/// column per layer and tensor class. Each row's widths apply to that step, the last row's to
/// every later step; layers the log does not name keep `base`; `overrides` (precision.layers)
/// apply on top in every step. Rows from `steps` on are not used. ConfigError at `where`.
std::vector<PrecisionSegment> segments_from_log(const std::string& path, const Location& where,
                                                const std::vector<node::LayerPrecision>& base,
                                                const node::TensorPrecision& defaults,
                                                const std::vector<workload::Layer>& layers, std::uint64_t steps,
                                                const BfpParams& bfp, const std::string& only_policy,
                                                const std::vector<PrecisionOverride>& overrides);

// training_section.cpp: workload, precision; run.mode training_step
/// The workload section: a trace file and a batch, the trace read and its sizes checked.
void read_workload_section(MapReader& top, const RunParams& run, Params& p);
void dump_workload_section(YAML::Emitter& out, const WorkloadParams& workload);
void resolve_training(MapReader& top, Params& p);
void dump_training(YAML::Emitter& out, const Params& p);

// cluster_section.cpp: node_types, cluster, planner; run.mode cluster
void resolve_cluster(MapReader& top, const KeyReader& run, Params& p);
void dump_cluster(YAML::Emitter& out, const Params& p);
/// Reads the keys of one entry of cluster.groups into `g`; the caller resolves and finishes.
KeyReader read_group(MapReader entry, NodeGroupParams& g);
/// Reads cluster.groups[i].dimensions[j] into `d` (its link defaulting to what `d` holds).
KeyReader read_group_dimension(MapReader entry, GroupDimensionParams& d);
/// Checks a gradient synchronisation's keys (read under `prefix` of `keys`) against a cluster of
/// `nodes` nodes and resolves its server ids.
void resolve_gradient_sync(GradientSyncParams& g, std::size_t nodes, const KeyReader& keys, const std::string& prefix);
// cluster_topology.cpp
/// cluster.groups and cluster.upper (read into p.cluster by `cluster_keys`) resolved into
/// p.cluster's groups, node numbering and topology. With `network_only`, a group's node_type is
/// not looked up in p.cluster.node_types (fastsim collective reads no node types).
void resolve_groups(MapReader& cluster, const KeyReader& cluster_keys, Params& p, bool network_only = false);
/// p.cluster's keys (groups, upper, links, gradient_sync) from the `cluster` section of `top`,
/// resolved with network_only.
void resolve_network(MapReader& top, Params& p);

/// `path` resolved against the folder of `config_file` (absolute paths as they are).
std::string resolve_path(const std::string& config_file, const std::string& path);

/// Every docs/config.md key table, by its marker name (`<!-- keys:NAME:begin -->`).
std::vector<std::pair<std::string, std::string>> run_key_tables();
std::vector<std::pair<std::string, std::string>> node_key_tables();
std::vector<std::pair<std::string, std::string>> training_key_tables();
std::vector<std::pair<std::string, std::string>> cluster_key_tables();

}  // namespace fastsim::config
