// SPDX-License-Identifier: MIT
#include "output/collective_report.h"

#include "output/table.h"

namespace fastsim::output {

const CsvWriter<run::CollectiveRow>& collective_csv() {
    using Row = run::CollectiveRow;
    static const CsvWriter<Row> kWriter({
        {"op", [](const Row& r) { return CsvCell::text(interconnect::to_string(r.op)); }},
        {"algorithm", [](const Row& r) { return CsvCell::text(r.algorithm); }},
        {"dimensions", [](const Row& r) { return CsvCell::text(r.dimensions); }},
        {"ranks", [](const Row& r) { return CsvCell::integer(r.ranks); }},
        {"bytes", [](const Row& r) { return CsvCell::integer(r.bytes); }},
        {"time_s", [](const Row& r) { return CsvCell::number(r.time_s); }},
        {"closed_form_s",
         [](const Row& r) { return r.closed_form_s ? CsvCell::number(*r.closed_form_s) : CsvCell::empty(); }},
        {"algbw_gb_per_s", [](const Row& r) { return CsvCell::number(r.algbw_gb_per_s); }},
        {"busbw_gb_per_s", [](const Row& r) { return CsvCell::number(r.busbw_gb_per_s); }},
        {"planned_s", [](const Row& r) { return r.planned_s ? CsvCell::number(*r.planned_s) : CsvCell::empty(); }},
    });
    return kWriter;
}

void print_collective_table(std::ostream& out, const std::vector<run::CollectiveRow>& rows) {
    Table table({"op", "algorithm", "dimensions", "ranks", "bytes", "time_us", "closed_form_us", "error_percent",
                 "planned_us", "algbw_gb_per_s", "busbw_gb_per_s"});
    for (const run::CollectiveRow& r : rows) {
        const bool form = r.closed_form_s.has_value() && *r.closed_form_s > 0;
        table.add_row({interconnect::to_string(r.op), r.algorithm, r.dimensions, std::to_string(r.ranks),
                       std::to_string(r.bytes), Table::fixed(r.time_s * 1e6, 3),
                       form ? Table::fixed(*r.closed_form_s * 1e6, 3) : "-",
                       form ? Table::fixed(100 * (r.time_s - *r.closed_form_s) / *r.closed_form_s, 2) : "-",
                       r.planned_s ? Table::fixed(*r.planned_s * 1e6, 3) : "-", Table::fixed(r.algbw_gb_per_s, 3),
                       Table::fixed(r.busbw_gb_per_s, 3)});
    }
    table.print(out);
}

}  // namespace fastsim::output
