// SPDX-License-Identifier: MIT
// The report of a `fastsim run --out DIR` directory: report.json, layers.csv, and for a cluster
// run nodes.csv; summary.json when present.
#include <algorithm>
#include <array>
#include <cmath>
#include <cctype>
#include <filesystem>
#include <limits>
#include <optional>

#include "common/errors.h"
#include "sweep/point_record.h"
#include "common/csv_reader.h"
#include "report/html_page.h"
#include "node/phase_counters.h"
#include "common/json_reader.h"
#include "report/result_columns.h"
#include "report/results_dir.h"
#include "report/svg_chart.h"

namespace fastsim::report {
namespace {

/// layers.csv columns left out of the per-layer table: detail that the energy breakdown or
/// report.json already carries (passes_per_group, the counters shown as detail, the energy components).
bool is_detail_column(const std::string& name) {
    if (name == "passes_per_group") return true;
    for (const CounterInfo& counter : node::counter_infos())
        if (counter.name == name) return counter.show == CounterShow::detail;
    return name.rfind("energy_", 0) == 0 && name != "energy_total_pj";
}

/// A number member of report.json (>= 0 unless the key is signed), or a UserError naming
/// the file and key.
double number_member(const JsonValue& root, const std::string& file, const std::string& key) {
    const JsonValue* v = root.find(key);
    if (!v || !v->is_number()) throw UserError(file + ": " + key + ": expected a number");
    if (v->as_number() < 0 && !sweep::result_may_be_negative(key))
        throw UserError(file + ": " + key + ": a result that cannot be negative is " + display_number(v->as_number()));
    return v->as_number();
}

/// `total`, or a UserError if summing `what` overflowed a double.
double finite_sum(double total, const std::string& where, const std::string& what) {
    if (!std::isfinite(total)) throw UserError(where + ": " + what + " sum to more than a double holds");
    return total;
}

/// `key` of `root` as the page shows it: a string, or a number displayed; "" when absent. A
/// UserError naming `file` and `key` for any other value (an object, a list, true, null).
std::string text_member(const JsonValue& root, const std::string& file, const std::string& key) {
    const JsonValue* v = root.find(key);
    if (!v) return "";
    if (v->is_string()) return v->as_string();
    if (v->is_number()) return display_number(v->as_number());
    throw UserError(file + ": " + key + ": expected a string or a number");
}

/// The components of report.json's "energy_pj" object (excluding "total"), in pJ.
std::vector<std::pair<std::string, double>> energy_components(const JsonValue& root, const std::string& file) {
    const JsonValue* e = root.find("energy_pj");
    if (!e || !e->is_object()) throw UserError(file + ": energy_pj: expected an object of energies by component");
    std::vector<std::pair<std::string, double>> out;
    for (const auto& m : e->members()) {
        if (m.key == "total") continue;
        if (!m.value.is_number() || m.value.as_number() < 0)
            throw UserError(file + ": energy_pj." + m.key + ": expected an energy >= 0");
        out.emplace_back(m.key, m.value.as_number());
    }
    double total = 0;
    for (const auto& [name, pj] : out) total += pj;
    finite_sum(total, file, "the components of energy_pj");
    return out;
}

/// Each node's step as array, vector, communication and idle ms (nodes.csv's compute_array_s,
/// compute_vector_s, comm_wait_s, idle_s); nothing for a nodes.csv without them.
std::optional<charts::StackedBarChart> node_time_bars(const CsvTable& nodes, const std::vector<std::string>& labels) {
    const std::array<std::pair<const char*, const char*>, 4> parts{{{"compute_array_s", "array"},
                                                                    {"compute_vector_s", "vector unit"},
                                                                    {"comm_wait_s", "exposed communication"},
                                                                    {"idle_s", "idle"}}};
    std::vector<std::size_t> columns;
    for (const auto& [column, name] : parts) {
        const auto c = nodes.column(column);
        if (!c) return std::nullopt;
        columns.push_back(*c);
    }
    charts::StackedBarChart bars;
    bars.title = "time per node";
    bars.x_title = "node";
    bars.y_title = "time (ms)";
    for (const auto& [column, name] : parts) bars.components.emplace_back(name);
    for (std::size_t row = 0; row < nodes.rows.size(); ++row) {
        charts::Bar bar{labels[row], {}};
        for (const std::size_t c : columns) bar.values.push_back(result_cell(nodes, row, c).value_or(0.0) * 1e3);
        bars.bars.push_back(std::move(bar));
    }
    return bars;
}

/// report.json's pipeline.stages array; null for a run without a pipeline.
const JsonValue* pipeline_stages(const JsonValue& root) {
    const JsonValue* pipeline = root.find("pipeline");
    if (!pipeline || !pipeline->is_object()) return nullptr;
    const JsonValue* stages = pipeline->find("stages");
    return stages && stages->is_array() ? stages : nullptr;
}

/// A pipeline's stages as busy and idle ms (report.json's pipeline.stages); nothing without one.
std::optional<charts::StackedBarChart> stage_bars(const JsonValue& root, const std::string& file) {
    const JsonValue* stages = pipeline_stages(root);
    if (!stages) return std::nullopt;
    charts::StackedBarChart bars;
    bars.title = "time per pipeline stage";
    bars.x_title = "stage";
    bars.y_title = "time (ms)";
    bars.components = {"busy", "idle"};
    for (std::size_t s = 0; s < stages->items().size(); ++s) {
        const JsonValue& stage = stages->items()[s];
        bars.bars.push_back({"stage " + std::to_string(s),
                             {number_member(stage, file, "busy_s") * 1e3, number_member(stage, file, "idle_s") * 1e3}});
    }
    return bars;
}

/// A pipeline's simulated timeline, one row per stage, from report.json's
/// pipeline.stages[].spans (seconds; drawn in ms). None without a pipeline or spans.
std::optional<charts::TimelineChart> stage_timeline(const JsonValue& root, const std::string& file) {
    const JsonValue* stages = pipeline_stages(root);
    if (!stages) return std::nullopt;
    charts::TimelineChart chart;
    chart.title = "pipeline timeline";
    chart.x_title = "time in the step (ms)";
    chart.components = {"forward", "backward", "weight update"};
    for (std::size_t s = 0; s < stages->items().size(); ++s) {
        chart.rows.push_back("stage " + std::to_string(s));
        const JsonValue* spans = stages->items()[s].find("spans");
        if (!spans || !spans->is_array()) continue;
        for (const JsonValue& span : spans->items()) {
            const std::string pass = text_member(span, file, "pass");
            const auto component =
                static_cast<std::size_t>(std::find(chart.components.begin(), chart.components.end(),
                                                   pass == "weight_update" ? "weight update" : pass) -
                                         chart.components.begin());
            if (component == chart.components.size())
                throw UserError(file + ": pipeline.stages[" + std::to_string(s) + "].spans: pass '" + pass +
                                "' is not forward, backward or weight_update");
            const JsonValue* microbatch = span.find("microbatch");
            chart.spans.push_back({s, component, number_member(span, file, "start_s") * 1e3,
                                   number_member(span, file, "end_s") * 1e3,
                                   microbatch ? "mb " + text_member(span, file, "microbatch") : ""});
        }
    }
    if (chart.spans.empty()) return std::nullopt;
    return chart;
}

/// Palette slots for `components` from the page's `colours`, by the unit each stands for, so a
/// unit keeps its colour in every chart of the page: names compare without case, and an fMAC's
/// energy is the array's, the "vector unit" the vector's.
std::vector<std::size_t> unit_colours(charts::SeriesColours& colours, const std::vector<std::string>& components) {
    std::vector<std::string> units;
    for (std::string name : components) {
        std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::tolower(c); });
        units.push_back(name == "fmac" ? "array" : name == "vector unit" ? "vector" : name);
    }
    return colours.slots(units);
}

