// SPDX-License-Identifier: MIT
// `fastsim report` of a `fastsim explore --out` directory (docs/reports.md, "The explore page").
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/csv_reader.h"
#include "common/enum_names.h"
#include "common/errors.h"
#include "common/json_reader.h"
#include "report/html_page.h"
#include "report/result_columns.h"
#include "report/results_dir.h"
#include "report/svg_chart.h"
#include "sweep/explore.h"
#include "sweep/point_record.h"
#include "sweep/sweep_spec.h"

namespace fastsim::report {
namespace {

/// Each row's values of `columns` (empty cells and text as NaN).
std::vector<std::vector<double>> values_of(const CsvTable& csv, const std::vector<std::size_t>& columns) {
    std::vector<std::vector<double>> out;
    for (const auto& row : csv.rows) {
        std::vector<double> v;
        for (const std::size_t c : columns) v.push_back(parse_number(row[c]).value_or(std::nan("")));
        out.push_back(v);
    }
    return out;
}

/// What else explore writes, checked: each design's id names a point of the space (the width
/// sweep::point_id gives it, an index below designs_in_space) and its keys one design; an
/// infeasible design says why (`error`); no feasible design dominates a member of the front.
void check_designs(const std::string& dir, const JsonValue& identity, const CsvTable& designs, const CsvTable& pareto,
                   const std::vector<std::size_t>& objective_columns, std::size_t feasible_column) {
    const std::string file = dir + "/designs.csv";
    const JsonValue* space = identity.find("designs_in_space");
    const auto error_column = designs.column("error");
    // The key columns: between the id and `feasible`.
    if (space && static_cast<double>(designs.rows.size()) > space->as_number())
        throw UserError(file + ": " + std::to_string(designs.rows.size()) + " designs, more than the space's " +
                        display_number(space->as_number()) + " (explore.json designs_in_space)");
    std::map<std::vector<std::string>, std::size_t> design_of_keys;  // keys -> the first row with them
    for (std::size_t r = 0; r < designs.rows.size(); ++r) {
        const auto& row = designs.rows[r];
        const std::string where = file + ":" + std::to_string(designs.row_lines[r]);
        if (space) {
            const auto count = static_cast<std::size_t>(space->as_number());
            const std::string& id = row[0];
            std::size_t index = 0;
            bool digits = id.size() > 1 && id[0] == 'p';
            for (std::size_t i = 1; digits && i < id.size(); ++i) {
                digits = id[i] >= '0' && id[i] <= '9' && index <= (count - 1) / 10;
                index = index * 10 + static_cast<std::size_t>(id[i] - '0');
            }
            if (!digits || index >= count || sweep::point_id(index, count) != id)
                throw UserError(where + ": design '" + id + "' names no design of the space's " +
                                std::to_string(count) + " (explore.json designs_in_space), which are " +
                                sweep::point_id(0, count) + " to " + sweep::point_id(count - 1, count));
        }
        // Two designs with the same keys (an axis may repeat a value) are the same design, so
        // have the same results.
        const std::vector<std::string> keys(row.begin() + 1,
                                            row.begin() + static_cast<std::ptrdiff_t>(feasible_column));
        const auto [at, fresh] = design_of_keys.emplace(keys, r);
        const auto& twin = designs.rows[at->second];
        if (!fresh && !std::equal(row.begin() + static_cast<std::ptrdiff_t>(feasible_column), row.end(),
                                  twin.begin() + static_cast<std::ptrdiff_t>(feasible_column)))
            throw UserError(where + ": design '" + row[0] + "' has the keys of design '" + twin[0] +
                            "' but other results: one of the two rows was edited");
        if (row[feasible_column] == "0" && error_column && row[*error_column].empty())
            throw UserError(where + ": design '" + row[0] + "' is infeasible (feasible 0) with no error to say why");
        if (row[feasible_column] == "1" && error_column && !row[*error_column].empty())
            throw UserError(where + ": design '" + row[0] + "' is feasible (feasible 1) but has an error: '" +
                            printable(row[*error_column]) + "'");
    }
    // Every feasible design meets every constraint explore.json records, on the columns designs.csv has.
    if (const JsonValue* list = identity.find("constraints")) {
        if (!list->is_array()) throw UserError(dir + "/explore.json: constraints: expected a list");
        for (const JsonValue& item : list->items()) {
            const std::optional<sweep::Constraint> c =
                item.is_string() ? sweep::parse_constraint(item.as_string()) : std::nullopt;
            if (!c)
                throw UserError(dir + "/explore.json: constraints: expected \"FIELD <= NUMBER\" (or <, >=, >), got " +
                                (item.is_string() ? "'" + item.as_string() + "'" : std::string("a non-string")));
            const auto column = designs.column(c->field);
            if (!column) continue;
            for (std::size_t r = 0; r < designs.rows.size(); ++r) {
                const auto& row = designs.rows[r];
                if (row[feasible_column] != "1") continue;
                // designs.csv keeps 9 significant digits: a value that held may print on the bound.
                const std::optional<double> v = parse_number(row[*column]);
                if (v && *v < 0 && !sweep::result_may_be_negative(c->field))
                    throw UserError(file + ":" + std::to_string(designs.row_lines[r]) + ": column '" + c->field +
                                    "': " + row[*column] + " is negative, which no " + c->field + " is");
                const auto holds_near = [&](double x) {
                    return c->holds(x) || c->holds(x * (1 + 1e-8)) || c->holds(x * (1 - 1e-8));
                };
                if (!v || !holds_near(*v))
                    throw UserError(file + ":" + std::to_string(designs.row_lines[r]) + ": design '" + row[0] +
                                    "' is feasible but breaks " + c->text + " (" + row[*column] + ")");
            }
        }
    }
    const bool any_feasible = std::any_of(designs.rows.begin(), designs.rows.end(),
                                          [&](const auto& row) { return row[feasible_column] == "1"; });
    if (any_feasible && pareto.rows.empty())
        throw UserError(dir + "/pareto.csv: no design, though designs.csv has feasible ones: a front has at least one");
    const auto objectives_of = [&](const std::vector<std::string>& row) {
        std::vector<double> v;
        for (const std::size_t c : objective_columns) v.push_back(parse_number(row[c]).value_or(std::nan("")));
        return v;
    };
    std::vector<std::pair<const std::string*, std::vector<double>>> feasible;  // id, objectives
    for (const auto& row : designs.rows)
        if (row[feasible_column] == "1") feasible.emplace_back(&row[0], objectives_of(row));
    for (std::size_t p = 0; p < pareto.rows.size(); ++p) {
        const std::vector<double> member = objectives_of(pareto.rows[p]);
        for (const auto& [id, other] : feasible) {
            bool no_worse = true, better = false;
            for (std::size_t o = 0; o < member.size(); ++o) {
                no_worse = no_worse && other[o] <= member[o];
                better = better || other[o] < member[o];
            }
            if (no_worse && better)
                throw UserError(dir + "/pareto.csv:" + std::to_string(pareto.row_lines[p]) + ": design '" +
                                pareto.rows[p][0] + "' is dominated by design '" + *id +
                                "': the front holds only designs no feasible design dominates");
        }
    }
    // And all of them: a feasible design off the front is dominated by a member (the front of a
    // finite set dominates every design it does not hold).
    std::set<std::string> members;
    std::vector<std::vector<double>> front;
    for (std::size_t p = 0; p < pareto.rows.size(); ++p) {
        if (!members.insert(pareto.rows[p][0]).second)
            throw UserError(dir + "/pareto.csv:" + std::to_string(pareto.row_lines[p]) + ": design '" +
                            pareto.rows[p][0] + "' is listed twice");
        front.push_back(objectives_of(pareto.rows[p]));
    }
    // Explore compares exact values, the files keep 9 digits: a member within 1e-8 of a design's
    // every objective (a tie once printed) may be what left it out. The front is scanned in order
    // of its first objective, up to the design's.
    std::sort(front.begin(), front.end());
    const auto within = [](double m, double v) { return m <= v + 1e-8 * std::max(std::abs(m), std::abs(v)); };
    for (const auto& [id, v] : feasible) {
        if (members.count(*id) || v.empty()) continue;
        bool dominated = false;
        for (const std::vector<double>& m : front) {
            if (!within(m[0], v[0])) break;
            dominated = true;
            for (std::size_t o = 1; o < m.size() && dominated; ++o) dominated = within(m[o], v[o]);
            if (dominated) break;
        }
        if (!dominated)
            throw UserError(dir + "/pareto.csv: design '" + *id +
                            "' of designs.csv is feasible and no member of the front dominates it, so the front "
                            "leaves it out wrongly (on explore.json's objectives)");
    }
}

/// explore's run of the knee in DIR/knee (explorations before 2026-11-30 have none): the run of
/// a member of the front, its summary giving that member's objectives. (Which member the knee is
/// may differ from the one the page marks when two tie within designs.csv's 9 digits.)
void check_knee_run(const std::string& dir, const std::vector<std::string>& objectives,
                    const std::vector<std::vector<double>>& front) {
    const std::string summary_file = dir + "/knee/summary.json";
    const JsonValue summary = read_json_file(summary_file);
    std::vector<double> run;
    for (const std::string& o : objectives) {
        const JsonValue* v = summary.is_object() ? summary.find(o) : nullptr;
        if (!v || !v->is_number())
            throw UserError(summary_file + ": " + o +
                            ": missing, but it is an objective of the exploration: knee/ "
                            "is not the run of one of its designs");
        run.push_back(v->as_number());
    }
    const auto same = [](double a, double b) {
        return std::abs(a - b) <= 1e-8 * std::max({1e-300, std::abs(a), std::abs(b)});
    };
    for (const std::vector<double>& member : front)
        if (std::equal(member.begin(), member.end(), run.begin(), same)) return;
    throw UserError(summary_file +
                    ": its objectives are no front member's in pareto.csv: knee/ is not the run of "
                    "the front's knee");
}

}  // namespace

std::optional<std::size_t> knee_of(const std::vector<std::vector<double>>& front) {
    if (front.empty()) return std::nullopt;
    const std::size_t n = front.front().size();
    std::vector<double> lo(n, std::numeric_limits<double>::infinity()), hi(n, -lo[0]);
    for (const auto& v : front)
        for (std::size_t i = 0; i < n; ++i) {
            lo[i] = std::min(lo[i], v[i]);
            hi[i] = std::max(hi[i], v[i]);
        }
    std::optional<std::size_t> best;
    double best_distance = std::numeric_limits<double>::infinity();
    for (std::size_t d = 0; d < front.size(); ++d) {
        double distance = 0;
        for (std::size_t i = 0; i < n; ++i) {
            const double span = hi[i] - lo[i];
            const double x = span > 0 ? (front[d][i] - lo[i]) / span : 0;
            distance += x * x;
        }
        if (distance < best_distance) {
            best_distance = distance;
            best = d;
        }
    }
    return best;
}

ReportPage explore_report(const std::string& dir) {
    const std::string identity_file = dir + "/explore.json";
    const JsonValue identity = read_json_file(identity_file);
    const CsvTable designs = read_csv_file(dir + "/designs.csv");
    const CsvTable pareto = read_csv_file(dir + "/pareto.csv");
    if (pareto.header != designs.header)
        throw UserError(dir + "/pareto.csv:1: its header differs from designs.csv's: not the same exploration");
    std::vector<std::string> objectives;
    if (const JsonValue* list = identity.find("objectives"); list && list->is_array())
        for (const JsonValue& o : list->items())
            if (o.is_string()) objectives.push_back(o.as_string());
    if (objectives.empty()) throw UserError(identity_file + ": objectives: expected a list of summary fields");
    std::vector<std::size_t> columns;
    for (const std::string& o : objectives) {
        const auto c = designs.column(o);
        if (!c) throw UserError(dir + "/designs.csv:1: no column '" + o + "', an objective in explore.json");
        columns.push_back(*c);
    }
    const auto feasible_column = designs.column("feasible");
    if (!feasible_column || *feasible_column == 0)
        throw UserError(dir + "/designs.csv:1: no column 'feasible' after the design's id");
    // What explore writes: each design once, feasible 1 or 0, a feasible design's objectives
    // finite and at least 0 (summary fields); the front, rows of designs.csv that are feasible.
    std::set<std::vector<std::string>> design_rows;
    std::set<std::string> ids;
    for (const auto& [name, table] :
         {std::pair<const char*, const CsvTable*>{"designs.csv", &designs}, {"pareto.csv", &pareto}})
        for (std::size_t r = 0; r < table->rows.size(); ++r) {
            const auto& row = table->rows[r];
            const std::string where = dir + "/" + name + ":" + std::to_string(table->row_lines[r]);
            const std::string& feasible = row[*feasible_column];
            if (feasible != "0" && feasible != "1")
                throw UserError(where + ": column 'feasible': expected 1 or 0, got '" + feasible + "'");
            if (feasible == "1")
                for (std::size_t o = 0; o < objectives.size(); ++o) {
                    const std::optional<double> v = parse_number(row[columns[o]]);
                    if (!v || !std::isfinite(*v) || *v < 0)
                        throw UserError(where + ": column '" + objectives[o] + "': '" + row[columns[o]] +
                                        "' is not a finite number of at least 0");
                }
            if (table == &designs) {
                if (!ids.insert(row[0]).second)
                    throw UserError(where + ": design '" + row[0] + "' is listed twice (each design has one row)");
                design_rows.insert(row);
            } else if (feasible != "1" || !design_rows.count(row)) {
                throw UserError(where + ": design '" + row[0] +
                                "' is not a feasible row of designs.csv: pareto.csv holds rows copied from it");
            }
        }
    constexpr double kMaxWhole = 9007199254740992.0;  // 2^53: every whole number up to it is exact
    for (const char* key : {"designs_in_space", "budget", "seed"})
        if (const JsonValue* v = identity.find(key))
            if (!v->is_number() || !(v->as_number() >= 0) || v->as_number() != std::floor(v->as_number()) ||
                (std::string(key) != "seed" && v->as_number() > kMaxWhole))  // a seed is any 64-bit value
                throw UserError(identity_file + ": " + key + ": expected a whole number from 0" +
                                (std::string(key) == "seed" ? std::string() : " to 2^53"));
    if (const JsonValue* v = identity.find("method")) {
        const bool known = v->is_string() && parse_name<sweep::SearchMethod>(v->as_string()).has_value();
        if (!known) throw UserError(identity_file + ": method: expected auto, exhaustive, sampled or random");
    }
    if (const JsonValue* v = identity.find("budget"); v && v->as_number() < 1)
        throw UserError(identity_file + ": budget: expected at least 1 design, got 0");
    check_designs(dir, identity, designs, pareto, columns, *feasible_column);

    const std::string name =
        identity.find("name") && identity.find("name")->is_string() ? identity.find("name")->as_string() : dir;
    ReportPage report;
    HtmlPage page("fastsim explore: " + name, "the designs explored in " + dir);
    std::size_t feasible = 0;
    for (const auto& row : designs.rows) feasible += row[*feasible_column] == "1" ? 1 : 0;
    HtmlTable summary;
    summary.headers = {"quantity", "value"};
    for (const char* key : {"designs_in_space", "method", "budget", "seed"})
        if (const JsonValue* v = identity.find(key))
            summary.rows.push_back({key, v->is_string() ? v->as_string() : display_number(v->as_number())});
    summary.rows.push_back({"designs evaluated", std::to_string(designs.rows.size())});
    summary.rows.push_back({"feasible", std::to_string(feasible)});
    summary.rows.push_back({"on the Pareto front", std::to_string(pareto.rows.size())});
    page.section("Summary", "summary");
    page.table(summary);

    // The knee: the front member nearest the ideal point, each objective scaled to the front's range.
    const std::vector<std::vector<double>> front = values_of(pareto, columns);
    const std::optional<std::size_t> knee = knee_of(front);
    if (knee) {
        page.section("The knee", "knee");
        page.paragraph(
            "The front's knee: the design nearest the ideal point (each objective's best on the front), "
            "with every objective scaled to its range on the front.");
        HtmlTable t;
        t.headers = pareto.header;
        t.rows = {pareto.rows[*knee]};
        page.table(t);
        if (std::filesystem::exists(dir + "/knee")) check_knee_run(dir, objectives, values_of(pareto, columns));
        if (std::filesystem::exists(dir + "/knee/report.json"))
            page.link(
                "fastsim explore ran the knee in full, as fastsim run runs its config, into knee/: its own "
                "report has every layer, phase and energy component.",
                "knee/report.html", "The knee's full report (knee/report.html)");
    }

    // Every pair of objectives: the feasible designs, the front and the knee.
    const std::vector<std::vector<double>> all = values_of(designs, columns);
    charts::SeriesColours colours;
    page.section("Pareto front", "front");
    for (std::size_t i = 0; i < objectives.size(); ++i)
        for (std::size_t j = i + 1; j < objectives.size(); ++j) {
            charts::LineChart chart;
            chart.title = objectives[j] + " against " + objectives[i];
            chart.x_title = column_title(objectives[i]);
            chart.y_title = column_title(objectives[j]);
            chart.y_from_zero = false;
            charts::LineSeries designs_series{"feasible designs", {}, false}, front_series{"Pareto front", {}, false},
                knee_series{"knee", {}, false};
            for (std::size_t r = 0; r < designs.rows.size(); ++r)
                if (designs.rows[r][*feasible_column] == "1") designs_series.points.push_back({all[r][i], all[r][j]});
            for (std::size_t r = 0; r < front.size(); ++r) front_series.points.push_back({front[r][i], front[r][j]});
            if (knee) knee_series.points.push_back({front[*knee][i], front[*knee][j]});
            chart.series = {designs_series, front_series, knee_series};
            chart.colours = colours.slots({"feasible designs", "Pareto front", "knee"});
            const std::string svg = charts::render_line_chart(chart);
            report.plots.emplace_back("front_" + objectives[i] + "_" + objectives[j] + ".svg", svg);
            page.figure(svg, "Every feasible design and the Pareto front projected on " + objectives[i] + " and " +
                                 objectives[j] +
                                 "; a front member may look dominated in a projection, by a design "
                                 "worse on another objective.");
        }
    page.table(html_table(pareto, "The Pareto front (pareto.csv)"));
    page.section("Designs", "designs");
    page.table(html_table(designs, "Every design evaluated, in evaluation order (designs.csv)"));
    report.html = page.render();
    return report;
}

}  // namespace fastsim::report
