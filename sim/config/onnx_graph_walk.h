// SPDX-License-Identifier: MIT
#pragma once

// The ONNX graph walk of read_onnx_model (docs/onnx.md), built when libonnx-dev is found: the
// walk's state and tensor helpers here, one method per operator family in onnx_model.cpp.

#include <onnx/onnx_pb.h>

#include <array>
#include <cstdint>
#include <set>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "common/errors.h"
#include "config/ranges.h"
#include "workload/layer.h"

namespace fastsim::config::onnx_walk {

using workload::Layer;
using workload::LayerKind;
using Dims = std::vector<std::int64_t>;

/// "[1, 3, 224, 224]".
inline std::string list(const Dims& d) {
    std::string s = "[";
    for (std::size_t i = 0; i < d.size(); ++i) s += (i ? ", " : "") + std::to_string(d[i]);
    return s + "]";
}

class GraphWalk {
public:
    GraphWalk(std::string path, const onnx::GraphProto& graph) : m_path(std::move(path)), m_graph(graph) {}

    workload::Workload run() {
        collect_shapes();
        std::vector<std::string> inputs;
        std::set<std::string> initializers;
        for (const auto& t : m_graph.initializer()) initializers.insert(t.name());
        for (const auto& in : m_graph.input())
            if (!initializers.count(in.name())) inputs.push_back(in.name());
        if (inputs.size() != 1)
            throw ConfigError({m_path, 0, 0, "graph.input"}, "expected one network input (not an initializer), found " +
                                                                 std::to_string(inputs.size()) +
                                                                 ": a fastsim trace has one");
        check_one_writer_each(initializers);
        m_layer_of[inputs[0]] = workload::kNetworkInput;
        for (m_index = 0; m_index < m_graph.node_size(); ++m_index) visit(m_graph.node(m_index));
        // Every output is computed: one that no node writes (nor is the input or a constant) is a
        // graph cut short.
        std::set<std::string> written(initializers);
        written.insert(inputs[0]);
        for (const auto& n : m_graph.node()) written.insert(n.output().begin(), n.output().end());
        for (int o = 0; o < m_graph.output_size(); ++o)
            if (!written.count(m_graph.output(o).name()))
                throw ConfigError({m_path, 0, 0, "graph.output[" + std::to_string(o) + "]"},
                                  "'" + m_graph.output(o).name() + "' is written by no node of the graph");
        if (m_w.layers.empty()) throw ConfigError({m_path, 0, 0, "graph"}, "the model has no layer fastsim can cost");
        return std::move(m_w);
    }

private:
    const std::string m_path;
    const onnx::GraphProto& m_graph;
    std::unordered_map<std::string, Dims> m_shapes;           ///< every tensor whose shape is known
    std::unordered_map<std::string, std::string> m_layer_of;  ///< activation tensor -> the layer that gives it
    std::unordered_map<std::string, std::string> m_gelu_of;   ///< gelu layer (from an Erf) -> the layer it reads
    std::set<std::string> m_names{workload::kNetworkInput};
    workload::Workload m_w;
    int m_index = 0;

    const onnx::NodeProto& node() const { return m_graph.node(m_index); }

    /// An ONNX graph is in static single assignment: a tensor written by two nodes, or a node
    /// writing a graph input or initializer, would leave its readers reading either. Each node
    /// reads only what exists before it.
    void check_one_writer_each(const std::set<std::string>& initializers) {
        std::unordered_map<std::string, int> writer;  // -1: a graph input or initializer
        for (const auto& in : m_graph.input()) writer.emplace(in.name(), -1);
        for (const std::string& name : initializers) writer.emplace(name, -1);
        for (m_index = 0; m_index < m_graph.node_size(); ++m_index)
            for (const std::string& out : node().output()) {
                if (out.empty()) continue;  // an optional output left out
                const auto [it, first] = writer.emplace(out, m_index);
                if (first) continue;
                const int other = it->second;
                fail("writes '" + out + "', which " +
                     (other < 0 ? std::string("is a graph input or initializer")
                                : "graph.node[" + std::to_string(other) + "] '" + m_graph.node(other).name() + "' (" +
                                      m_graph.node(other).op_type() + ") also writes") +
                     ": each tensor of an ONNX graph has one producer");
            }
        // Every input read is a graph input, an initializer or an earlier node's output: ONNX lists
        // nodes in topological order, and the walk below would drop a node reading anything else
        // (and every node after it on that path).
        for (m_index = 0; m_index < m_graph.node_size(); ++m_index)
            for (const std::string& in : node().input()) {
                if (in.empty()) continue;  // an optional input left out
                const auto it = writer.find(in);
                if (it == writer.end())
                    fail("reads '" + in + "', which no node writes and which is no graph input or initializer");
                if (it->second >= m_index)
                    fail("reads '" + in + "', which graph.node[" + std::to_string(it->second) + "] '" +
                         m_graph.node(it->second).name() + "' (" + m_graph.node(it->second).op_type() + ") writes " +
                         (it->second == m_index ? "itself" : "later") +
                         ": ONNX nodes are listed in topological order, and a graph with a cycle has none");
            }
    }
    Location where() const {
        return {m_path, 0, 0,
                "graph.node[" + std::to_string(m_index) + "] '" + node().name() + "' (" + node().op_type() + ")"};
    }
    [[noreturn]] void fail(const std::string& message) const { throw ConfigError(where(), message); }

