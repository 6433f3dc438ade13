// SPDX-License-Identifier: MIT
// The report of a sweep directory: sweep.json (axes, plot choice), results.csv (one row per
// point), points/<id>/point.json (the error of a failed point).
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <limits>
#include <optional>

#include "common/errors.h"
#include "common/csv_reader.h"
#include "common/output_files.h"
#include "report/html_page.h"
#include "common/json_reader.h"
#include "report/result_columns.h"
#include "report/results_dir.h"
#include "report/svg_chart.h"
#include "sweep/point_record.h"
#include "sweep/sweep_dir.h"

namespace fastsim::report {
namespace {

/// sweep.json, with the plot choice resolved to its defaults.
struct SweepSpec : sweep::SweepIdentity {
    SweepSpec(sweep::SweepIdentity identity) : sweep::SweepIdentity(std::move(identity)) {
        // x: plot.x, else the first key of the first axis; one line per value of plot.series,
        // else of the second axis's first key (none with one axis). An empty hint keeps the default.
        if (plot_x.empty()) plot_x = axes[0].keys[0];
        if (plot_series.empty() && axes.size() > 1) plot_series = axes[1].keys[0];
    }
};

[[noreturn]] void key_error(const std::string& file, const std::string& key, const std::string& message) {
    throw UserError(file + ": " + key + ": " + message);
}

/// results.csv with its columns located and its rows split into ok and failed.
struct SweepResults {
    CsvTable csv;
    std::size_t point_column = 0;
    std::size_t status_column = 0;
    std::optional<std::size_t> error_column;  ///< "error": why a point failed (fastsim sweep writes it last)
    std::vector<std::size_t> axis_columns;    ///< per axis key, axes in order
    std::vector<std::size_t> ok_rows;
    std::vector<std::size_t> failed_rows;

