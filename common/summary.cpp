// SPDX-License-Identifier: MIT
#include "common/summary.h"

#include <sstream>

#include "common/output_files.h"

namespace fastsim {

const SummaryField* summary_field(std::string_view name) {
    for (const SummaryField& f : kSummaryFields)
        if (f.name == name) return &f;
    return nullptr;
}

std::string summary_json(const Summary& summary) {
    std::ostringstream o;
    o << "{\n";
    for (std::size_t i = 0; i < summary.size(); ++i)
        o << "  " << json_string(summary[i].first) << ": " << format_number(summary[i].second)
          << (i + 1 < summary.size() ? "," : "") << "\n";
    o << "}\n";
    return o.str();
}

}  // namespace fastsim
