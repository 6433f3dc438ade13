// SPDX-License-Identifier: MIT
#include "config/trace_reader.h"

#include "config/scalesim_topology.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <cctype>
#include <cstdint>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>
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
        throw ConfigError(f.where,
                          std::string("expected ") + what + ", got " + std::to_string(f.value->size()) + " values");
    std::vector<int> out;
    for (const auto& item : *f.value) out.push_back(positive(item, what));
    return out;
}

/// The `input: [height, width, channels]` and `kernel: [height, width]` of a conv or pool.
void read_window(MapReader& m, Layer& l) {
    const auto input = positives(m.list<int>("input"), 3, "input: [height, width, channels]");
    const auto kernel = positives(m.list<int>("kernel"), 2, "kernel: [height, width]");
    l.in_height = input[0];
    l.in_width = input[1];
    l.in_channels = input[2];
    l.kernel_height = kernel[0];
    l.kernel_width = kernel[1];
}

/// A pool layer's keys: input, kernel, mode, stride (default: the kernel, as PyTorch's), padding.
void read_pool(MapReader& m, Layer& l) {
    read_window(m, l);
    const Field<workload::PoolMode> mode = m.choice<workload::PoolMode>("mode");
    if (!mode.value) throw ConfigError(mode.where, "missing mode (one of " + name_list<workload::PoolMode>() + ")");
    l.pool_mode = *mode.value;
    if (const Field<int> stride = m.scalar<int>("stride"); stride.value) {
        l.stride = positive(stride, "stride");
        if (const Field<int> stride_width = m.scalar<int>("stride_width"); stride_width.value)
            l.stride_width = positive(stride_width, "stride_width");
    } else {
        l.stride = l.kernel_height;
        l.stride_width = l.kernel_width;
    }
    l.padding = in_range(m.scalar<int>("padding"), 0, kLayerPadding);
    l.partial_windows = m.scalar<bool>("ceil_mode").value.value_or(false);
    if (2 * l.padding > std::min(l.kernel_height, l.kernel_width))
        throw ConfigError(m.location_of("padding"),
                          "padding (" + std::to_string(l.padding) +
                              ") must be at most half the kernel: a window of padding alone pools nothing");
    if (l.in_height + 2 * l.padding < l.kernel_height || l.in_width + 2 * l.padding < l.kernel_width)
        throw ConfigError(m.location_of("kernel"), "the kernel is larger than the padded input");
}

/// The most producers a layer of `kind` reads, 0 for any number: one for the elementwise and
/// normalising layers of the vector unit, two for a matmul; a GEMM layer or a pool may read a
/// join (its producers' outputs added: docs/workloads.md). An embedding reads the network
/// input, checked apart.
std::size_t most_inputs(LayerKind kind) {
    switch (kind) {
    case LayerKind::batchnorm:
    case LayerKind::relu:
    case LayerKind::gelu:
    case LayerKind::softmax:
    case LayerKind::layernorm: return 1;
    case LayerKind::matmul: return 2;
    case LayerKind::conv:
    case LayerKind::fc:
    case LayerKind::gemm:
    case LayerKind::pool:
    case LayerKind::add:
    case LayerKind::concat:
    case LayerKind::embedding: return 0;
    }
    return 0;
}

