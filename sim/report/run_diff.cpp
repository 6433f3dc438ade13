// SPDX-License-Identifier: MIT
#include "report/run_diff.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "common/csv_reader.h"
#include "common/errors.h"
#include "common/json_reader.h"

namespace fastsim::report {
namespace {

/// Every number of `root` outside arrays, with nested members as "object.member".
std::vector<std::pair<std::string, double>> numbers_of(const JsonValue& root, const std::string& file) {
    if (!root.is_object()) throw UserError(file + ": expected a JSON object (a fastsim run's report.json)");
    std::vector<std::pair<std::string, double>> out;
    for (const JsonMember& m : root.members()) {
        if (m.value.is_number()) out.emplace_back(m.key, m.value.as_number());
        if (!m.value.is_object()) continue;
        for (const JsonMember& inner : m.value.members())
            if (inner.value.is_number()) out.emplace_back(m.key + "." + inner.key, inner.value.as_number());
    }
    return out;
}

struct RunFiles {
    std::string config;
    std::vector<std::pair<std::string, double>> totals;
    CsvTable layers;
};

RunFiles read_run(const std::string& dir) {
    const std::string report = dir + "/report.json", layers = dir + "/layers.csv";
    const JsonValue root = read_json_file(report);
    RunFiles run{"", numbers_of(root, report), read_csv_file(layers)};
    if (const JsonValue* config = root.find("config"); config != nullptr && config->is_string()) run.config = config->as_string();
    return run;
}

/// Whether every cell of `column` is a number (an empty table's columns are).
bool numeric_column(const CsvTable& csv, std::size_t column) {
    return std::all_of(csv.rows.begin(), csv.rows.end(),
                       [&](const std::vector<std::string>& row) { return parse_number(row[column]).has_value(); });
}

/// The row's cells in the text columns, joined.
std::string row_key(const CsvTable& csv, const std::vector<std::string>& text_columns, std::size_t row) {
    std::string key;
    for (const std::string& name : text_columns) {
        const auto column = csv.column(name);
        key += (key.empty() ? "" : " / ") + (column ? csv.rows[row][*column] : std::string());
    }
    return key;
}

}  // namespace

std::optional<double> percent_change(const DiffValue& v) {
    if (!v.a || !v.b || *v.a == 0) return std::nullopt;
    return 100.0 * (*v.b - *v.a) / std::fabs(*v.a);
}

RunDiff diff_runs(const std::string& dir_a, const std::string& dir_b) {
    const RunFiles a = read_run(dir_a), b = read_run(dir_b);
    RunDiff diff;
    diff.config_a = a.config;
    diff.config_b = b.config;

    // Totals: A's numbers in order, with B's where it has them; then the ones only B has.
    std::map<std::string, double> b_totals(b.totals.begin(), b.totals.end());
    std::map<std::string, bool> in_a;
    for (const auto& [name, value] : a.totals) {
        in_a[name] = true;
        const auto it = b_totals.find(name);
        diff.totals.push_back({name, {value, it == b_totals.end() ? std::nullopt : std::optional<double>(it->second)}});
    }
    for (const auto& [name, value] : b.totals)
        if (!in_a.count(name)) diff.totals.push_back({name, {std::nullopt, value}});

    // Layers: text columns form the key; the headline numeric columns are compared.
    std::vector<std::string> text_columns, numeric_both;
    for (std::size_t c = 0; c < a.layers.header.size(); ++c) {
        const std::string& name = a.layers.header[c];
        const auto in_b = b.layers.column(name);
        const bool numeric = numeric_column(a.layers, c) && (!in_b || numeric_column(b.layers, *in_b));
        if (!numeric)
            text_columns.push_back(name);
        else if (in_b)
            numeric_both.push_back(name);
    }
    for (const char* headline : {"cycles", "energy_total_pj", "planned_s", "simulated_s"})
        if (std::find(numeric_both.begin(), numeric_both.end(), headline) != numeric_both.end())
            diff.layer_columns.emplace_back(headline);
    if (diff.layer_columns.empty()) diff.layer_columns = numeric_both;

    const auto values_of = [&](const CsvTable& csv, std::size_t row) {
        std::vector<double> out;
        for (const std::string& name : diff.layer_columns) out.push_back(*parse_number(csv.rows[row][*csv.column(name)]));
        return out;
    };
    std::map<std::string, std::size_t> b_rows;
    for (std::size_t r = 0; r < b.layers.rows.size(); ++r) b_rows.emplace(row_key(b.layers, text_columns, r), r);
    std::map<std::string, bool> matched;
    for (std::size_t r = 0; r < a.layers.rows.size(); ++r) {
        LayerDiff row{row_key(a.layers, text_columns, r), {}};
        const std::vector<double> av = values_of(a.layers, r);
        const auto it = b_rows.find(row.key);
        const std::vector<double> bv = it == b_rows.end() ? std::vector<double>() : values_of(b.layers, it->second);
        for (std::size_t c = 0; c < av.size(); ++c)
            row.values.push_back({av[c], bv.empty() ? std::nullopt : std::optional<double>(bv[c])});
        matched[row.key] = true;
        diff.layers.push_back(std::move(row));
    }
    for (std::size_t r = 0; r < b.layers.rows.size(); ++r) {
        LayerDiff row{row_key(b.layers, text_columns, r), {}};
        if (matched.count(row.key)) continue;
        for (double v : values_of(b.layers, r)) row.values.push_back({std::nullopt, v});
        diff.layers.push_back(std::move(row));
    }
    return diff;
}

}  // namespace fastsim::report