/// A stacked bar chart rendered in the page's colours (unit_colours).
std::string render_bars(charts::StackedBarChart bars, charts::SeriesColours& colours) {
    bars.colours = unit_colours(colours, bars.components);
    return charts::render_stacked_bar_chart(bars);
}

/// The bar of group `key` in `bars` (one per distinct key, in first-seen order; `keys` holds
/// them alongside): added with `label` and a zero per component the first time.
charts::Bar& group_bar(charts::StackedBarChart& bars, std::vector<std::string>& keys, const std::string& key,
                       const std::string& label) {
    auto it = std::find(keys.begin(), keys.end(), key);
    if (it != keys.end()) return bars.bars[static_cast<std::size_t>(it - keys.begin())];
    keys.push_back(key);
    return bars.bars.emplace_back(charts::Bar{label, std::vector<double>(bars.components.size(), 0.0)});
}

/// Per-row energy by component of a CSV with energy_<component>_pj columns, summed over rows
/// that share the value of `group_column` (first-seen order); bars in µJ.
charts::StackedBarChart energy_bars(const CsvTable& csv, std::size_t group_column,
                                    const std::vector<std::string>& labels, const std::string& what) {
    const auto components = energy_component_columns(csv.header, "_pj");
    charts::StackedBarChart bars;
    bars.title = "energy by component per " + what;
    bars.x_title = what;
    bars.y_title = "energy (µJ)";
    for (const auto& e : components) bars.components.push_back(e.component);
    std::vector<std::string> keys;
    for (std::size_t row = 0; row < csv.rows.size(); ++row) {
        const std::string& key = csv.rows[row][group_column];
        charts::Bar& bar = group_bar(bars, keys, key, labels[row]);
        double row_total = 0;
        for (std::size_t c = 0; c < components.size(); ++c) {
            const double v = result_cell(csv, row, components[c].index).value_or(0.0);
            bar.values[c] += v * 1e-6;
            row_total += bar.values[c];
        }
        finite_sum(row_total, csv.source + ":" + std::to_string(csv.row_lines[row]), "the energy components");
        double bar_total = 0;
        for (const double v : bar.values) bar_total += v;
        finite_sum(bar_total, csv.source + ":" + std::to_string(csv.row_lines[row]),
                   "the energy components of '" + key + "'");
    }
    return bars;
}

