// SPDX-License-Identifier: MIT
#include "report/run_diff.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "common/csv_reader.h"
#include "common/errors.h"
#include "common/json_reader.h"
#include "report/results_dir.h"

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
    check_run_table(run.layers, {"layer"}, {"layer", "phase", "type_root"}, Signs::nonnegative);
    if (const JsonValue* config = root.find("config"); config != nullptr && config->is_string())
        run.config = config->as_string();
    return run;
}

/// Whether every cell of `column` is a number; a cell that only looks like one (nan, inf,
/// 1e999) is an error naming its line, as everywhere else.
bool numeric_column(const CsvTable& csv, std::size_t column) {
    bool numeric = true;
    for (std::size_t r = 0; r < csv.rows.size(); ++r) {
        const std::string& cell = csv.rows[r][column];
        if (is_malformed_number(cell))
            throw UserError(csv.source + ":" + std::to_string(csv.row_lines[r]) + ": " + csv.header[column] + ": '" +
                            cell + "' is not a finite number");
        numeric = numeric && parse_number(cell).has_value();
    }
    return numeric;
}

/// The columns that name a row: layer, and phase in a node run's layers.csv.
std::vector<std::string> key_columns(const CsvTable& csv) {
    if (!csv.column("layer")) throw UserError(csv.source + ": expected a layer column (a fastsim run's layers.csv)");
    if (csv.column("phase")) return {"layer", "phase"};
    return {"layer"};
}

/// Row index by key; a key given twice is an error naming both lines.
std::map<std::string, std::size_t> index_rows(const CsvTable& csv, const std::vector<std::string>& keys) {
    std::map<std::string, std::size_t> rows;
    for (std::size_t r = 0; r < csv.rows.size(); ++r) {
        std::string key;
        for (const std::string& name : keys) key += (key.empty() ? "" : " / ") + csv.rows[r][*csv.column(name)];
        const auto [it, inserted] = rows.emplace(key, r);
        if (!inserted)
            throw UserError(csv.source + ":" + std::to_string(csv.row_lines[r]) + ": '" + key +
                            "' again (first on line " + std::to_string(csv.row_lines[it->second]) +
                            "): rows must be unique to be compared");
    }
    return rows;
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
    std::set<std::string> in_a;
    for (const auto& [name, value] : a.totals) {
        in_a.insert(name);
        const auto it = b_totals.find(name);
        diff.totals.push_back({name, {value, it == b_totals.end() ? std::nullopt : std::optional<double>(it->second)}});
    }
    for (const auto& [name, value] : b.totals)
        if (!in_a.count(name)) diff.totals.push_back({name, {std::nullopt, value}});

    // Layers: matched by layer (and phase); the headline numeric columns are compared.
    const std::vector<std::string> keys = key_columns(a.layers);
    if (key_columns(b.layers) != keys)
        throw UserError("cannot compare " + a.layers.source + " and " + b.layers.source +
                        ": one is a node run's (layer, phase rows) and the other a cluster run's (layer rows)");
    std::vector<std::string> numeric_both;
    for (std::size_t c = 0; c < a.layers.header.size(); ++c) {
        const std::string& name = a.layers.header[c];
        const auto in_b = b.layers.column(name);
        if (std::find(keys.begin(), keys.end(), name) != keys.end() || !in_b) continue;
        if (numeric_column(a.layers, c) && numeric_column(b.layers, *in_b)) numeric_both.push_back(name);
    }
    for (const char* headline : {"cycles", "energy_total_pj", "planned_s", "simulated_s"})
        if (std::find(numeric_both.begin(), numeric_both.end(), headline) != numeric_both.end())
            diff.layer_columns.emplace_back(headline);
    if (diff.layer_columns.empty()) diff.layer_columns = numeric_both;

    const auto values_of = [&](const CsvTable& csv, std::size_t row) {
        std::vector<double> out;
        for (const std::string& name : diff.layer_columns)
            out.push_back(*parse_number(csv.rows[row][*csv.column(name)]));
        return out;
    };
    const std::map<std::string, std::size_t> a_rows = index_rows(a.layers, keys), b_rows = index_rows(b.layers, keys);
    std::vector<std::pair<std::string, std::size_t>> a_order(a_rows.begin(), a_rows.end());
    std::sort(a_order.begin(), a_order.end(), [](const auto& x, const auto& y) { return x.second < y.second; });
    for (const auto& [key, r] : a_order) {
        LayerDiff row{key, {}};
        const std::vector<double> av = values_of(a.layers, r);
        const auto it = b_rows.find(key);
        const std::vector<double> bv = it == b_rows.end() ? std::vector<double>() : values_of(b.layers, it->second);
        for (std::size_t c = 0; c < av.size(); ++c)
            row.values.push_back({av[c], bv.empty() ? std::nullopt : std::optional<double>(bv[c])});
        row.only_in = it == b_rows.end() ? LayerDiff::OnlyIn::a : LayerDiff::OnlyIn::neither;
        diff.layers.push_back(std::move(row));
    }
    std::vector<std::pair<std::string, std::size_t>> b_order(b_rows.begin(), b_rows.end());
    std::sort(b_order.begin(), b_order.end(), [](const auto& x, const auto& y) { return x.second < y.second; });
    for (const auto& [key, r] : b_order) {
        if (a_rows.count(key)) continue;
        LayerDiff row{key, {}};
        for (double v : values_of(b.layers, r)) row.values.push_back({std::nullopt, v});
        row.only_in = LayerDiff::OnlyIn::b;
        diff.layers.push_back(std::move(row));
    }
    return diff;
}

}  // namespace fastsim::report
