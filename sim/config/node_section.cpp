// SPDX-License-Identifier: MIT
// The node section (also every node type's node keys) and the energy section
// (docs/config.md#node, #energy).
#include "config/sections.h"

#include <algorithm>
#include <filesystem>

#include "common/checked.h"
#include "config/energy_table.h"
#include "config/node_keys.h"

namespace fastsim::config {
namespace {

template <typename Visit, typename E>
void energy_keys(Visit& visit, E& e) {
    visit(e.table, {"table", "a per-action energy table ([energy.md](energy.md)); relative to the config file's folder",
                    nullptr, "the built-in `configs/energy/fast_45nm.yaml`", "an existing file"});
    visit(e.process_nm, {"process_nm",
                         "process node the area is reported at, scaled from the table's ([energy.md](energy.md#area)); "
                         "energies are not scaled",
                         &kProcessNm, "the table's `area.process_nm`"});
}

}  // namespace

const EnumNames<Fusion, 2>& enum_names(Fusion) {
    static constexpr EnumNames<Fusion, 2> kNames{{{"off", Fusion::off}, {"on", Fusion::on}}};
    return kNames;
}

namespace {

constexpr auto kNodeKeys = [](auto& visit, auto& n) { node_keys(visit, n); };
constexpr auto kEnergyKeys = [](auto& visit, auto& e) { energy_keys(visit, e); };

/// KiB (a kSramCapacityKib value) in whole bits, at least 1.
std::uint64_t kib_to_bits(double kib) { return std::max<std::uint64_t>(1, checked_round(kib * 1024 * 8, "SRAM bits")); }

}  // namespace

std::string resolve_path(const std::string& config_file, const std::string& path) {
    namespace fs = std::filesystem;
    const fs::path p(path);
    if (p.is_absolute()) return path;
    return (fs::path(config_file).parent_path() / p).lexically_normal().string();
}

void resolve_node(NodeConfig& nc, const BfpParams& bfp) {
    node::NodeParams& np = nc.resolved;
    np.clock_hz = checked_round(nc.clock_mhz * 1e6, "clock in Hz");
    np.array.rows = nc.rows;
    np.array.cols = nc.cols;
    np.array.group_size = bfp.group_size;
    for (std::size_t phase = 0; phase < np.dataflow.size(); ++phase)
        np.dataflow[phase] = nc.dataflow_per_phase[phase].value_or(nc.dataflow);
    np.converter = converter::ConverterParams::feeding(bfp.group_size, nc.cols);
    np.converter.lanes = nc.converter_lanes.value_or(np.converter.lanes);
    np.converter.pipeline_latency_cycles = nc.converter_latency_cycles.value_or(np.converter.pipeline_latency_cycles);
    nc.converter_lanes = np.converter.lanes;  // dump writes the values in use
    nc.converter_latency_cycles = np.converter.pipeline_latency_cycles;
    np.vector = vector::VectorParams::derived_from(nc.cols);
    np.vector.lanes = nc.vector_lanes.value_or(np.vector.lanes);
    np.vector.ops_per_lane_per_cycle = nc.vector_ops_per_lane_per_cycle;
    np.vector.pipeline_latency_cycles = nc.vector_latency_cycles;
    nc.vector_lanes = np.vector.lanes;
    np.sram.exponent_bank = {kib_to_bits(nc.sram_exponent_kib), nc.sram_exponent_bits_per_cycle};
    np.sram.mantissa_bank = {kib_to_bits(nc.sram_mantissa_kib), nc.sram_mantissa_bits_per_cycle};
    np.dram.bandwidth_bits_per_s = checked_round(nc.dram_bandwidth_gb_per_s * 8e9, "DRAM bits per second");
    np.dram.latency_cycles =
        checked_ceil(std::max(0.0, nc.dram_latency_ns * nc.clock_mhz / 1000.0 - 1e-9), "DRAM latency cycles");
    np.exponent_bits = bfp.exponent_bits;
    np.noise_bits = bfp.noise_bits;
    np.max_tile_rows = nc.max_tile_rows;
    np.lowering = nc.lowering;
}

void set_sram_read_latency(NodeConfig& nc, const energy::EnergyTable& table, const KeyReader& reader) {
    if (!table.sram_access) return;
    const auto clock_hz = static_cast<double>(nc.resolved.clock_hz);
    const auto latency = [&](double kib, const char* key) {
        const std::optional<std::uint64_t> cycles = energy::sram_read_latency_cycles(*table.sram_access, kib, clock_hz);
        if (!cycles)
            throw ConfigError(reader.where(key), "the energy table " + table.name +
                                                     "'s SRAM access-time fit gives this bank a read latency above " +
                                                     std::to_string(energy::kMaxSramReadLatencyCycles) +
                                                     " cycles at the node's clock (sram.access_ns_at_1kib, "
                                                     "sram.access_ns_exponent)");
        return *cycles;
    };
    nc.resolved.sram.exponent_bank.read_latency_cycles =
        latency(nc.sram_exponent_kib, "sram.exponent_bank.capacity_kib");
    nc.resolved.sram.mantissa_bank.read_latency_cycles =
        latency(nc.sram_mantissa_kib, "sram.mantissa_bank.capacity_kib");
}

void dump_node_keys(YAML::Emitter& out, const NodeConfig& node) { write_keys(out, node, kNodeKeys); }

void check_tiling(const std::vector<node::StepPhase>& phases, const NodeConfig& node, const KeyReader& reader,
                  const workload::Workload& network) {
    for (const auto& phase : phases) {
        try {
            if (phase.on_vector_unit)
                (void)node::plan_vector_chunks(phase.vector, node.resolved);
            else
                for (const node::PhaseGemm& g : phase.gemms) (void)node::plan_tiles(g.job, node.resolved);
        } catch (const node::TilingError& e) {
            const char* key = e.bank() == node::SramBank::exponent ? "sram.exponent_bank.capacity_kib"
                                                                   : "sram.mantissa_bank.capacity_kib";
            throw ConfigError(reader.where(key), "layer '" + network.layers[phase.layer].name + "' (" +
                                                     std::string(node::phase_name(phase)) +
                                                     ") cannot be tiled: " + e.what() + "; enlarge the bank");
        }
    }
}

EnergyParams read_energy_section(MapReader& top) {
    EnergyParams energy;
    KeyReader reader = read_keys(top, "energy", energy, kEnergyKeys);
    reader.finish();
    if (!energy.table.written.empty()) energy.table.resolved = resolve_path(top.document()->file, energy.table.written);
    if (reader.given("process_nm")) energy.process_nm_given = reader.where("process_nm");
    return energy;
}

void check_process_nm(const EnergyParams& energy, const energy::EnergyTable& table) {
    if (energy.process_nm_given && !table.area)
        throw ConfigError(*energy.process_nm_given,
                          "the energy table " + table.name +
                              " has no area section: there is no area to report at another process node");
}

void dump_energy_section(YAML::Emitter& out, const EnergyParams& energy) {
    out << YAML::Key << "energy" << YAML::Value << YAML::BeginMap;
    write_keys(out, energy, kEnergyKeys);
    out << YAML::EndMap;
}

NodeSections read_node_sections(MapReader& top, const BfpParams& bfp) {
    NodeSections out;
    KeyReader node = read_keys(top, "node", out.node, kNodeKeys);
    node.finish();
    if (node.given("fusion")) out.fusion_given = node.where("fusion");
    resolve_node(out.node, bfp);
    out.energy = read_energy_section(top);
    out.energy.resolved = load_energy_table(out.energy.table.resolved, out.node.dram_type, node.where("dram.type"),
                                            out.node.sram_exponent_kib, out.node.sram_mantissa_kib);
    check_process_nm(out.energy, out.energy.resolved);
    set_sram_read_latency(out.node, out.energy.resolved, node);
    return out;
}

std::vector<std::pair<std::string, std::string>> node_key_tables() {
    return {{"node", key_table<NodeConfig>(kNodeKeys)}, {"energy", key_table<EnergyParams>(kEnergyKeys)}};
}

}  // namespace fastsim::config