/// Per layer (its phases summed, first-seen order) the parts of its cycles from layers.csv's
/// columns of node::kCycleParts (named as node::counter_info names them), millions; a part the
/// file lacks (an older layers.csv) is left out. Nothing if it has none.
std::optional<charts::StackedBarChart> cycle_bars(const CsvTable& csv, std::size_t group_column,
                                                  const std::vector<std::string>& labels) {
    charts::StackedBarChart bars;
    bars.title = "cycles per layer by where they went";
    bars.x_title = "layer";
    bars.y_title = "cycles (millions)";
    std::vector<std::size_t> columns;
    for (const node::CyclePart& part : node::kCycleParts) {
        if (const auto c = csv.column(node::counter_info(part.member).name)) {
            columns.push_back(*c);
            bars.components.emplace_back(part.bottleneck);
        }
    }
    if (columns.empty()) return std::nullopt;
    std::vector<std::string> keys;
    for (std::size_t row = 0; row < csv.rows.size(); ++row) {
        charts::Bar& bar = group_bar(bars, keys, csv.rows[row][group_column], labels[row]);
        for (std::size_t c = 0; c < columns.size(); ++c)
            bar.values[c] += result_cell(csv, row, columns[c]).value_or(0.0) * 1e-6;
    }
    return bars;
}

HtmlTable csv_table(const CsvTable& csv, const std::string& caption) {
    HtmlTable t;
    t.caption = caption;
    std::vector<std::size_t> shown;
    for (std::size_t c = 0; c < csv.header.size(); ++c)
        if (!is_detail_column(csv.header[c])) {
            shown.push_back(c);
            t.headers.push_back(csv.header[c]);
        }
    for (const auto& row : csv.rows) {
        std::vector<std::string> cells;
        for (const std::size_t c : shown) cells.push_back(row[c]);
        t.rows.push_back(std::move(cells));
    }
    return t;
}