    void collect_shapes() {
        const auto add = [&](const onnx::ValueInfoProto& v) {
            if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape()) return;
            Dims d;
            for (const auto& dim : v.type().tensor_type().shape().dim())
                d.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
            m_shapes[v.name()] = d;
        };
        for (const auto& v : m_graph.input()) add(v);
        for (const auto& v : m_graph.value_info()) add(v);
        for (const auto& v : m_graph.output()) add(v);
        for (const auto& t : m_graph.initializer()) m_shapes[t.name()] = Dims(t.dims().begin(), t.dims().end());
    }

    bool is_activation(const std::string& tensor) const { return !tensor.empty() && m_layer_of.count(tensor); }
    const std::string& layer_of(const std::string& tensor) const { return m_layer_of.at(tensor); }

    /// The whole shape of `tensor`; every dimension but the first (the batch) must be known.
    Dims dims(const std::string& tensor) const {
        const auto it = m_shapes.find(tensor);
        if (it == m_shapes.end())
            fail("the shape of '" + tensor +
                 "' is unknown after ONNX shape inference: export the model with static input sizes");
        for (std::size_t i = 1; i < it->second.size(); ++i)
            if (it->second[i] <= 0)
                fail("'" + tensor + "' has shape " + list(it->second) + ": every size but the batch must be static");
        return it->second;
    }
    /// Refuses a view (the current node) from `x` to `out` that does not keep the batch as
    /// dimension 0 with each sample's values.
    void check_batch_kept(const std::string& x, const std::string& out) const;
    /// Per sample: without the batch dimension.
    Dims sample(const std::string& tensor) const {
        Dims d = dims(tensor);
        if (d.empty()) fail("'" + tensor + "' is a scalar: expected a batch of tensors");
        d.erase(d.begin());
        return d;
    }
    int size(std::int64_t value, const std::string& what) const {
        if (value < 1 || !kLayerSize.admits(static_cast<double>(value)))
            fail(what + " is " + std::to_string(value) + ", outside " + std::string(kLayerSize.keys));
        return static_cast<int>(value);
    }
    int product(const Dims& d, std::size_t begin, std::size_t end, const std::string& what) const {
        std::int64_t p = 1;
        for (std::size_t i = begin; i < end; ++i)
            if (__builtin_mul_overflow(p, d[i], &p)) fail(what + " overflows");
        return size(p, what);
    }

    const onnx::AttributeProto* attribute(const char* name) const {
        const auto& all = node().attribute();
        const auto it =
            std::find_if(all.begin(), all.end(), [&](const onnx::AttributeProto& a) { return a.name() == name; });
        return it == all.end() ? nullptr : &*it;
    }
    std::int64_t int_attribute(const char* name, std::int64_t fallback) const {
        const auto* a = attribute(name);
        return a ? a->i() : fallback;
    }
    Dims ints_attribute(const char* name, Dims fallback) const {
        const auto* a = attribute(name);
        return a ? Dims(a->ints().begin(), a->ints().end()) : fallback;
    }

    /// A tensor of image positions, channels first in ONNX ([C, H, W] -> H, W, C), or rows of
    /// channels ([T, D] -> 1, T, D; [C] -> 1, 1, C).
    std::array<int, 3> image_tensor(const Dims& s) const {
        if (s.size() == 3) return {size(s[1], "height"), size(s[2], "width"), size(s[0], "channels")};
        if (s.size() == 2) return {1, size(s[0], "positions"), size(s[1], "channels")};
        if (s.size() == 1) return {1, 1, size(s[0], "channels")};
        fail("expected a tensor of 1 to 3 dimensions per sample, got " + list(s));
    }
    /// A tensor normalised over its last axis: [..., R, C] -> (the rest), R, C.
    std::array<int, 3> rows_tensor(const Dims& s, std::int64_t axis) const {
        if (s.empty()) fail("expected a tensor per sample, got a scalar");
        const auto rank = static_cast<std::int64_t>(s.size()) + 1;  // ONNX axes count the batch
        if (axis != -1 && axis != rank - 1)
            fail("axis " + std::to_string(axis) + " of a rank-" + std::to_string(rank) +
                 " tensor: fastsim normalises over the last axis only");
        if (s.size() == 1) return {1, 1, size(s[0], "channels")};
        return {product(s, 0, s.size() - 2, "leading dimensions"), size(s[s.size() - 2], "rows"),
                size(s.back(), "channels")};
    }