    /// The number in `row`, `column` (NaN for an empty cell).
    [[nodiscard]] double number(std::size_t row, std::size_t column) const {
        return parse_number(csv.rows[row][column]).value_or(std::numeric_limits<double>::quiet_NaN());
    }
    [[nodiscard]] const std::string& cell(std::size_t row, std::size_t column) const { return csv.rows[row][column]; }
};

std::size_t require_column(const CsvTable& csv, const std::string& name, const std::string& why) {
    const auto c = csv.column(name);
    if (!c) throw UserError(csv.source + ":1: no column '" + name + "'" + why);
    return *c;
}

SweepResults read_results(const std::string& file, const SweepSpec& spec, const std::string& sweep_file) {
    SweepResults r;
    r.csv = read_csv_file(file);
    r.point_column = require_column(r.csv, "point", "");
    r.status_column = require_column(r.csv, "status", "");
    r.error_column = r.csv.column("error");
    for (const auto& axis : spec.axes)
        for (const auto& key : axis.keys)
            r.axis_columns.push_back(require_column(r.csv, key, " (an axis key of " + sweep_file + ")"));
    // The known result columns, in rows that succeeded: empty or a finite decimal number,
    // >= 0 unless the column is signed. Other columns may hold text, but not a malformed
    // number (nan, inf, hex).
    std::vector<std::size_t> results;
    for (const auto name : headline_result_columns())
        if (const auto c = r.csv.column(name)) results.push_back(*c);
    for (const auto& e : energy_component_columns(r.csv.header, "_uj")) results.push_back(e.index);
    std::map<std::string, int> seen;  // point id -> line
    for (std::size_t row = 0; row < r.csv.rows.size(); ++row) {
        const std::string& point = r.cell(row, r.point_column);
        const std::string at = file + ":" + std::to_string(r.csv.row_lines[row]);
        if (const auto [it, fresh] = seen.emplace(point, r.csv.row_lines[row]); !fresh)
            throw UserError(at + ": point '" + point + "' has a second row (the first is on line " +
                            std::to_string(it->second) + ")");
        if (spec.points > 0 && seen.size() > spec.points)
            throw UserError(at + ": more rows than the " + std::to_string(spec.points) + " points of " + sweep_file);
        const std::string& status = r.cell(row, r.status_column);
        if (status != "ok" && status != "failed")
            throw UserError(at + ": column 'status': expected ok or failed, got '" + status + "'");
        if (status != "ok") {
            r.failed_rows.push_back(row);
            continue;
        }
        if (r.error_column && !r.cell(row, *r.error_column).empty())
            throw UserError(at + ": column 'error': an ok point has no error, got '" +
                            printable(r.cell(row, *r.error_column)) + "'");
        r.ok_rows.push_back(row);
        for (const std::size_t c : results) (void)result_cell(r.csv, row, c);
        double energy = 0;  // the stacked bars add the components up
        for (const auto& e : energy_component_columns(r.csv.header, "_uj"))
            energy += result_cell(r.csv, row, e.index).value_or(0);
        if (!std::isfinite(energy)) throw UserError(at + ": the energy components sum to more than a double holds");
        for (std::size_t c = 0; c < r.csv.header.size(); ++c)
            if (is_malformed_number(r.cell(row, c)))
                throw UserError(at + ": column '" + r.csv.header[c] + "': '" + r.cell(row, c) +
                                "' is not a finite number");
    }
    return r;
}

/// A point's axis values for people: per axis its key values ("16" when all keys of the axis
/// agree, else "16/8"), axes joined by ", ".
std::string point_label(const SweepResults& r, const SweepSpec& spec, std::size_t row) {
    std::string label;
    std::size_t column = 0;
    for (const auto& axis : spec.axes) {
        std::vector<std::string> values;
        for (std::size_t k = 0; k < axis.keys.size(); ++k) values.push_back(r.cell(row, r.axis_columns[column++]));
        const bool same =
            std::all_of(values.begin(), values.end(), [&](const std::string& v) { return v == values.front(); });
        std::string joined = values.front();
        if (!same)
            for (std::size_t k = 1; k < values.size(); ++k) joined += "/" + values[k];
        label += (label.empty() ? "" : ", ") + joined;
    }
    return label;
}

std::string axis_names(const SweepSpec& spec) {
    std::string names;
    for (const auto& axis : spec.axes) names += (names.empty() ? "" : ", ") + axis.name;
    return names;
}

/// The index of the axis holding `key`, or axes.size().
std::size_t axis_of(const SweepSpec& spec, const std::string& key) {
    for (std::size_t a = 0; a < spec.axes.size(); ++a)
        if (std::find(spec.axes[a].keys.begin(), spec.axes[a].keys.end(), key) != spec.axes[a].keys.end()) return a;
    return spec.axes.size();
}

/// Groups the ok points into lines for the metric plots: x = plot.x; one line per combination of
/// the keys outside x's axis (named by plot.series' value, plus other axes' first keys if any).
struct LineLayout {
    std::vector<std::string> categories;  ///< non-empty when some x value is not a number
    std::vector<std::string> series_names;
    std::vector<std::vector<std::pair<double, std::size_t>>> members;  ///< per series: (x, row), sorted by x
    std::string legend_title;
};

LineLayout layout_lines(const SweepResults& r, const SweepSpec& spec) {
    LineLayout out;
    const std::size_t x_column = *r.csv.column(spec.plot_x);
    const std::size_t x_axis = axis_of(spec, spec.plot_x);
    // 1. x: numbers when every ok point's x is a number, else categories in first-seen order.
    bool numeric_x = true;
    for (const std::size_t row : r.ok_rows) numeric_x = numeric_x && parse_number(r.cell(row, x_column)).has_value();
    if (!numeric_x)
        for (const std::size_t row : r.ok_rows)
            if (std::find(out.categories.begin(), out.categories.end(), r.cell(row, x_column)) == out.categories.end())
                out.categories.push_back(r.cell(row, x_column));
    // 2. Series identity: every axis key outside x's axis; named by the series key and other axes.
    std::vector<std::size_t> identity_columns, name_columns;
    std::size_t column = 0;
    for (std::size_t a = 0; a < spec.axes.size(); ++a)
        for (const auto& key : spec.axes[a].keys) {
            const std::size_t c = r.axis_columns[column++];
            if (a == x_axis) continue;
            identity_columns.push_back(c);
            const bool series_key = key == spec.plot_series;
            const bool other_axis_head = a != axis_of(spec, spec.plot_series) && key == spec.axes[a].keys.front();
            if (series_key || other_axis_head) name_columns.push_back(c);
        }
    if (const auto s = r.csv.column(spec.plot_series); s && !spec.plot_series.empty()) {
        // The series key first in names, even when it is not an axis key.
        name_columns.erase(std::remove(name_columns.begin(), name_columns.end(), *s), name_columns.end());
        name_columns.insert(name_columns.begin(), *s);
        if (std::find(identity_columns.begin(), identity_columns.end(), *s) == identity_columns.end())
            identity_columns.push_back(*s);
    }
    for (const std::size_t c : name_columns)
        out.legend_title += (out.legend_title.empty() ? "" : ", ") + r.csv.header[c];
    std::vector<std::string> identities;
    for (const std::size_t row : r.ok_rows) {
        std::string identity, name;
        for (const std::size_t c : identity_columns) identity += r.cell(row, c) + '\x1f';
        for (const std::size_t c : name_columns) name += (name.empty() ? "" : ", ") + r.cell(row, c);
        auto it = std::find(identities.begin(), identities.end(), identity);
        if (it == identities.end()) {
            identities.push_back(identity);
            out.series_names.push_back(name);
            out.members.emplace_back();
            it = identities.end() - 1;
        }
        const double x =
            numeric_x
                ? r.number(row, x_column)
                : static_cast<double>(std::find(out.categories.begin(), out.categories.end(), r.cell(row, x_column)) -
                                      out.categories.begin());
        out.members[static_cast<std::size_t>(it - identities.begin())].emplace_back(x, row);
    }
    // 3. Points along x; series by their first name value, numerically when they are numbers.
    for (auto& m : out.members)
        std::stable_sort(m.begin(), m.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    std::vector<std::size_t> order(out.series_names.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    const auto first_number = [&](std::size_t i) {
        const std::string& n = out.series_names[i];
        return parse_number(n.substr(0, n.find(", ")));
    };
    const bool numeric_series =
        std::all_of(order.begin(), order.end(), [&](std::size_t i) { return first_number(i).has_value(); });
    if (numeric_series)
        std::stable_sort(order.begin(), order.end(),
                         [&](std::size_t a, std::size_t b) { return *first_number(a) < *first_number(b); });
    LineLayout sorted = out;
    for (std::size_t i = 0; i < order.size(); ++i) {
        sorted.series_names[i] = out.series_names[order[i]];
        sorted.members[i] = out.members[order[i]];
    }
    if (name_columns.empty() && sorted.series_names.size() == 1) sorted.series_names[0].clear();
    return sorted;
}

charts::LineChart metric_chart(const SweepResults& r, const LineLayout& layout, const SweepSpec& spec,
                               std::size_t column, const std::string& what) {
    charts::LineChart chart;
    chart.title = what + " vs " + spec.plot_x;
    chart.x_title = spec.plot_x;
    chart.y_title = column_title(r.csv.header[column]);
    chart.legend_title = layout.legend_title;
    chart.categories = layout.categories;
    for (std::size_t s = 0; s < layout.members.size(); ++s) {
        charts::LineSeries series;
        series.name = layout.series_names[s];
        for (const auto& [x, row] : layout.members[s]) series.points.push_back({x, r.number(row, column)});
        chart.series.push_back(std::move(series));
    }
    return chart;
}

/// Why a point failed: its results.csv "error" cell, else the "error" string of
/// points/<id>/point.json; problems reading that file are shown, not thrown.
std::string point_error(const std::string& dir, const SweepResults& r, std::size_t row) {
    if (r.error_column && !r.cell(row, *r.error_column).empty()) return r.cell(row, *r.error_column);
    const std::string& point = r.cell(row, r.point_column);
    const std::string file = dir + "/points/" + point + "/point.json";
    if (!std::filesystem::exists(file)) return "(no " + file + ")";
    try {
        const JsonValue root = read_json_file(file);
        const JsonValue* error = root.is_object() ? root.find("error") : nullptr;
        if (error && error->is_string() && !error->as_string().empty()) return error->as_string();
        return "(no error recorded in " + file + ")";
    } catch (const UserError& e) {
        return std::string("(unreadable: ") + e.what() + ")";
    }
}

/// Each row of results.csv against its point's record (points/<id>/point.json, which the sweep
/// checked against the point's summary.json): the point one of the sweep's, and where the record
/// reads, its axis values, its status and every result both give equal. A record that does not
/// read is shown on the page, not checked; a merged folder (sweep-merge) has no records.
void check_rows_against_records(const std::string& dir, const SweepSpec& spec, const SweepResults& r) {
    namespace fs = std::filesystem;
    const std::string file = r.csv.source;
    // The sweep's ids: sweep::point_id of an index below spec.points.
    const auto is_point = [&](const std::string& id) {
        if (id.size() < 2 || id.size() > 20 || id[0] != 'p' ||
            id.find_first_not_of("0123456789", 1) != std::string::npos)
            return false;
        const std::size_t index = std::stoull(id.substr(1));
        return index < spec.points && sweep::point_id(index, spec.points) == id;
    };
    for (std::size_t row = 0; row < r.csv.rows.size(); ++row) {
        const std::string at = file + ":" + std::to_string(r.csv.row_lines[row]);
        const std::string& id = r.cell(row, r.point_column);
        if (spec.points > 0 && !is_point(id))
            throw UserError(at + ": point '" + printable(id) + "' is not one of the " + std::to_string(spec.points) +
                            " points of " + dir + "/sweep.json");
        std::optional<sweep::PointRecord> record;
        try {
            record = sweep::read_point_record((fs::path(dir) / "points" / id / "point.json").string());
        } catch (const UserError&) {
            continue;  // shown on the page
        }
        if (!record) continue;
        if (record->ok)
            sweep::check_results_against_summary(*record, (fs::path(dir) / "points" / id / "summary.json").string(),
                                                 (fs::path(dir) / "points" / id / "point.json").string());
        const std::string against = ", but its record " + dir + "/points/" + id + "/point.json says ";
        const bool ok = r.cell(row, r.status_column) == "ok";
        if (ok != record->ok)
            throw UserError(at + ": point " + id + " is " + (ok ? "ok" : "failed") + against +
                            (record->ok ? "ok" : "failed"));
        std::size_t column = 0;
        for (const auto& [key, value] : record->values) {
            if (column >= r.axis_columns.size()) break;
            const std::string& cell = r.cell(row, r.axis_columns[column++]);
            if (cell != value)
                throw UserError(at + ": column '" + key + "' is '" + printable(cell) + "'" + against + "'" +
                                printable(value) + "'");
        }
        if (!ok) continue;
        for (const auto& [name, value] : record->results) {
            const std::optional<std::size_t> c = r.csv.column(name);
            if (!c) continue;  // a column an earlier version did not write
            const std::optional<double> cell = parse_number(r.cell(row, *c));
            if (!cell || std::abs(*cell - value) > 1e-8 * std::max({1e-300, std::abs(*cell), std::abs(value)}))
                throw UserError(at + ": column '" + name + "' is '" + printable(r.cell(row, *c)) + "'" + against +
                                format_number(value));
        }
    }
}

}  // namespace

ReportPage sweep_report(const std::string& dir) {
    // 1. Inputs.
    const std::string sweep_file = dir + "/sweep.json";
    const SweepSpec spec(sweep::read_sweep_json(dir));
    const SweepResults r = read_results(dir + "/results.csv", spec, sweep_file);
    if (!r.csv.column(spec.plot_x))
        key_error(sweep_file, "plot.x", "'" + spec.plot_x + "' is not a column of " + r.csv.source);
    if (!spec.plot_series.empty() && !r.csv.column(spec.plot_series))
        key_error(sweep_file, "plot.series", "'" + spec.plot_series + "' is not a column of " + r.csv.source);
    check_rows_against_records(dir, spec, r);

    ReportPage report;
    std::string subtitle = "sweep " + (spec.name.empty() ? std::string("(unnamed)") : spec.name) + " from " + dir;
    if (!spec.base_config.empty()) subtitle += "; base config " + spec.base_config;
    if (!spec.fingerprint.empty()) subtitle += "; fingerprint " + spec.fingerprint;
    HtmlPage page("fastsim sweep report: " + (spec.name.empty() ? dir : spec.name), subtitle);

    // 2. Summary: every point with its axis values, status and headline results.
    page.section("Summary", "summary");
    std::string counts = std::to_string(r.csv.rows.size()) + " points in results.csv";
    if (spec.points != 0 && spec.points != r.csv.rows.size())
        counts += " of the sweep's " + std::to_string(spec.points);
    counts +=
        ": " + std::to_string(r.ok_rows.size()) + " ok, " + std::to_string(r.failed_rows.size()) + " failed. Axes: ";
    for (std::size_t a = 0; a < spec.axes.size(); ++a) {
        counts += (a ? "; " : "") + spec.axes[a].name + " (";
        for (std::size_t k = 0; k < spec.axes[a].keys.size(); ++k) counts += (k ? ", " : "") + spec.axes[a].keys[k];
        counts += ")";
    }
    page.paragraph(counts + ".");
    std::vector<std::size_t> headline, shown;
    for (const auto name : headline_result_columns())
        if (const auto c = r.csv.column(name)) headline.push_back(*c);
    HtmlTable summary;
    summary.headers.push_back("point");
    shown.push_back(r.point_column);
    for (const std::size_t c : r.axis_columns) {
        summary.headers.push_back(r.csv.header[c]);
        shown.push_back(c);
    }
    summary.headers.push_back("status");
    shown.push_back(r.status_column);
    for (const std::size_t c : headline) {
        summary.headers.push_back(column_title(r.csv.header[c]));
        shown.push_back(c);
    }
    for (const auto& row : r.csv.rows) {
        std::vector<std::string> cells;
        for (const std::size_t c : shown) cells.push_back(row[c]);
        summary.rows.push_back(std::move(cells));
    }
    page.table(summary);

    // 3. Metric plots against plot.x, one line per series.
    const auto components = energy_component_columns(r.csv.header, "_uj");
    charts::SeriesColours colours;  // a series keeps its colour in every plot of the page
    page.section("Plots", "plots");
    if (r.ok_rows.empty()) {
        page.paragraph("No point succeeded: nothing to plot.");
    } else {
        const LineLayout layout = layout_lines(r, spec);
        const std::string time_column = r.csv.column("cycles") ? "cycles" : "step_ms";
        const std::vector<std::pair<std::string, std::string>> metrics{
            {time_column, time_column == "cycles" ? "cycles per training step" : "simulated step time"},
            {"energy_uj", "energy per training step"},
            {"utilisation_percent", "array utilisation"},
            {"pj_per_mac", "energy per MAC"}};
        for (const auto& [name, what] : metrics) {
            const auto c = r.csv.column(name);
            if (!c) continue;
            charts::LineChart chart = metric_chart(r, layout, spec, *c, what);
            std::vector<std::string> names;
            for (const charts::LineSeries& series : chart.series) names.push_back(series.name);
            chart.colours = colours.slots(names);
            const std::string svg = charts::render_line_chart(chart);
            report.plots.emplace_back(name + ".svg", svg);
            page.figure(svg, column_title(name) + " of each ok point against " + spec.plot_x +
                                 (layout.legend_title.empty() ? "" : ", one line per " + layout.legend_title) + ".");
        }
    }

    // 4. Energy breakdown: a stacked bar per ok point, and the numbers in a table.
    if (!components.empty() && !r.ok_rows.empty()) {
        page.section("Energy breakdown", "energy");
        charts::StackedBarChart bars;
        bars.title = "energy by component";
        bars.x_title = "point (" + axis_names(spec) + ")";
        bars.y_title = "energy (µJ)";
        HtmlTable table;
        table.headers = {"point", axis_names(spec)};
        for (const auto& e : components) {
            bars.components.push_back(e.component);
            table.headers.push_back(column_title(r.csv.header[e.index]));
        }
        const auto total = r.csv.column("energy_uj");
        if (total) table.headers.push_back(column_title("energy_uj"));
        for (const std::size_t row : r.ok_rows) {
            charts::Bar bar;
            bar.label = point_label(r, spec, row);
            std::vector<std::string> cells{r.cell(row, r.point_column), bar.label};
            for (const auto& e : components) {
                bar.values.push_back(r.number(row, e.index));
                cells.push_back(r.cell(row, e.index));
            }
            if (total) cells.push_back(r.cell(row, *total));
            bars.bars.push_back(std::move(bar));
            table.rows.push_back(std::move(cells));
        }
        bars.colours = colours.slots(bars.components);
        const std::string svg = charts::render_stacked_bar_chart(bars);
        report.plots.emplace_back("energy_breakdown.svg", svg);
        page.figure(svg, "Energy per training step by component for each ok point, labelled by its axis values (" +
                             axis_names(spec) + ").");
        page.table(table);
    }

    // 5. Other result columns, then the failed points with their errors.
    std::vector<std::size_t> others;
    for (std::size_t c = 0; c < r.csv.header.size(); ++c) {
        const bool used =
            std::find(shown.begin(), shown.end(), c) != shown.end() || c == r.error_column ||
            std::any_of(components.begin(), components.end(), [&](const auto& e) { return e.index == c; });
        if (!used) others.push_back(c);
    }
    if (!others.empty()) {
        page.section("More results", "more");
        HtmlTable more;
        more.headers = {"point", axis_names(spec)};
        for (const std::size_t c : others) more.headers.push_back(column_title(r.csv.header[c]));
        for (const std::size_t row : r.ok_rows) {
            std::vector<std::string> cells{r.cell(row, r.point_column), point_label(r, spec, row)};
            for (const std::size_t c : others) cells.push_back(r.cell(row, c));
            more.rows.push_back(std::move(cells));
        }
        page.table(more);
    }
    if (!r.failed_rows.empty()) {
        page.section("Failed points", "failed");
        HtmlTable failed;
        failed.headers = {"point", axis_names(spec), "status", "error"};
        for (const std::size_t row : r.failed_rows)
            failed.rows.push_back({r.cell(row, r.point_column), point_label(r, spec, row), r.cell(row, r.status_column),
                                   point_error(dir, r, row)});
        page.table(failed);
    }
    report.html = page.render();
    return report;
}

}  // namespace fastsim::report