/// Energy by component (µJ, pJ/MAC, share) from report.json's energy_pj; `macs` may be 0.
HtmlTable energy_table(const std::vector<std::pair<std::string, double>>& components, double macs) {
    HtmlTable t;
    t.caption = "Energy by component";
    t.headers = {"component", "energy (µJ)", "energy per MAC (pJ)", "share (%)"};
    double total = 0;
    for (const auto& [name, pj] : components) total += pj;
    for (const auto& [name, pj] : components)
        t.rows.push_back({name, display_number(pj * 1e-6), macs > 0 ? display_number(pj / macs) : "",
                          total > 0 ? display_number(100 * pj / total) : ""});
    t.rows.push_back(
        {"total", display_number(total * 1e-6), macs > 0 ? display_number(total / macs) : "", total > 0 ? "100" : ""});
    return t;
}

/// summary.json (a flat object of result columns), as a table, if the run wrote one.
void add_summary_json(HtmlPage& page, const std::string& dir) {
    const std::string file = dir + "/summary.json";
    if (!std::filesystem::exists(file)) return;
    const JsonValue root = read_json_file(file);
    if (!root.is_object()) throw UserError(file + ": expected a JSON object");
    HtmlTable t;
    t.caption = "summary.json (the results a sweep collects from this run)";
    t.headers = {"result", "value"};
    for (const auto& m : root.members())
        t.rows.push_back({column_title(m.key), display_number(number_member(root, file, m.key))});
    page.table(t);
}

/// What a paper quotes, as report.json gives it (this version on; an older one lacks them): area,
/// power, efficiency, energy-delay product, energy per sample, the area by component and, for a
/// cluster, one node's area of each type.
void add_efficiency_rows(HtmlTable& summary, const JsonValue& root) {
    const auto optional_row = [&](const char* key, const char* quantity, const char* unit) {
        const JsonValue* v = root.find(key);
        if (!v) return;
        summary.rows.push_back({quantity, v->is_number() ? display_number(v->as_number()) : "unknown", unit});
    };
    optional_row("total_area_mm2", "area", "mm²");
    optional_row("power_w", "average power", "W");
    optional_row("tops_per_w", "efficiency", "TOPS/W");
    optional_row("tops_per_mm2", "area efficiency", "TOPS/mm²");
    optional_row("edp_js", "energy-delay product", "J·s per step");
    optional_row("energy_per_sample_uj", "energy per sample", "µJ");
    for (const auto& [key, suffix] : {std::pair{"area_mm2", " area"}, std::pair{"node_area_mm2", " node area"}})
        if (const JsonValue* area = root.find(key); area && area->is_object())
            for (const auto& m : area->members())
                if (m.value.is_number())
                    summary.rows.push_back({m.key + suffix, display_number(m.value.as_number()), "mm²"});
}

