// SPDX-License-Identifier: MIT
// Names, units and roles of the result columns that sweeps and runs write (results.csv,
// summary.json, layers.csv), shared by the sweep and run reports.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/csv_reader.h"

namespace fastsim::report {

/// The result in `row`, `column` of `csv`: nothing for an empty cell, else a finite decimal
/// number that is >= 0 unless the column is signed (sweep::result_may_be_negative); UserError
/// "SOURCE:LINE: column 'NAME': ..." otherwise.
std::optional<double> result_cell(const CsvTable& csv, std::size_t row, std::size_t column);

/// A column header for people: a counter's title (node::counter_infos), a summary field's title
/// (kSummaryFields: "energy (µJ)" for the total energy), the raw name for unknown columns.
std::string column_title(std::string_view column);

/// The "headline" result columns of results.csv / summary.json, in the order tables show them.
const std::vector<std::string_view>& headline_result_columns();

/// An energy component column: its name matches energy_<component><unit_suffix> with a
/// non-empty component other than "total" (e.g. energy_fmac_uj with suffix "_uj").
struct EnergyComponentColumn {
    std::size_t index;      ///< column index in the header
    std::string component;  ///< "fmac", "converter", ...
};

/// The energy component columns of `header` for `unit_suffix` ("_uj" or "_pj"), in header order.
std::vector<EnergyComponentColumn> energy_component_columns(const std::vector<std::string>& header,
                                                            std::string_view unit_suffix);

}  // namespace fastsim::report