Layer read_layer(MapReader& m, std::size_t index) {
    Layer l;
    const Field<std::string> name = m.scalar<std::string>("name");
    l.name = name.value_or("layer" + std::to_string(index));
    const Field<LayerKind> kind = m.choice<LayerKind>("type");
    if (!kind.value) throw ConfigError(kind.where, "missing type (one of " + name_list<LayerKind>() + ")");
    l.kind = *kind.value;
    switch (l.kind) {
    case LayerKind::conv: {
        read_window(m, l);
        l.filters = positive(m.scalar<int>("filters"), "filters");
        const Field<int> stride = m.scalar<int>("stride");
        l.stride = stride.value ? positive(stride, "stride") : 1;
        if (const Field<int> stride_width = m.scalar<int>("stride_width"); stride_width.value)
            l.stride_width = positive(stride_width, "stride_width");
        const Field<int> padding = m.scalar<int>("padding");
        l.padding = in_range(padding, 0, kLayerPadding);
        if (const Field<int> dilation = m.scalar<int>("dilation"); dilation.value) {
            l.dilation = positive(dilation, "dilation");
            // 64-bit: dilation and kernel below 2^24 each
            const auto span = [&](int k) { return std::int64_t{l.dilation} * (k - 1) + 1; };
            if (std::int64_t{l.in_height} + 2 * l.padding < span(l.kernel_height) ||
                std::int64_t{l.in_width} + 2 * l.padding < span(l.kernel_width))
                throw ConfigError(dilation.where, "the dilated kernel (" + std::to_string(span(l.kernel_height)) +
                                                      " x " + std::to_string(span(l.kernel_width)) +
                                                      " input positions) is larger than the padded input");
        }
        if (l.in_height + 2 * l.padding < l.kernel_height || l.in_width + 2 * l.padding < l.kernel_width)
            throw ConfigError(m.location_of("kernel"), "the kernel is larger than the padded input");
        if (const Field<int> groups = m.scalar<int>("groups"); groups.value) {
            l.groups = positive(groups, "groups");
            if (l.in_channels % l.groups != 0 || l.filters % l.groups != 0)
                throw ConfigError(groups.where, "groups (" + std::to_string(l.groups) +
                                                    ") must divide both the input channels (" +
                                                    std::to_string(l.in_channels) + ") and filters (" +
                                                    std::to_string(l.filters) + ")");
        }
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
    case LayerKind::gemm:
        l.m = positive(m.scalar<int>("m"), "m");
        l.k = positive(m.scalar<int>("k"), "k");
        l.n = positive(m.scalar<int>("n"), "n");
        break;
    case LayerKind::pool: read_pool(m, l); break;
    case LayerKind::embedding:
        l.vocab = positive(m.scalar<int>("vocab"), "vocab");
        l.in_channels = positive(m.scalar<int>("features"), "features");
        l.in_height = 1;
        l.in_width = 1;
        if (const Field<int> tokens = m.scalar<int>("tokens"); tokens.value) l.in_width = positive(tokens, "tokens");
        l.tied_to = m.scalar<std::string>("tied_to").value_or("");
        break;
    case LayerKind::batchnorm:
    case LayerKind::relu:
    case LayerKind::gelu:
    case LayerKind::add:
    case LayerKind::softmax:
    case LayerKind::layernorm:
    case LayerKind::concat: {
        // Optional: the tensor's shape, else its producer's output (infer_vector_shapes).
        const auto input = m.list<int>("input");
        if (!input.value) break;
        if (input.value->empty() || input.value->size() > 3)
            throw ConfigError(input.where,
                              "expected input: [height, width, channels], [positions, channels] or [channels], got " +
                                  std::to_string(input.value->size()) + " values");
        std::vector<int> shape(3 - input.value->size(), 1);
        for (const auto& item : *input.value) shape.push_back(positive(item, "input sizes"));
        l.in_height = shape[0];
        l.in_width = shape[1];
        l.in_channels = shape[2];
        break;
    }
    }
    if (const auto inputs = m.list<std::string>("inputs"); inputs.value) {
        if (inputs.value->empty())
            throw ConfigError(inputs.where,
                              "lists no producer: name the layers it reads, or leave inputs out to "
                              "read the layer before");
        for (const auto& i : *inputs.value) l.inputs.push_back(*i.value);
    }
    if ((l.kind == LayerKind::add || l.kind == LayerKind::concat) && l.inputs.size() < 2)
        throw ConfigError(m.location_of("type"), std::string("an ") + workload::to_string(l.kind) +
                                                     " layer joins tensors: list two or more producers under inputs");
    if (const std::size_t most = most_inputs(l.kind); most > 0 && l.inputs.size() > most)
        throw ConfigError(m.location_of("inputs"), std::string("a ") + workload::to_string(l.kind) + " layer reads " +
                                                       (most == 1 ? "one tensor" : "two tensors") +
                                                       ", but inputs lists " + std::to_string(l.inputs.size()) +
                                                       " producers" +
                                                       (most == 1 ? " (add them first in an add layer)" : ""));
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
            throw ConfigError(where[i],
                              "a layer named '" + l.name + "' already exists (or is the reserved name 'input')");
    }
}

/// An embedding looks up token ids, which only the network input holds, and a tied table is
/// an fc layer's features x vocab weights.
void check_embeddings(const workload::Workload& w, const std::vector<Location>& where) {
    for (std::size_t i = 0; i < w.layers.size(); ++i) {
        const Layer& l = w.layers[i];
        if (l.kind != LayerKind::embedding) continue;
        const bool reads_ids =
            l.inputs.empty() ? i == 0 : std::all_of(l.inputs.begin(), l.inputs.end(), [](const auto& name) {
                return name == workload::kNetworkInput;
            });
        if (!reads_ids)
            throw ConfigError(where[i], "embedding '" + l.name +
                                            "' looks up token ids, which are the network input: give it inputs: [" +
                                            workload::kNetworkInput + "]");
        if (l.tied_to.empty()) continue;
        const auto tied =
            std::find_if(w.layers.begin(), w.layers.end(), [&](const Layer& other) { return other.name == l.tied_to; });
        if (tied == w.layers.end() || tied->kind != LayerKind::fc || tied->in_features != l.in_channels ||
            tied->out_features != l.vocab)
            throw ConfigError(where[i], "embedding '" + l.name + "': tied_to '" + l.tied_to +
                                            "' must name an fc layer of in_features " + std::to_string(l.in_channels) +
                                            " (features) and out_features " + std::to_string(l.vocab) +
                                            " (vocab), whose weights are the table");
    }
}