    std::string unique_name() {
        std::string base = node().name();
        if (!base.empty() && base[0] == '/') base.erase(0, 1);
        const std::string suffix = "/" + node().op_type();
        if (base.size() > suffix.size() && base.compare(base.size() - suffix.size(), suffix.size(), suffix) == 0)
            base.resize(base.size() - suffix.size());
        if (base.empty()) base = node().op_type() + "_" + std::to_string(m_index);
        std::string name = base;
        for (int n = 2; !m_names.insert(name).second; ++n) name = base + "_" + std::to_string(n);
        return name;
    }

    void emit(Layer l, const std::vector<std::string>& tensors) {
        l.name = unique_name();
        for (const auto& t : tensors) l.inputs.push_back(layer_of(t));
        l.where = where();
        m_layer_of[node().output(0)] = l.name;
        m_w.layers.push_back(std::move(l));
    }
    void alias(const std::string& tensor) { m_layer_of[node().output(0)] = layer_of(tensor); }
    void emit_vector(LayerKind kind, std::array<int, 3> t, const std::vector<std::string>& tensors) {
        Layer l;
        l.kind = kind;
        std::tie(l.in_height, l.in_width, l.in_channels) = std::tie(t[0], t[1], t[2]);
        emit(std::move(l), tensors);
    }

    /// `out` must be the size ONNX inferred (when it did) for the output.
    void check_output(const Layer& l, int channels) const {
        const auto it = m_shapes.find(node().output(0));
        if (it == m_shapes.end() || it->second.size() != 4) return;
        const Dims expected{channels, l.out_height(), l.out_width()};
        const Dims onnx(it->second.begin() + 1, it->second.end());
        if (onnx != expected)
            fail("ONNX infers an output of " + list(onnx) + ", fastsim's window rule " + list(expected) +
                 ": unsupported attributes");
    }

    /// Conv and pool windows: strides, pads (one value on every side), auto_pad, dilations.
    void read_window(Layer& l, const Dims& x, std::int64_t kh, std::int64_t kw) const {
        l.in_channels = size(x[0], "channels");
        l.in_height = size(x[1], "height");
        l.in_width = size(x[2], "width");
        l.kernel_height = size(kh, "kernel height");
        l.kernel_width = size(kw, "kernel width");
        const Dims strides = ints_attribute("strides", {1, 1});
        const Dims dilations = ints_attribute("dilations", {1, 1});
        if (strides.size() != 2 || dilations.size() != 2) fail("expected 2 strides and 2 dilations (a 2-D window)");
        if (dilations[0] != dilations[1])
            fail("dilations " + list(dilations) + " differ: fastsim dilates both axes alike");
        l.dilation = size(dilations[0], "dilation");
        l.stride = size(strides[0], "stride");
        if (strides[1] != strides[0]) l.stride_width = size(strides[1], "stride");
        Dims pads = ints_attribute("pads", {0, 0, 0, 0});
        const auto* auto_pad = attribute("auto_pad");
        if (auto_pad && (auto_pad->s() == "SAME_UPPER" || auto_pad->s() == "SAME_LOWER")) {
            const auto total = [&](std::int64_t in, std::int64_t k, std::int64_t s) {
                return std::max<std::int64_t>(0, ((in + s - 1) / s - 1) * s + l.dilation * (k - 1) + 1 - in);
            };
            const std::int64_t th = total(x[1], kh, strides[0]), tw = total(x[2], kw, strides[1]);
            pads = {th / 2, tw / 2, th - th / 2, tw - tw / 2};
        } else if (auto_pad && auto_pad->s() == "VALID") {
            pads = {0, 0, 0, 0};
        } else if (auto_pad && auto_pad->s() != "NOTSET" && !auto_pad->s().empty()) {
            fail("auto_pad '" + printable(auto_pad->s()) + "': expected NOTSET, SAME_UPPER, SAME_LOWER or VALID");
        }
        if (pads.size() != 4 || std::any_of(pads.begin(), pads.end(), [&](std::int64_t p) { return p != pads[0]; }))
            fail("pads " + list(pads) + ": fastsim pads every side alike");
        if (pads[0] < 0 || !kLayerPadding.admits(static_cast<double>(pads[0])))
            fail("pads " + list(pads) + " out of range");
        l.padding = static_cast<int>(pads[0]);
        const auto span = [&](int k) { return std::int64_t{l.dilation} * (k - 1) + 1; };  // 64-bit: both below 2^24
        if (std::int64_t{l.in_height} + 2 * l.padding < span(l.kernel_height) ||
            std::int64_t{l.in_width} + 2 * l.padding < span(l.kernel_width))
            fail("the window is larger than the padded input");
    }

    void conv();
    void pool(bool global);
    void fc_or_matmul();
    /// Add, Sub, Mul, Div: with a constant, folded into the producer (a bias, a scale); of one
    /// layer's output with itself, or the x * (1 + erf(x / sqrt 2)) / 2 of an exported GELU,
    /// folded; an Add or Sub of two layers, an add layer.
    void binary();
    void concat();
    void reduce_mean();
    void visit(const onnx::NodeProto& n);
};

}  // namespace fastsim::config::onnx_walk