void training_step_sections(HtmlPage& page, ReportPage& report, const std::string& dir, const JsonValue& root,
                            const std::string& file, const CsvTable& layers) {
    // 1. Summary: run identity, then the totals with units.
    const double cycles = number_member(root, file, "total_cycles");
    const double seconds = number_member(root, file, "total_seconds");
    const double macs = number_member(root, file, "total_macs");
    const double energy_pj = number_member(root, file, "total_energy_pj");
    HtmlTable summary;
    summary.headers = {"quantity", "value", "unit"};
    summary.rows.push_back({"network", text_member(root, file, "network"), ""});
    if (const JsonValue* batch = root.find("batch"); batch && (!batch->is_number() || !(batch->as_number() >= 1) ||
                                                               batch->as_number() != std::floor(batch->as_number())))
        throw UserError(file + ": batch: expected a whole number of samples, at least 1");
    summary.rows.push_back({"batch", text_member(root, file, "batch"), "samples"});
    summary.rows.push_back({"fidelity", text_member(root, file, "fidelity"), ""});
    if (const JsonValue* node = root.find("node")) {
        if (!node->is_object()) throw UserError(file + ": node: expected an object");
        // What a node is: whole positive array sides and clock, and whole read latencies.
        for (const char* key : {"array_rows", "array_cols", "group_size", "clock_hz"})
            if (const JsonValue* v = node->find(key))
                if (!v->is_number() || !(v->as_number() >= 1) || v->as_number() != std::floor(v->as_number()))
                    throw UserError(file + ": node." + key + ": expected a whole number of at least 1");
        if (const JsonValue* latency = node->find("sram_read_latency_cycles")) {
            if (!latency->is_object())
                throw UserError(file + ": node.sram_read_latency_cycles: expected an object of cycles by bank");
            for (const auto& m : latency->members())
                if (!m.value.is_number() || !(m.value.as_number() >= 0) ||
                    m.value.as_number() != std::floor(m.value.as_number()))
                    throw UserError(file + ": node.sram_read_latency_cycles." + m.key +
                                    ": expected a whole number of cycles");
        }
        summary.rows.push_back({"array",
                                text_member(*node, file + ": node", "array_rows") + " x " +
                                    text_member(*node, file + ": node", "array_cols"),
                                "fMACs"});
        if (node->find("clock_hz"))
            summary.rows.push_back(
                {"clock", display_number(number_member(*node, file + ": node", "clock_hz") * 1e-6), "MHz"});
    }
    summary.rows.push_back({"cycles", display_number(cycles), "cycles"});
    summary.rows.push_back({"time", display_number(seconds * 1e3), "ms"});
    summary.rows.push_back({"MACs", display_number(macs), "MACs"});
    summary.rows.push_back({"energy", display_number(energy_pj * 1e-6), "µJ"});
    summary.rows.push_back({"energy per MAC", display_number(number_member(root, file, "pj_per_mac")), "pJ"});
    summary.rows.push_back({"utilisation", display_number(number_member(root, file, "utilisation_percent")), "%"});
    add_efficiency_rows(summary, root);
    if (const JsonValue* split = root.find("cycles")) {
        if (!split->is_object()) throw UserError(file + ": cycles: expected an object of cycles by part");
        for (const auto& m : split->members())
            summary.rows.push_back(
                {m.key + " cycles", display_number(number_member(*split, file + ": cycles", m.key)), "cycles"});
    }
    page.section("Summary", "summary");
    page.table(summary);
    page.table(energy_table(energy_components(root, file), macs));
    add_summary_json(page, dir);

    // 2. Energy by layer (phases summed), then the per-layer table.
    const auto layer_column = layers.column("layer");
    if (!layer_column) throw UserError(layers.source + ":1: no column 'layer'");
    page.section("Energy breakdown", "energy");
    std::vector<std::string> labels;
    for (const auto& row : layers.rows) labels.push_back(row[*layer_column]);
    charts::SeriesColours colours;
    const std::string svg = render_bars(energy_bars(layers, *layer_column, labels, "layer"), colours);
    report.plots.emplace_back("energy_by_layer.svg", svg);
    page.figure(svg, "Energy per layer by component (its forward, backward-data and weight-gradient phases summed).");
    if (const std::optional<charts::StackedBarChart> cycles_chart = cycle_bars(layers, *layer_column, labels)) {
        page.section("Cycle breakdown", "cycles");
        const std::string cycles_svg = render_bars(*cycles_chart, colours);
        report.plots.emplace_back("cycles_by_layer.svg", cycles_svg);
        page.figure(cycles_svg,
                    "Cycles per layer by where they went (its phases summed): the array computing, waiting for DRAM "
                    "loads, waiting for the converter, SRAM stalls, drain, the vector unit.");
    }
    page.section("Layers", "layers");
    page.table(csv_table(layers, "One row per layer and phase (layers.csv; energies in pJ, utilisation in %)"));
}

