// SPDX-License-Identifier: MIT
// precision.layers overrides, and a precision.schedule given as a `fastsim train`
// precision_log.csv (docs/config.md, "precision").
#include <algorithm>
#include <cmath>

#include "common/csv_reader.h"
#include "config/ranges.h"
#include "config/sections.h"

namespace fastsim::config {

void apply_overrides(std::vector<node::LayerPrecision>& out, const std::vector<PrecisionOverride>& overrides,
                     const std::vector<workload::Layer>& layers) {
    for (const PrecisionOverride& o : overrides)
        for (std::size_t l = 0; l < layers.size(); ++l) {
            if (layers[l].name != o.layer) continue;
            for (std::size_t ph = 0; ph < 3; ++ph) {
                if (o.phase && static_cast<std::size_t>(*o.phase) != ph) continue;
                node::TensorPrecision& t = out[l][ph];
                t.weights = o.weights.value_or(t.weights);
                t.activations = o.activations.value_or(t.activations);
                t.gradients = o.gradients.value_or(t.gradients);
            }
        }
}

std::vector<PrecisionSegment> segments_from_log(const std::string& path, const Location& where,
                                                const std::vector<node::LayerPrecision>& base,
                                                const node::TensorPrecision& defaults,
                                                const std::vector<workload::Layer>& layers, std::uint64_t steps,
                                                const BfpParams& bfp, const std::string& only_policy,
                                                const std::vector<PrecisionOverride>& overrides) {
    const CsvTable log = [&] {
        try {
            return read_csv_file(path);
        } catch (const ConfigError&) {
            throw;
        } catch (const UserError& e) {  // named by the key that gave the path
            throw ConfigError(where, std::string(e.what()) + " (expected a fastsim train precision_log.csv)");
        }
    }();
    const auto iteration = log.column("iteration"), policy = log.column("policy");
    if (!iteration || !policy)
        throw ConfigError(where, path +
                                     ": expected a fastsim train precision_log.csv (policy, iteration, epoch, "
                                     "<layer>.<class>_bits columns)");
    // Which width each column sets.
    struct Width {
        std::size_t column, layer;
        int node::TensorPrecision::*member;
    };
    std::vector<Width> widths;
    for (std::size_t c = 0; c < log.header.size(); ++c) {
        const std::string& name = log.header[c];
        if (std::find(log.header.begin(), log.header.begin() + static_cast<std::ptrdiff_t>(c), name) !=
            log.header.begin() + static_cast<std::ptrdiff_t>(c))
            throw ConfigError(where, path + ": column '" + name + "' is given twice");
        if (name == "policy" || name == "iteration" || name == "epoch") continue;
        const std::size_t dot = name.rfind('.');
        const std::string layer = name.substr(0, dot), kind = dot == std::string::npos ? "" : name.substr(dot + 1);
        int node::TensorPrecision::*member = kind == "weights_bits"       ? &node::TensorPrecision::weights
                                             : kind == "activations_bits" ? &node::TensorPrecision::activations
                                             : kind == "gradients_bits"   ? &node::TensorPrecision::gradients
                                                                          : nullptr;
        if (member == nullptr)
            throw ConfigError(where, path + ": column '" + name +
                                         "': expected <layer>.weights_bits, .activations_bits "
                                         "or .gradients_bits");
        std::size_t index = layers.size();
        for (std::size_t l = 0; l < layers.size(); ++l)
            if (layers[l].name == layer) index = l;
        if (index == layers.size())
            throw ConfigError(where, path + ": column '" + name + "': no layer named '" + layer + "' in the trace");
        widths.push_back({c, index, member});
    }
    // The policy's rows, in order: precision.schedule_policy's, or the log's only policy's.
    std::vector<std::size_t> rows;
    for (std::size_t r = 0; r < log.rows.size(); ++r) {
        if (!only_policy.empty() && log.rows[r][*policy] != only_policy) continue;
        if (only_policy.empty() && log.rows[r][*policy] != log.rows[0][*policy])
            throw ConfigError(where, path + ":" + std::to_string(log.row_lines[r]) + ": policy '" +
                                         log.rows[r][*policy] + "' after '" + log.rows[0][*policy] +
                                         "': keep one policy's rows, or name one with precision.schedule_policy");
        rows.push_back(r);
    }
    if (!only_policy.empty() && rows.empty())
        throw ConfigError(where, path + ": no rows of policy '" + only_policy + "' (precision.schedule_policy)");
    std::vector<PrecisionSegment> segments;
    for (std::size_t step = 0; step < rows.size() && step < steps; ++step) {
        const auto& row = log.rows[rows[step]];
        const std::string line = path + ":" + std::to_string(log.row_lines[rows[step]]);
        if (parse_number(row[*iteration]) != static_cast<double>(step))
            throw ConfigError(
                where, line + ": iteration: expected " + std::to_string(step) + ", got '" + row[*iteration] + "'");
        if (const auto epoch = log.column("epoch")) {
            const std::optional<double> e = parse_number(row[*epoch]);
            if (!e || *e < 0 || *e != std::floor(*e) || *e > 1e15)
                throw ConfigError(where, line + ": epoch: expected a whole number of at least 0, got '" +
                                             printable(row[*epoch]) + "'");
        }
        std::vector<node::LayerPrecision> per_layer = base;
        for (const Width& w : widths) {
            const auto bits = parse_number(row[w.column]);
            const bool whole = bits && row[w.column].find_first_not_of("0123456789 ") == std::string::npos;
            if (!bits || !whole || !kMantissaWidth.admits(*bits))
                throw ConfigError(where, line + ": " + log.header[w.column] + ": expected " +
                                             kMantissaWidth.describe("") + ", got '" + row[w.column] + "'");
            check_mantissa_format(bfp, static_cast<int>(*bits), where);
            for (node::TensorPrecision& phase : per_layer[w.layer]) phase.*w.member = static_cast<int>(*bits);
        }
        apply_overrides(per_layer, overrides, layers);  // on top in every step, as with a list
        if (segments.empty() || segments.back().per_layer != per_layer)
            segments.push_back({step, 0, defaults, per_layer});
    }
    if (segments.empty()) throw ConfigError(where, path + ": no iterations");
    return segments;
}

}  // namespace fastsim::config
