// SPDX-License-Identifier: MIT
#include "config/scalesim_topology.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <cctype>
#include <cstdint>
#include <optional>
#include <set>
#include <sstream>

#include "common/input_file.h"
#include "config/ranges.h"
#include "config/yaml_reader.h"
#include "workload/shapes.h"
#include "workload/vector_work.h"
namespace fastsim::config {
namespace {

using workload::Layer;
using workload::LayerKind;

/// `s` without the blanks Python's str.strip() removes at either end: ASCII white space and the
/// no-break space U+00A0 (UTF-8 C2 A0) that spreadsheets write, as in SCALE-Sim's gpt2.csv.
std::string trim(const std::string& s) {
    constexpr const char* kNoBreakSpace = "\xC2\xA0";
    const auto ascii_blank = [](char c) { return c == ' ' || (c >= '\t' && c <= '\r'); };
    std::size_t first = 0, last = s.size();
    while (first < last) {
        if (ascii_blank(s[first]))
            ++first;
        else if (s.compare(first, 2, kNoBreakSpace) == 0)
            first += 2;
        else
            break;
    }
    while (last > first) {
        if (ascii_blank(s[last - 1]))
            --last;
        else if (last - first >= 2 && s.compare(last - 2, 2, kNoBreakSpace) == 0)
            last -= 2;
        else
            break;
    }
    return s.substr(first, last - first);
}

/// `s` split at every comma, empty fields kept, each field trimmed.
std::vector<std::string> split_fields(const std::string& s) {
    std::vector<std::string> fields;
    std::size_t begin = 0;
    for (std::size_t comma; (comma = s.find(',', begin)) != std::string::npos; begin = comma + 1)
        fields.push_back(trim(s.substr(begin, comma - begin)));
    fields.push_back(trim(s.substr(begin)));
    return fields;
}

/// A column name as the header rule compares it: lower case, runs of blanks as one space.
std::string column_name(const std::string& field) {
    std::string out;
    for (const char c : field) {
        if (std::isspace(static_cast<unsigned char>(c))) {
            if (!out.empty() && out.back() != ' ') out += ' ';
        } else {
            out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
        }
    }
    if (!out.empty() && out.back() == ' ') out.pop_back();
    return out;
}

/// The spellings of each column in the headers of SCALE-Sim v2's own topology files
/// (e.g. "Layer, IFMAP Width, IFMAP Width, ..." in its DeepBench files, "num filters" in dlrm/).
const std::vector<std::vector<std::string>> kConvHeader = {{"layer", "layer name"},
                                                           {"ifmap height", "ifmap width"},
                                                           {"ifmap width"},
                                                           {"filter height"},
                                                           {"filter width"},
                                                           {"channels", "channel"},
                                                           {"num filter", "num filters"},
                                                           {"strides", "stride", "stride height"}};
const std::vector<std::vector<std::string>> kGemmHeader = {{"layer", "layer name"}, {"m"}, {"n"}, {"k"}};

/// True if the row's leading fields name `columns` (later fields, such as SCALE-Sim's
/// "Stride width" or "batch size", may say anything).
bool names_columns(const std::vector<std::string>& fields, const std::vector<std::vector<std::string>>& columns) {
    if (fields.size() < columns.size()) return false;
    for (std::size_t i = 0; i < columns.size(); ++i) {
        const std::string name = column_name(fields[i]);
        if (std::find(columns[i].begin(), columns[i].end(), name) == columns[i].end()) return false;
    }
    return true;
}

enum class CsvForm { conv, gemm };

const char* const kConvColumns[] = {"Layer name", "IFMAP Height", "IFMAP Width", "Filter Height", "Filter Width",
                                    "Channels",   "Num Filter",   "Strides",     "Stride width"};
const char* const kGemmColumns[] = {"Layer", "M", "N", "K"};

/// Field `f` of a row as a layer size (kLayerSize), the way SCALE-Sim's int() reads it but
/// refusing signs, zero and what does not fit.
int size_field(const std::vector<std::string>& elems, std::size_t f, const char* column, const Location& at) {
    const std::string& digits = elems[f];
    char* end = nullptr;
    errno = 0;
    const long value = std::strtol(digits.c_str(), &end, 10);
    if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos || *end != '\0' ||
        errno == ERANGE || !kLayerSize.admits(double(value)))
        throw ConfigError(at, std::string("field '") + column + "': expected " + kLayerSize.describe("an integer") +
                                  ", got '" + digits + "'");
    return static_cast<int>(value);
}

/// One data row of the convolution form: name, IFMAP height and width, filter height and width,
/// channels, filters, row stride[, column stride[, further integers SCALE-Sim reads and ignores]].
Layer conv_row(const std::vector<std::string>& elems, const Location& at) {
    int v[9] = {};
    for (std::size_t f = 1; f < std::min<std::size_t>(elems.size(), 9); ++f)
        v[f] = size_field(elems, f, kConvColumns[f], at);
    for (std::size_t f = 9; f < elems.size(); ++f) {
        const std::string& e = elems[f];
        const std::size_t digits = e.compare(0, 1, "-") == 0 ? 1 : 0;
        if (e.size() <= digits || e.find_first_not_of("0123456789", digits) != std::string::npos)
            throw ConfigError(at, "field " + std::to_string(f + 1) +
                                      ": expected an integer (SCALE-Sim reads every field "
                                      "before the last comma as one, and ignores those after the ninth), got '" +
                                      e + "'");
    }
    Layer l;
    l.name = elems[0];
    l.kind = LayerKind::conv;
    l.in_height = v[1];
    l.in_width = v[2];
    l.kernel_height = v[3];
    l.kernel_width = v[4];
    l.in_channels = v[5];
    l.filters = v[6];
    l.stride = v[7];
    l.stride_width = elems.size() > 8 ? v[8] : v[7];
    l.partial_windows = true;
    if (l.kernel_height > l.in_height || l.kernel_width > l.in_width)
        throw ConfigError(at, "the filter (" + elems[3] + "x" + elems[4] + ") is larger than the IFMAP (" + elems[1] +
                                  "x" + elems[2] + ")");
    // SCALE-Sim runs a layer whose name contains "DP" as one convolution per channel, each of
    // one channel and Num Filter filters: a grouped convolution with groups = channels.
    if (l.name.find("DP") != std::string::npos) {
        const std::int64_t filters = std::int64_t{l.in_channels} * l.filters;
        if (!kLayerSize.admits(double(filters)))
            throw ConfigError(at,
                              "depthwise layer ('DP' in its name): channels x Num Filter = " + std::to_string(filters) +
                                  " filters in all, above " + kLayerSize.describe("the limit"));
        l.groups = l.in_channels;
        l.filters = static_cast<int>(filters);
    }
    return l;
}

/// One data row of the GEMM form: name, M, N, K (one M x K times K x N product); SCALE-Sim
/// reads nothing after K.
Layer gemm_row(const std::vector<std::string>& elems, const Location& at) {
    Layer l;
    l.name = elems[0];
    l.kind = LayerKind::gemm;
    l.m = size_field(elems, 1, kGemmColumns[1], at);
    l.n = size_field(elems, 2, kGemmColumns[2], at);
    l.k = size_field(elems, 3, kGemmColumns[3], at);
    return l;
}

/// SCALE-Sim v2 topology files, read as its scalesim/topology_utils.py (commit 22f88b1) reads
/// them (docs/workloads.md, "SCALE-Sim topology CSV"): each row stripped of blanks, blank rows
/// skipped, only the fields before the row's last comma read. The first row is a header only if
/// it names the columns (conv or GEMM form); a file without one is in GEMM form if its first
/// row has exactly 4 fields. Layers are independent (SCALE-Sim does not chain them); a repeated
/// name gets "#2", "#3", ... and an empty one "layer<i>".
}  // namespace