void cluster_sections(HtmlPage& page, ReportPage& report, const std::string& dir, const JsonValue& root,
                      const std::string& file, const CsvTable& layers, const CsvTable& nodes) {
    // 1. Summary; MACs are the sum over nodes (report.json has no total).
    double macs = 0;
    if (const auto c = nodes.column("macs"))
        for (std::size_t row = 0; row < nodes.rows.size(); ++row) macs += result_cell(nodes, row, *c).value_or(0.0);
    finite_sum(macs, nodes.source, "the nodes' MACs");
    const auto components = energy_components(root, file);
    double energy_pj = 0;
    for (const auto& [name, pj] : components) energy_pj += pj;
    HtmlTable summary;
    summary.headers = {"quantity", "value", "unit"};
    summary.rows.push_back({"network", text_member(root, file, "network"), ""});
    summary.rows.push_back({"batch", text_member(root, file, "batch"), "samples"});
    summary.rows.push_back({"nodes", text_member(root, file, "nodes"), ""});
    summary.rows.push_back({"planner", text_member(root, file, "planner"), ""});
    summary.rows.push_back(
        {"simulated step", display_number(number_member(root, file, "simulated_step_s") * 1e3), "ms"});
    summary.rows.push_back({"planned step", display_number(number_member(root, file, "planned_step_s") * 1e3), "ms"});
    summary.rows.push_back(
        {"planned communication", display_number(number_member(root, file, "comm_bytes_planned") * 1e-6), "MB"});
    summary.rows.push_back({"MACs", display_number(macs), "MACs"});
    summary.rows.push_back({"energy", display_number(energy_pj * 1e-6), "µJ"});
    if (macs > 0) summary.rows.push_back({"energy per MAC", display_number(energy_pj / macs), "pJ"});
    add_efficiency_rows(summary, root);
    page.section("Summary", "summary");
    page.table(summary);
    page.table(energy_table(components, macs));
    add_summary_json(page, dir);

    // 2. Energy by node (links are shared, so not in the bars), then the tables.
    const auto node_column = nodes.column("node");
    if (!node_column) throw UserError(nodes.source + ":1: no column 'node'");
    const auto type_column = nodes.column("type");
    std::vector<std::string> labels;
    for (const auto& row : nodes.rows)
        labels.push_back("node " + row[*node_column] + (type_column ? " (" + row[*type_column] + ")" : ""));
    page.section("Energy breakdown", "energy");
    charts::SeriesColours colours;
    const std::string svg = render_bars(energy_bars(nodes, *node_column, labels, "node"), colours);
    report.plots.emplace_back("energy_by_node.svg", svg);
    page.figure(svg, "Energy per node by component; link energy is the cluster's, in the table above, not any node's.");
    page.section("Nodes", "nodes");
    if (const std::optional<charts::StackedBarChart> time = node_time_bars(nodes, labels)) {
        const std::string time_svg = render_bars(*time, colours);
        report.plots.emplace_back("time_by_node.svg", time_svg);
        page.figure(time_svg,
                    "Each node's step: its compute on the array (with the conversions of tensors received in "
                    "another format) and on the vector unit (vector-unit layers and the weight update), its "
                    "exposed communication (waits for exchanges and the final all-reduces) and its idle time.");
    }
    if (const std::optional<charts::StackedBarChart> stages = stage_bars(root, file)) {
        const std::string stage_svg = render_bars(*stages, colours);
        report.plots.emplace_back("time_by_stage.svg", stage_svg);
        page.figure(stage_svg,
                    "Each pipeline stage's mean node: busy with its micro-batches and its weight updates, and "
                    "idle for the rest of the step (the bubble, transfers and final all-reduces), as simulated.");
    }
    if (std::optional<charts::TimelineChart> timeline = stage_timeline(root, file)) {
        timeline->colours = unit_colours(colours, timeline->components);
        const std::string timeline_svg = charts::render_timeline_chart(*timeline);
        report.plots.emplace_back("stage_timeline.svg", timeline_svg);
        page.figure(timeline_svg,
                    "The pipeline's simulated step: each stage's forward and backward pass of each micro-batch and its "
                    "weight updates, from their first op's start to their last op's end on any of the stage's nodes; "
                    "the gaps are the bubble, the stage transfers and the final all-reduces.");
    }
    page.table(csv_table(nodes, "One row per node (nodes.csv; times in s, energies in pJ)"));
    page.section("Layers", "layers");
    page.table(csv_table(layers, "Planned and simulated time per layer (layers.csv; seconds)"));
}

}  // namespace

