// SPDX-License-Identifier: MIT
#include "config/trace_reader.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <cctype>
#include <set>
#include <sstream>

#include "common/input_file.h"
#include "config/ranges.h"
#include "config/yaml_reader.h"

namespace fastsim::config {
namespace {

using workload::Layer;
using workload::LayerKind;

std::optional<LayerKind> parse_kind(const std::string& s) {
    if (s == "conv") return LayerKind::conv;
    if (s == "fc") return LayerKind::fc;
    if (s == "matmul") return LayerKind::matmul;
    return std::nullopt;
}

/// A layer size (kLayerSize): sums such as H + 2p stay far below 2^31, and the products of
/// lowering are checked where the batch joins them (config/load.cpp).
int positive(const Field<int>& f, const char* what) {
    if (!f.value) throw ConfigError(f.where, std::string("missing ") + what + " (a positive integer)");
    return in_range(f, 1, kLayerSize);
}

/// A list of exactly `n` positive integers, e.g. input: [224, 224, 3].
std::vector<int> positives(const Field<std::vector<Field<int>>>& f, std::size_t n, const char* what) {
    if (!f.value) throw ConfigError(f.where, std::string("missing ") + what);
    if (f.value->size() != n)
        throw ConfigError(f.where, std::string("expected ") + what + ", got " + std::to_string(f.value->size()) + " values");
    std::vector<int> out;
    for (const auto& item : *f.value) out.push_back(positive(item, what));
    return out;
}

Layer read_layer(MapReader& m, std::size_t index) {
    Layer l;
    const Field<std::string> name = m.scalar<std::string>("name");
    l.name = name.value_or("layer" + std::to_string(index));
    const Field<LayerKind> kind = m.choice<LayerKind>("type", parse_kind, "conv, fc, matmul");
    if (!kind.value) throw ConfigError(kind.where, "missing type (conv, fc or matmul)");
    l.kind = *kind.value;
    switch (l.kind) {
    case LayerKind::conv: {
        const auto input = positives(m.list<int>("input"), 3, "input: [height, width, channels]");
        const auto kernel = positives(m.list<int>("kernel"), 2, "kernel: [height, width]");
        l.in_height = input[0];
        l.in_width = input[1];
        l.in_channels = input[2];
        l.kernel_height = kernel[0];
        l.kernel_width = kernel[1];
        l.filters = positive(m.scalar<int>("filters"), "filters");
        const Field<int> stride = m.scalar<int>("stride");
        l.stride = stride.value ? positive(stride, "stride") : 1;
        const Field<int> padding = m.scalar<int>("padding");
        l.padding = in_range(padding, 0, kLayerPadding);
        if (l.in_height + 2 * l.padding < l.kernel_height || l.in_width + 2 * l.padding < l.kernel_width)
            throw ConfigError(m.location_of("kernel"), "the kernel is larger than the padded input");
        break;
    }
    case LayerKind::fc:
        l.in_features = positive(m.scalar<int>("in_features"), "in_features");
        l.out_features = positive(m.scalar<int>("out_features"), "out_features");
        if (const Field<int> tokens = m.scalar<int>("tokens"); tokens.value) l.tokens = positive(tokens, "tokens");
        break;
    case LayerKind::matmul: {
        l.m = positive(m.scalar<int>("m"), "m");
        l.k = positive(m.scalar<int>("k"), "k");
        l.n = positive(m.scalar<int>("n"), "n");
        const Field<int> repeat = m.scalar<int>("repeat");
        l.repeat = repeat.value ? positive(repeat, "repeat") : 1;
        break;
    }
    }
    if (const auto inputs = m.list<std::string>("inputs"); inputs.value)
        for (const auto& i : *inputs.value) l.inputs.push_back(*i.value);
    m.finish();
    return l;
}

void check_graph(const workload::Workload& w, const std::vector<Location>& where) {
    std::set<std::string> seen{workload::kNetworkInput};
    for (std::size_t i = 0; i < w.layers.size(); ++i) {
        const Layer& l = w.layers[i];
        for (const auto& input : l.inputs)
            if (!seen.count(input))
                throw ConfigError(where[i], "input '" + input + "' is not the name of an earlier layer");
        if (!seen.insert(l.name).second)
            throw ConfigError(where[i], "a layer named '" + l.name + "' already exists (or is the reserved name 'input')");
    }
}

workload::Workload read_yaml_trace(const std::string& text, const std::string& path) {
    const Document doc = Document::parse(text, path);
    MapReader top(doc, doc.root, "");
    workload::Workload w;
    w.name = top.scalar<std::string>("network").value_or(path);
    w.source = top.scalar<std::string>("source").value_or("");
    const Field<workload::ShortcutConvention> shortcuts = top.choice<workload::ShortcutConvention>(
        "shortcuts",
        [](const std::string& v) -> std::optional<workload::ShortcutConvention> {
            if (v == "producer") return workload::ShortcutConvention::producer;
            if (v == "accpar") return workload::ShortcutConvention::accpar;
            return std::nullopt;
        },
        "producer, accpar");
    w.shortcuts = shortcuts.value.value_or(workload::ShortcutConvention::producer);
    std::vector<Location> where;
    auto layers = top.maps("layers");
    if (layers.empty()) throw ConfigError(top.location_of("layers"), "expected a non-empty list of layers");
    for (std::size_t i = 0; i < layers.size(); ++i) {
        where.push_back(layers[i].location());
        w.layers.push_back(read_layer(layers[i], i));
        w.layers.back().where = where.back();
    }
    top.finish();
    check_graph(w, where);
    return w;
}

std::string trim(const std::string& s) {
    const auto first = s.find_first_not_of(" \t\r");
    if (first == std::string::npos) return "";
    return s.substr(first, s.find_last_not_of(" \t\r") - first + 1);
}

bool same_name(const std::string& a, const char* b) {
    const std::size_t n = std::char_traits<char>::length(b);
    if (a.size() != n) return false;
    for (std::size_t i = 0; i < n; ++i)
        if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
    return true;
}

/// True if `fields` are exactly `names` (case and surrounding blanks aside).
template <std::size_t N>
bool names_columns(const std::vector<std::string>& fields, const char* const (&names)[N]) {
    if (fields.size() != N) return false;
    for (std::size_t i = 0; i < N; ++i)
        if (!same_name(fields[i], names[i])) return false;
    return true;
}

/// SCALE-Sim topology: Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width,
/// Channels, Num Filter, Strides[,] — one convolution per line, inputs already padded. The
/// first row is a header only if it names exactly these columns (or SCALE-Sim's GEMM form
/// `Layer, M, N, K`); any other first row is data and is checked as data.
workload::Workload read_scalesim_csv(const std::string& text, const std::string& path) {
    static const char* const kColumns[] = {"Layer name",   "IFMAP Height", "IFMAP Width", "Filter Height",
                                           "Filter Width", "Channels",     "Num Filter",  "Strides"};
    static const char* const kGemmColumns[] = {"Layer", "M", "N", "K"};
    // A byte-order mark (spreadsheet exports start with one) is not part of the first field.
    std::istringstream in(text.compare(0, 3, "\xEF\xBB\xBF") == 0 ? text.substr(3) : text);
    workload::Workload w;
    w.name = path;
    w.source = "SCALE-Sim topology CSV";
    std::vector<Location> where;
    std::string line;
    bool first_row = true;
    for (int number = 1; std::getline(in, line); ++number) {
        if (trim(line).empty() || trim(line)[0] == '#') continue;
        std::vector<std::string> fields;
        std::stringstream s(line);
        std::string field;
        while (std::getline(s, field, ',')) fields.push_back(trim(field));
        if (!fields.empty() && fields.back().empty()) fields.pop_back();  // trailing comma
        const bool header = first_row && names_columns(fields, kColumns);
        if (first_row && names_columns(fields, kGemmColumns))
            throw ConfigError({path, number, 1, ""}, "SCALE-Sim's GEMM topology form (Layer, M, N, K) is not read yet; "
                                                     "write the GEMMs as matmul layers of a YAML trace (docs/workloads.md)");
        first_row = false;
        if (header) continue;
        const Location at{path, number, 1, ""};
        if (fields.size() != 8)
            throw ConfigError(at, "expected 8 comma-separated fields (Layer name, IFMAP Height, IFMAP Width, Filter "
                                  "Height, Filter Width, Channels, Num Filter, Strides), got " +
                                      std::to_string(fields.size()));
        int v[8] = {};
        for (int f = 1; f < 8; ++f) {
            char* end = nullptr;
            errno = 0;
            const long value = std::strtol(fields[static_cast<std::size_t>(f)].c_str(), &end, 10);
            const std::string& digits = fields[static_cast<std::size_t>(f)];
            if (digits.empty() || digits.find_first_not_of("0123456789") != std::string::npos || *end != '\0' ||
                errno == ERANGE || !kLayerSize.admits(double(value)))
                throw ConfigError(at, std::string("field '") + kColumns[f] + "': expected " +
                                          kLayerSize.describe("an integer") + ", got '" + digits + "'");
            v[f] = static_cast<int>(value);
        }
        Layer l;
        l.name = fields[0];
        l.kind = LayerKind::conv;
        l.in_height = v[1];
        l.in_width = v[2];
        l.kernel_height = v[3];
        l.kernel_width = v[4];
        l.in_channels = v[5];
        l.filters = v[6];
        l.stride = v[7];
        if (l.kernel_height > l.in_height || l.kernel_width > l.in_width)
            throw ConfigError(at, "the filter (" + fields[3] + "x" + fields[4] + ") is larger than the IFMAP (" + fields[1] +
                                      "x" + fields[2] + ")");
        l.where = at;
        where.push_back(at);
        w.layers.push_back(std::move(l));
    }
    if (w.layers.empty()) throw ConfigError({path, 0, 0, ""}, "the trace has no layers");
    check_graph(w, where);
    return w;
}

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

workload::Workload read_trace(const std::string& path) {
    if (!ends_with(path, ".csv") && !ends_with(path, ".yaml") && !ends_with(path, ".yml"))
        throw ConfigError({path, 0, 0, ""}, "unknown trace format: expected a .yaml/.yml fastsim trace or a .csv SCALE-Sim topology");
    return read_trace_text(read_input_file(path, "trace"), path);
}

workload::Workload read_trace_text(const std::string& text, const std::string& path) {
    if (ends_with(path, ".csv")) return read_scalesim_csv(text, path);
    if (ends_with(path, ".yaml") || ends_with(path, ".yml")) return read_yaml_trace(text, path);
    throw ConfigError({path, 0, 0, ""}, "unknown trace format: expected a .yaml/.yml fastsim trace or a .csv SCALE-Sim topology");
}

}  // namespace fastsim::config