workload::Workload read_scalesim_csv(const std::string& text, const std::string& path) {
    // A byte-order mark (spreadsheet exports start with one) is not part of the first field.
    std::istringstream in(text.compare(0, 3, "\xEF\xBB\xBF") == 0 ? text.substr(3) : text);
    workload::Workload w;
    w.name = path;
    w.source = "SCALE-Sim topology CSV";
    w.shape_check = workload::ShapeCheck::off;             // SCALE-Sim layers are independent, not a chain
    std::set<std::string> names{workload::kNetworkInput};  // SCALE-Sim has no reserved name: 'input' becomes 'input#2'
    std::string line;
    std::optional<CsvForm> form;
    for (int number = 1; std::getline(in, line); ++number) {
        const std::string row = trim(line);
        if (row.empty()) continue;
        const Location at{path, number, 1, ""};
        if (!form) {
            const std::vector<std::string> all = split_fields(row);
            if (names_columns(all, kGemmHeader)) {
                form = CsvForm::gemm;
                continue;
            }
            if (names_columns(all, kConvHeader)) {
                form = CsvForm::conv;
                continue;
            }
        }
        if (row[0] == '#')
            throw ConfigError(
                at, "SCALE-Sim topology files have no comment rows (SCALE-Sim would read this row as a layer)");
        const std::size_t last_comma = row.rfind(',');
        if (last_comma == std::string::npos)
            throw ConfigError(at,
                              row.find('\t') != std::string::npos
                                  ? "no comma in this row: SCALE-Sim topology fields are separated by commas, not tabs"
                                  : "no comma in this row: SCALE-Sim reads only the fields before a row's last comma");
        const std::vector<std::string> elems = split_fields(row.substr(0, last_comma));
        if (!form) form = elems.size() == 4 ? CsvForm::gemm : CsvForm::conv;
        const std::size_t needed = *form == CsvForm::conv ? 8 : 4;
        if (elems.size() < needed) {
            const std::string tail = trim(row.substr(last_comma + 1));
            std::string msg = "expected " + std::to_string(needed) + " comma-separated fields (";
            for (std::size_t f = 0; f < needed; ++f)
                msg += std::string(f ? ", " : "") + (*form == CsvForm::conv ? kConvColumns[f] : kGemmColumns[f]);
            msg += ") before the row's last comma, got " + std::to_string(elems.size());
            if (!tail.empty())
                msg += " ('" + tail +
                       "' after the last comma is ignored, as SCALE-Sim ignores it: end the row with a comma)";
            throw ConfigError(at, msg);
        }
        Layer l = *form == CsvForm::conv ? conv_row(elems, at) : gemm_row(elems, at);
        if (l.name.empty()) l.name = "layer" + std::to_string(w.layers.size());
        if (names.count(l.name)) {
            int copy = 2;
            while (names.count(l.name + "#" + std::to_string(copy))) ++copy;
            l.name += "#" + std::to_string(copy);
        }
        names.insert(l.name);
        l.where = at;
        w.layers.push_back(std::move(l));
    }
    if (w.layers.empty()) throw ConfigError({path, 0, 0, ""}, "the trace has no layers");
    return w;
}

}  // namespace fastsim::config
