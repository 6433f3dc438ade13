// SPDX-License-Identifier: MIT
#include "report/result_columns.h"

#include <array>
#include <utility>

#include "common/errors.h"
#include "common/summary.h"
#include "node/phase_counters.h"
#include "sweep/point_record.h"

namespace fastsim::report {

std::string column_title(std::string_view column) {
    for (const CounterInfo& counter : node::counter_infos())
        if (counter.name == column) return std::string(counter.title);
    if (const SummaryField* field = summary_field(column)) return std::string(field->title);
    const std::string_view prefix = "energy_";
    for (const std::string_view unit : {std::string_view("_uj"), std::string_view("_pj")})
        if (column.size() > prefix.size() + unit.size() && column.substr(0, prefix.size()) == prefix &&
            column.substr(column.size() - unit.size()) == unit)
            return "energy " + std::string(column.substr(prefix.size(), column.size() - prefix.size() - unit.size())) +
                   (unit == "_uj" ? " (µJ)" : " (pJ)");
    return std::string(column);
}

const std::vector<std::string_view>& headline_result_columns() {
    static const std::vector<std::string_view> kColumns = [] {
        std::vector<std::string_view> columns;
        for (const SummaryField& f : kSummaryFields)
            if (f.headline) columns.push_back(f.name);
        return columns;
    }();
    return kColumns;
}

std::vector<EnergyComponentColumn> energy_component_columns(const std::vector<std::string>& header,
                                                            std::string_view unit_suffix) {
    const std::string_view prefix = "energy_";
    std::vector<EnergyComponentColumn> out;
    for (std::size_t i = 0; i < header.size(); ++i) {
        const std::string_view h = header[i];
        if (h.size() <= prefix.size() + unit_suffix.size() || h.substr(0, prefix.size()) != prefix ||
            h.substr(h.size() - unit_suffix.size()) != unit_suffix)
            continue;
        std::string component(h.substr(prefix.size(), h.size() - prefix.size() - unit_suffix.size()));
        if (component != "total") out.push_back({i, std::move(component)});
    }
    return out;
}

std::optional<double> result_cell(const CsvTable& csv, std::size_t row, std::size_t column) {
    const std::string& text = csv.rows[row][column];
    if (text.empty()) return std::nullopt;
    const auto where = [&] {
        return csv.source + ":" + std::to_string(csv.row_lines[row]) + ": column '" + csv.header[column] + "': ";
    };
    const auto v = parse_number(text);
    if (!v) throw UserError(where() + "'" + text + "' is not a number");
    if (*v < 0 && !sweep::result_may_be_negative(csv.header[column]))
        throw UserError(where() + "a result that cannot be negative is " + text);
    return v;
}

}  // namespace fastsim::report
