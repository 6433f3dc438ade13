// SPDX-License-Identifier: MIT
#include "common/summary.h"

#include "common/json_writer.h"

namespace fastsim {

const SummaryField* summary_field(std::string_view name) {
    for (const SummaryField& f : kSummaryFields)
        if (f.name == name) return &f;
    return nullptr;
}

std::string summary_json(const Summary& summary) {
    JsonWriter json;
    json.begin_object(JsonLayout::one_per_line);
    for (const auto& [name, value] : summary) json.key(name).number(value);
    json.end_object();
    return json.take();
}

}  // namespace fastsim