/// A vector-unit layer without `input` takes its producer's output shape; a concat joins its
/// producers' along channels. In file order, so producers are resolved first.
void infer_vector_shapes(workload::Workload& w, const std::vector<Location>& where) {
    std::unordered_map<std::string_view, std::size_t> earlier;  // layer name -> index, layers before i
    for (std::size_t i = 0; i < w.layers.size(); earlier.emplace(w.layers[i].name, i), ++i) {
        Layer& l = w.layers[i];
        if (!workload::runs_on_vector_unit(l.kind) || l.in_channels > 0) continue;
        std::vector<std::string> names = l.inputs;
        if (names.empty()) names.push_back(i == 0 ? workload::kNetworkInput : w.layers[i - 1].name);
        std::vector<std::array<std::uint64_t, 3>> shapes;
        for (const std::string& name : names) {
            const auto producer = earlier.find(name);
            const auto shape =
                producer == earlier.end() ? std::nullopt : workload::output_shape(w.layers[producer->second]);
            if (!shape)
                throw ConfigError(where[i],
                                  "layer '" + l.name + "' reads " +
                                      (name == workload::kNetworkInput ? std::string("the network input")
                                                                       : "the gemm layer '" + name + "'") +
                                      ", whose shape is not known: give its input: [height, width, channels]");
            shapes.push_back(*shape);
        }
        std::array<std::uint64_t, 3> shape = shapes[0];
        if (l.kind == LayerKind::concat) {
            for (std::size_t j = 1; j < shapes.size(); ++j) {
                if (shapes[j][0] != shape[0] || shapes[j][1] != shape[1])
                    throw ConfigError(where[i], "concat '" + l.name + "': '" + names[j] + "' gives " +
                                                    std::to_string(shapes[j][0]) + " x " +
                                                    std::to_string(shapes[j][1]) + " positions, '" + names[0] + "' " +
                                                    std::to_string(shape[0]) + " x " + std::to_string(shape[1]) +
                                                    ": a concatenation needs equal height and width");
                shape[2] += shapes[j][2];
            }
        }
        for (const std::uint64_t size : shape)
            if (!kLayerSize.admits(static_cast<double>(size)))
                throw ConfigError(where[i], "layer '" + l.name + "': its inferred tensor has a size over " +
                                                std::to_string(static_cast<std::uint64_t>(kLayerSize.max)) + " (" +
                                                std::string(kLayerSize.keys) + "); give its input explicitly");
        l.in_height = static_cast<int>(shape[0]);
        l.in_width = static_cast<int>(shape[1]);
        l.in_channels = static_cast<int>(shape[2]);
    }
}

workload::Workload read_yaml_trace(const std::string& text, const std::string& path) {
    const Document doc = Document::parse(text, path);
    MapReader top(doc, doc.root, "");
    workload::Workload w;
    w.name = top.scalar<std::string>("network").value_or(path);
    w.source = top.scalar<std::string>("source").value_or("");
    w.shortcuts =
        top.choice<workload::ShortcutConvention>("shortcuts").value.value_or(workload::ShortcutConvention::producer);
    w.shape_check = top.choice<workload::ShapeCheck>("shape_check").value.value_or(workload::ShapeCheck::error);
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
    check_embeddings(w, where);
    infer_vector_shapes(w, where);
    if (w.shape_check != workload::ShapeCheck::off) {
        for (const workload::ShapeMismatch& m : workload::shape_mismatches(w)) {
            if (w.shape_check == workload::ShapeCheck::error)
                throw ConfigError(where[m.layer], m.message +
                                                      "; if the trace leaves out layers that change shapes (pooling "
                                                      "folded into the next layer's input, as AccPar's files do), "
                                                      "say so with shape_check: warn or off at its top level");
            w.warnings.push_back(where[m.layer].describe() + ": " + m.message);
        }
    }
    return w;
}

bool ends_with(const std::string& s, const std::string& suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

workload::Workload read_trace(const std::string& path) {
    if (!ends_with(path, ".csv") && !ends_with(path, ".yaml") && !ends_with(path, ".yml"))
        throw ConfigError({path, 0, 0, ""},
                          "unknown trace format: expected a .yaml/.yml fastsim trace or a .csv SCALE-Sim topology");
    return read_trace_text(read_input_file(path, "trace"), path);
}

workload::Workload read_trace_text(const std::string& text, const std::string& path) {
    if (ends_with(path, ".csv")) return read_scalesim_csv(text, path);  // names made unique, no inputs
    if (ends_with(path, ".yaml") || ends_with(path, ".yml")) return read_yaml_trace(text, path);
    throw ConfigError({path, 0, 0, ""},
                      "unknown trace format: expected a .yaml/.yml fastsim trace or a .csv SCALE-Sim topology");
}

}  // namespace fastsim::config