void check_run_table(const CsvTable& csv, const std::vector<std::string>& required,
                     const std::vector<std::string>& text, Signs signs) {
    for (const std::string& column : required)
        if (!csv.column(column))
            throw UserError(csv.source + ":1: no column '" + column + "' (a header cut short, or not fastsim's file)");
    if (csv.rows.empty()) throw UserError(csv.source + ": a header and no rows (a file cut short?)");
    for (std::size_t c = 0; c < csv.header.size(); ++c) {
        if (std::find(text.begin(), text.end(), csv.header[c]) != text.end()) continue;
        for (std::size_t r = 0; r < csv.rows.size(); ++r) {
            const std::string& cell = csv.rows[r][c];
            if (cell.empty()) continue;
            const std::optional<double> v = parse_number(cell);
            if (!v || !std::isfinite(*v) || (signs == Signs::nonnegative && *v < 0))
                throw UserError(csv.source + ":" + std::to_string(csv.row_lines[r]) + ": column '" + csv.header[c] +
                                "': '" + cell + "' is not a finite number" +
                                (signs == Signs::nonnegative ? " of at least 0" : ""));
        }
    }
}

ReportPage run_report(const std::string& dir) {
    const std::string file = dir + "/report.json";
    const JsonValue root = read_json_file(file);
    if (!root.is_object()) throw UserError(file + ": expected a JSON object");
    const CsvTable layers = read_csv_file(dir + "/layers.csv");
    const bool cluster = root.find("simulated_step_s") != nullptr;
    check_run_table(layers,
                    cluster ? std::vector<std::string>{"layer", "planned_s", "simulated_s"}
                            : std::vector<std::string>{"layer", "phase", "cycles", "energy_total_pj"},
                    {"layer", "phase", "type_root"}, Signs::nonnegative);
    if (!cluster && !root.find("total_cycles"))
        throw UserError(file + ": neither total_cycles (a training step) nor simulated_step_s (a cluster run)");
    if (cluster && root.find("total_cycles"))
        throw UserError(file + ": both total_cycles (a training step) and simulated_step_s (a cluster run)");
    ReportPage report;
    const std::string network = text_member(root, file, "network");
    HtmlPage page("fastsim " + std::string(cluster ? "cluster" : "training step") + " report: " + network,
                  "run of " + text_member(root, file, "config") + ", from " + dir);
    if (cluster)
        cluster_sections(page, report, dir, root, file, layers, [&] {
            CsvTable nodes = read_csv_file(dir + "/nodes.csv");
            check_run_table(nodes, {"node", "type", "compute_s"}, {"node", "type"}, Signs::nonnegative);
            return nodes;
        }());
    else
        training_step_sections(page, report, dir, root, file, layers);
    report.html = page.render();
    return report;
}

ResultsDirKind classify_results_dir(const std::string& dir) {
    namespace fs = std::filesystem;
    if (!fs::is_directory(dir)) throw UserError(dir + ": not a directory");
    const auto has = [&](const char* name) { return fs::exists(fs::path(dir) / name); };
    if (has("explore.json")) {
        for (const char* file : {"designs.csv", "pareto.csv"})
            if (!has(file))
                throw UserError(dir + "/" + file + ": cannot open: missing (the exploration has not finished?)");
        return ResultsDirKind::explore;
    }
    if (has("sweep.json") || has("results.csv")) {
        if (!has("results.csv"))
            throw UserError(dir + "/results.csv: cannot open: missing (the sweep has not written results yet?)");
        if (!has("sweep.json")) throw UserError(dir + "/sweep.json: cannot open: missing, though results.csv is there");
        return ResultsDirKind::sweep;
    }
    if (has("report.json")) {
        if (!has("layers.csv")) throw UserError(dir + "/layers.csv: cannot open: missing, though report.json is there");
        return ResultsDirKind::run;
    }
    if (has("comparison.csv") || has("accuracy.csv")) {
        if (!has("comparison.csv"))
            throw UserError(dir + "/comparison.csv: cannot open: missing (the training run has not finished?)");
        if (!has("accuracy.csv"))
            throw UserError(dir + "/accuracy.csv: cannot open: missing, though comparison.csv is there");
        return ResultsDirKind::train;
    }
    throw UserError(dir +
                    ": neither a sweep directory (sweep.json, results.csv), a run directory (report.json, layers.csv), "
                    "a training directory (comparison.csv, accuracy.csv) nor an exploration (explore.json, "
                    "designs.csv, pareto.csv)");
}

}  // namespace fastsim::report
