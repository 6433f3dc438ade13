// SPDX-License-Identifier: MIT
#include "report/run_agreement.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/csv_reader.h"
#include "common/errors.h"
#include "common/json_reader.h"
#include "common/output_files.h"
#include "common/summary.h"
#include "config/params.h"
#include "planner/layer_graph.h"
#include "sweep/point_record.h"

#include <yaml-cpp/yaml.h>

namespace fastsim::report {
namespace {

namespace fs = std::filesystem;

const JsonValue* member(const JsonValue& o, const std::string& key) { return o.is_object() ? o.find(key) : nullptr; }

std::optional<double> number_at(const JsonValue& o, const std::string& key) {
    const JsonValue* v = member(o, key);
    if (!v || !v->is_number()) return std::nullopt;
    return v->as_number();
}

/// Equal to `relative` of the larger (reports write 9 significant digits: 1e-8 for one value).
bool agree(double a, double b, double relative = 1e-8) {
    return std::abs(a - b) <= relative * std::max({1e-300, std::abs(a), std::abs(b)});
}

[[noreturn]] void mixed(const std::string& dir, const std::string& what) {
    throw UserError(dir + " mixes two runs, or a file was edited: " + what +
                    "; run it again into an empty folder (or with --force)");
}

/// summary.json's fields against report.json's: (summary key, report value, scale to summary's unit).
void check_summary(const std::string& dir, const JsonValue& report, const JsonValue& summary, bool cluster) {
    struct Pair {
        std::string summary_key;
        std::optional<double> report_value;
        bool required;
    };
    const JsonValue* energy = member(report, "energy_pj");
    const auto scaled = [](std::optional<double> v, double scale) {
        return v ? std::optional<double>(*v * scale) : std::nullopt;
    };
    std::vector<Pair> pairs;
    if (cluster) {
        pairs.push_back({std::string(kClusterStepField), scaled(number_at(report, "simulated_step_s"), 1e3), true});
        pairs.push_back({"planned_step_ms", scaled(number_at(report, "planned_step_s"), 1e3), false});
        pairs.push_back(
            {std::string(kEnergyField), energy ? scaled(number_at(*energy, "total"), 1e-6) : std::nullopt, true});
    } else {
        pairs.push_back({std::string(kNodeTimeField), scaled(number_at(report, "total_seconds"), 1e3), true});
        pairs.push_back({"cycles", number_at(report, "total_cycles"), true});
        pairs.push_back({"macs", number_at(report, "total_macs"), true});
        pairs.push_back({std::string(kEnergyField), scaled(number_at(report, "total_energy_pj"), 1e-6), true});
    }
    pairs.push_back({"area_mm2", number_at(report, "total_area_mm2"), false});
    pairs.push_back({"power_w", number_at(report, "power_w"), false});
    if (energy && energy->is_object())
        for (const JsonMember& m : energy->members())
            if (m.key != "total" && m.value.is_number())
                pairs.push_back({"energy_" + m.key + "_uj", m.value.as_number() * 1e-6, false});
    for (const Pair& p : pairs) {
        const std::optional<double> in_summary = number_at(summary, p.summary_key);
        if (!in_summary) {
            if (p.required && p.report_value)
                throw UserError(dir + "/summary.json: " + p.summary_key + ": missing, though report.json gives it");
            continue;
        }
        if (p.report_value && !agree(*in_summary, *p.report_value))
            mixed(dir, "summary.json's " + p.summary_key + " is " + format_number(*in_summary) +
                           ", report.json's gives " + format_number(*p.report_value));
    }
}

/// A training step's layers.csv: report.json's `phases`, column by column and row by row.
void check_phases(const std::string& dir, const JsonValue& phases) {
    const CsvTable layers = read_csv_file(dir + "/layers.csv");
    const std::vector<JsonValue>& rows = phases.items();
    if (layers.rows.size() != rows.size())
        mixed(dir, "layers.csv has " + std::to_string(layers.rows.size()) + " rows, report.json's phases " +
                       std::to_string(rows.size()));
    for (std::size_t r = 0; r < rows.size(); ++r) {
        const JsonValue& phase = rows[r];
        const std::string at = dir + "/layers.csv:" + std::to_string(layers.row_lines[r]);
        if (!phase.is_object() || phase.members().size() != layers.header.size())
            mixed(dir, at + ": " + std::to_string(layers.header.size()) + " columns, report.json's phases[" +
                           std::to_string(r) + "] another count");
        for (std::size_t c = 0; c < layers.header.size(); ++c) {
            const JsonMember& m = phase.members()[c];
            const std::string& cell = layers.rows[r][c];
            if (m.key != layers.header[c])
                mixed(dir, at + ": column " + std::to_string(c + 1) + " is '" + layers.header[c] +
                               "', report.json's phases[" + std::to_string(r) + "] has '" + m.key + "' there");
            const std::optional<double> number = parse_number(cell);
            const bool same = m.value.is_string()   ? cell == m.value.as_string()
                              : m.value.is_number() ? number && agree(*number, m.value.as_number())
                                                    : true;
            if (!same)
                mixed(dir, at + ": column '" + m.key + "' is '" + printable(cell) + "', report.json's phases[" +
                               std::to_string(r) + "] has " +
                               (m.value.is_string() ? "'" + printable(m.value.as_string()) + "'"
                                                    : format_number(m.value.as_number())));
        }
    }
}

/// A cluster step's nodes.csv: every node once, in order, and the energy of the nodes.
void check_nodes(const std::string& dir, const JsonValue& report) {
    const std::optional<double> nodes = number_at(report, "nodes");
    if (!nodes || !fs::exists(fs::path(dir) / "nodes.csv")) return;
    const CsvTable table = read_csv_file(dir + "/nodes.csv");
    const std::optional<std::size_t> node = table.column("node");
    if (!node) return;  // the table's own check names it
    if (static_cast<double>(table.rows.size()) != *nodes)
        mixed(dir, "nodes.csv has " + std::to_string(table.rows.size()) + " rows, report.json's nodes is " +
                       format_number(*nodes));
    for (std::size_t r = 0; r < table.rows.size(); ++r)
        if (parse_number(table.rows[r][*node]) != static_cast<double>(r))
            mixed(dir, dir + "/nodes.csv:" + std::to_string(table.row_lines[r]) + ": node '" +
                           printable(table.rows[r][*node]) + "' where node " + std::to_string(r) + " belongs");
    // Node types: those report.json gives areas of, when it does.
    const JsonValue* areas = member(report, "node_area_mm2");
    if (const std::optional<std::size_t> type = table.column("type"); type && areas && areas->is_object())
        for (std::size_t r = 0; r < table.rows.size(); ++r)
            if (!areas->find(table.rows[r][*type]))
                mixed(dir, dir + "/nodes.csv:" + std::to_string(table.row_lines[r]) + ": node type '" +
                               printable(table.rows[r][*type]) + "', which report.json's node_area_mm2 does not have");
    const JsonValue* energy = member(report, "energy_pj");
    if (!energy || !energy->is_object()) return;
    for (const JsonMember& m : energy->members()) {
        const std::optional<std::size_t> column = table.column("energy_" + m.key + "_pj");
        if (!column || !m.value.is_number()) continue;
        double sum = 0, magnitude = 0;
        for (const auto& row : table.rows) {
            const double v = parse_number(row[*column]).value_or(0);
            sum += v;
            magnitude += std::abs(v);
        }
        // Each value has 9 significant digits: the sum is good to 1e-8 of the magnitudes summed.
        if (std::abs(sum - m.value.as_number()) > 1e-8 * std::max(magnitude, std::abs(m.value.as_number())) + 1e-300)
            mixed(dir, "nodes.csv's energy_" + m.key + "_pj adds up to " + format_number(sum) +
                           ", report.json's energy_pj." + m.key + " is " + format_number(m.value.as_number()));
    }
}

/// A cluster step's layers.csv: each layer once, its partition type at the root one of the
/// planner's (or '-' for a cluster of one group, or a pipeline's layers, split within stages).
void check_cluster_layers(const std::string& dir, bool split_at_root) {
    const CsvTable layers = read_csv_file(dir + "/layers.csv");
    const std::optional<std::size_t> name = layers.column("layer"), type = layers.column("type_root");
    std::set<std::string> seen;
    for (std::size_t r = 0; r < layers.rows.size(); ++r) {
        const std::string at = dir + "/layers.csv:" + std::to_string(layers.row_lines[r]);
        if (name && !seen.insert(layers.rows[r][*name]).second)
            mixed(dir, at + ": layer '" + printable(layers.rows[r][*name]) + "' has a second row");
        if (type && layers.rows[r][*type] == "-" && split_at_root)
            mixed(dir, at + ": column 'type_root' is '-' (no split), but report.json's cluster splits every "
                            "layer at its root (more than one node, no pipeline)");
        if (!type || layers.rows[r][*type] == "-") continue;
        bool known = false;
        for (std::size_t k = 0; k < planner::kPartitionTypes; ++k)
            known = known || layers.rows[r][*type] == planner::to_string(static_cast<planner::PartitionType>(k));
        if (!known)
            throw UserError(at + ": column 'type_root': '" + printable(layers.rows[r][*type]) +
                            "' is no partition type (I, II, III, IV, or - for one group)");
    }
}

/// A cluster step's plan.csv: each split leaves both sides a node (side_a_nodes from 1 to nodes
/// - 1, no more than nodes where the layer is not split, '-'), and each row's stage is one of
/// report.json's pipeline stages, or empty when the plan has none.
void check_plan_csv(const std::string& dir, std::size_t stages) {
    const CsvTable plan = read_csv_file(dir + "/plan.csv");
    const std::optional<std::size_t> nodes = plan.column("nodes"), side_a = plan.column("side_a_nodes"),
                                     type = plan.column("type"), stage = plan.column("stage");
    for (std::size_t r = 0; r < plan.rows.size() && nodes && side_a && type; ++r) {
        const std::optional<double> n = parse_number(plan.rows[r][*nodes]), a = parse_number(plan.rows[r][*side_a]);
        const bool split = plan.rows[r][*type] != "-";
        if (n && a && (*a > *n || (split && (*a < 1 || *a >= *n))))
            throw UserError(
                dir + "/plan.csv:" + std::to_string(plan.row_lines[r]) + ": column 'side_a_nodes' is " +
                plan.rows[r][*side_a] + " of a group of " + plan.rows[r][*nodes] + " nodes" +
                (split ? ", split by type " + printable(plan.rows[r][*type]) + ": each side holds at least one node"
                       : ""));
    }
    if (!stage) return;
    for (std::size_t r = 0; r < plan.rows.size(); ++r) {
        const std::string& cell = plan.rows[r][*stage];
        const std::optional<double> v = parse_number(cell);
        const bool fits =
            stages == 0 ? cell.empty() : v && *v >= 0 && *v < static_cast<double>(stages) && *v == std::floor(*v);
        if (!fits)
            mixed(dir, dir + "/plan.csv:" + std::to_string(plan.row_lines[r]) + ": column 'stage' is '" +
                           printable(cell) + "', but report.json's plan has " +
                           (stages == 0 ? std::string("no pipeline stages")
                                        : std::to_string(stages) + " pipeline stages (0 … " +
                                              std::to_string(stages - 1) + ")"));
    }
}

/// summary.json's own values: a percentage within 0 … 100, and no negative result where none can be.
void check_summary_values(const std::string& dir, const JsonValue& summary) {
    if (!summary.is_object()) return;
    for (const JsonMember& m : summary.members()) {
        if (!m.value.is_number()) continue;
        const double v = m.value.as_number();
        const bool percent = m.key.size() > 8 && m.key.compare(m.key.size() - 8, 8, "_percent") == 0;
        if (!sweep::result_may_be_negative(m.key) && (v < 0 || (percent && v > 100)))
            throw UserError(dir + "/summary.json: " + m.key + ": " + format_number(v) + " is outside " +
                            (percent ? "0 … 100 (a percentage)" : "the results fastsim writes (at least 0)"));
    }
}

/// config.yaml, the config the run resolved (`run --out` writes it): its run.mode and
/// workload.batch are those report.json describes.
void check_config(const std::string& dir, const JsonValue& report, bool cluster) {
    const std::string file = dir + "/config.yaml";
    YAML::Node loaded;
    try {
        loaded = YAML::LoadFile(file);
    } catch (const YAML::Exception& e) {
        throw UserError(file + ": not the config a run writes (" + e.msg + ")");
    }
    const YAML::Node& root = loaded;
    if (!root.IsMap()) throw UserError(file + ": expected the run's config, a YAML map, as run --out writes it");
    const auto scalar = [&](const char* section, const char* key) -> std::optional<std::string> {
        const YAML::Node s = root[section];
        if (!s || !s.IsMap() || !s[key] || !s[key].IsScalar()) return std::nullopt;
        return s[key].Scalar();
    };
    const std::string cluster_mode(config::to_string(config::RunMode::cluster)),
        step_mode(config::to_string(config::RunMode::training_step));
    if (const std::optional<std::string> mode = scalar("run", "mode");
        mode && (*mode == cluster_mode || *mode == step_mode) && (*mode == cluster_mode) != cluster)
        mixed(dir, "config.yaml's run.mode is " + *mode + ", but report.json is a " +
                       (cluster ? "cluster step's" : "training step's"));
    const std::optional<double> batch = number_at(report, "batch");
    if (const std::optional<std::string> given = scalar("workload", "batch"); given && batch) {
        const std::optional<double> v = parse_number(*given);
        if (!v || *v != *batch)
            mixed(dir, "config.yaml's workload.batch is " + printable(*given) + ", report.json's batch " +
                           format_number(*batch));
    }
}

}  // namespace

void check_run_files_agree(const std::string& dir) {
    const fs::path root(dir);
    if (!fs::exists(root / "report.json")) return;
    const JsonValue report = read_json_file((root / "report.json").string());
    const bool cluster = member(report, "simulated_step_s") != nullptr;
    if (fs::exists(root / "summary.json")) {
        const JsonValue summary = read_json_file((root / "summary.json").string());
        check_summary_values(dir, summary);
        check_summary(dir, report, summary, cluster);
    }
    if (const JsonValue* phases = member(report, "phases"); phases && phases->is_array() && !cluster)
        check_phases(dir, *phases);
    if (cluster) {
        check_nodes(dir, report);
        const JsonValue* pipeline = member(report, "pipeline");
        const JsonValue* stages = pipeline ? member(*pipeline, "stages") : nullptr;
        const std::size_t stage_count = stages && stages->is_array() ? stages->items().size() : 0;
        const std::optional<double> nodes = number_at(report, "nodes");
        if (fs::exists(root / "layers.csv")) check_cluster_layers(dir, !pipeline && nodes && *nodes > 1);
        if (fs::exists(root / "plan.csv")) check_plan_csv(dir, stage_count);
    }
    if (fs::is_regular_file(root / "config.yaml")) check_config(dir, report, cluster);
}

}  // namespace fastsim::report
