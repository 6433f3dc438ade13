// SPDX-License-Identifier: MIT
// The ONNX graph walk of read_onnx_model (docs/onnx.md): built when libonnx-dev is found.
#include "config/onnx_model.h"

#include <onnx/defs/schema.h>
#include <onnx/shape_inference/implementation.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <filesystem>
#include <set>
#include <tuple>
#include <unordered_map>

#include "common/input_file.h"
#include "config/onnx_preflight.h"
#include "config/ranges.h"
#include "workload/shapes.h"

namespace fastsim::config {
namespace {

using workload::Layer;
using workload::LayerKind;
using Dims = std::vector<std::int64_t>;

/// Largest ONNX file read: protobuf's own message limit.
constexpr std::uint64_t kMaxModelBytes = std::uint64_t{2} << 30;

std::string list(const Dims& d) {
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
                                                                 std::to_string(inputs.size()) + ": a fastsim trace has one");
        m_layer_of[inputs[0]] = workload::kNetworkInput;
        for (m_index = 0; m_index < m_graph.node_size(); ++m_index) visit(m_graph.node(m_index));
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
    Location where() const {
        return {m_path, 0, 0, "graph.node[" + std::to_string(m_index) + "] '" + node().name() + "' (" + node().op_type() + ")"};
    }
    [[noreturn]] void fail(const std::string& message) const { throw ConfigError(where(), message); }

    void collect_shapes() {
        const auto add = [&](const onnx::ValueInfoProto& v) {
            if (!v.type().has_tensor_type() || !v.type().tensor_type().has_shape()) return;
            Dims d;
            for (const auto& dim : v.type().tensor_type().shape().dim()) d.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
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
        if (it == m_shapes.end()) fail("the shape of '" + tensor + "' is unknown after ONNX shape inference: export the model with static input sizes");
        for (std::size_t i = 1; i < it->second.size(); ++i)
            if (it->second[i] <= 0) fail("'" + tensor + "' has shape " + list(it->second) + ": every size but the batch must be static");
        return it->second;
    }
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
        const auto it = std::find_if(all.begin(), all.end(), [&](const onnx::AttributeProto& a) { return a.name() == name; });
        return it == all.end() ? nullptr : &*it;
    }
    std::int64_t int_attribute(const char* name, std::int64_t fallback) const { const auto* a = attribute(name); return a ? a->i() : fallback; }
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
            fail("axis " + std::to_string(axis) + " of a rank-" + std::to_string(rank) + " tensor: fastsim normalises over the last axis only");
        if (s.size() == 1) return {1, 1, size(s[0], "channels")};
        return {product(s, 0, s.size() - 2, "leading dimensions"), size(s[s.size() - 2], "rows"), size(s.back(), "channels")};
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
            fail("ONNX infers an output of " + list(onnx) + ", fastsim's window rule " + list(expected) + ": unsupported attributes");
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
        if (dilations[0] != dilations[1]) fail("dilations " + list(dilations) + " differ: fastsim dilates both axes alike");
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
        }
        if (pads.size() != 4 || std::any_of(pads.begin(), pads.end(), [&](std::int64_t p) { return p != pads[0]; }))
            fail("pads " + list(pads) + ": fastsim pads every side alike");
        if (pads[0] < 0 || !kLayerPadding.admits(static_cast<double>(pads[0]))) fail("pads " + list(pads) + " out of range");
        l.padding = static_cast<int>(pads[0]);
        const auto span = [&](int k) { return std::int64_t{l.dilation} * (k - 1) + 1; };  // 64-bit: both below 2^24
        if (std::int64_t{l.in_height} + 2 * l.padding < span(l.kernel_height) ||
            std::int64_t{l.in_width} + 2 * l.padding < span(l.kernel_width))
            fail("the window is larger than the padded input");
    }

    void conv() {
        const std::string& x = node().input(0);
        if (node().input_size() < 2 || is_activation(node().input(1))) fail("expected constant weights as the second input");
        const Dims xs = sample(x), w = dims(node().input(1));
        if (xs.size() != 3 || w.size() != 4) fail("expected a 2-D convolution (input [N, C, H, W], weights [F, C/groups, kh, kw])");
        Layer l;
        l.kind = LayerKind::conv;
        read_window(l, xs, w[2], w[3]);
        l.filters = size(w[0], "filters");
        l.groups = size(int_attribute("group", 1), "group");
        if (l.in_channels % l.groups || l.filters % l.groups || w[1] * l.groups != l.in_channels)
            fail("weights " + list(w) + " do not fit " + std::to_string(l.in_channels) + " input channels in " + std::to_string(l.groups) + " groups");
        check_output(l, l.filters);
        emit(std::move(l), {x});
    }

    void pool(bool global) {
        const std::string& x = node().input(0);
        const Dims xs = sample(x);
        if (xs.size() != 3) fail("expected a 2-D pooling of [N, C, H, W], got " + list(dims(x)));
        Layer l;
        l.kind = LayerKind::pool;
        l.pool_mode = node().op_type().find("Max") != std::string::npos ? workload::PoolMode::max : workload::PoolMode::average;
        if (global) {
            l.in_channels = size(xs[0], "channels");
            l.in_height = l.kernel_height = l.stride = size(xs[1], "height");
            l.in_width = l.kernel_width = size(xs[2], "width");
            if (l.in_width != l.in_height) l.stride_width = l.in_width;
        } else {
            const Dims k = ints_attribute("kernel_shape", {});
            if (k.size() != 2) fail("expected kernel_shape of 2 sizes, got " + list(k));
            read_window(l, xs, k[0], k[1]);
            if (l.dilation != 1) fail("a dilated pooling window is not supported");
            l.partial_windows = int_attribute("ceil_mode", 0) != 0;
            if (2 * l.padding > std::min(l.kernel_height, l.kernel_width)) fail("padding above half the kernel");
        }
        check_output(l, l.in_channels);
        emit(std::move(l), {x});
    }

    void fc_or_matmul() {
        const std::string &a = node().input(0), &b = node().input(1);
        const bool gemm = node().op_type() == "Gemm";
        if (is_activation(a) && is_activation(b)) {
            if (gemm) fail("a Gemm of two activations: fastsim costs it as a MatMul only");
            const Dims as = sample(a), bs = sample(b);
            if (as.size() < 2 || as.size() != bs.size() || !std::equal(as.begin(), as.end() - 2, bs.begin()))
                fail("operands " + list(dims(a)) + " and " + list(dims(b)) + ": expected equal batch dimensions (no broadcasting)");
            Layer l;
            l.kind = LayerKind::matmul;
            l.m = size(as[as.size() - 2], "m");
            l.k = size(as.back(), "k");
            l.n = size(bs.back(), "n");
            if (bs[bs.size() - 2] != as.back()) fail("operands " + list(dims(a)) + " and " + list(dims(b)) + " do not chain");
            l.repeat = product(as, 0, as.size() - 2, "the batch dimensions");
            emit(std::move(l), {a, b});
            return;
        }
        if (!is_activation(a)) fail("the first operand is constant: fastsim's layers multiply activations by weights");
        if (gemm && int_attribute("transA", 0)) fail("transA = 1 (a transposed activation) is not supported");
        const Dims as = sample(a), w = dims(b);
        if (w.size() != 2 || as.empty() || (gemm && as.size() != 1)) fail("operands " + list(dims(a)) + " and " + list(w) + ": expected [N, ..., K] x [K, N]");
        const bool trans_b = gemm && int_attribute("transB", 0);
        Layer l;
        l.kind = LayerKind::fc;
        l.in_features = size(as.back(), "in_features");
        l.out_features = size(trans_b ? w[0] : w[1], "out_features");
        if ((trans_b ? w[1] : w[0]) != as.back()) fail("operands " + list(dims(a)) + " and " + list(w) + " do not chain");
        l.tokens = product(as, 0, as.size() - 1, "tokens");
        emit(std::move(l), {a});
    }

    /// Add, Sub, Mul, Div: with a constant, folded into the producer (a bias, a scale); of one
    /// layer's output with itself, or the x * (1 + erf(x / sqrt 2)) / 2 of an exported GELU,
    /// folded; an Add or Sub of two layers, an add layer.
    void binary() {
        const std::string &a = node().input(0), &b = node().input(1);
        if (!is_activation(a) || !is_activation(b)) return alias(is_activation(a) ? a : b);
        const std::string &la = layer_of(a), &lb = layer_of(b);
        if (la == lb) return alias(a);
        const auto gelu_of = [&](const std::string& gelu, const std::string& input) {
            const auto it = m_gelu_of.find(gelu);
            return it != m_gelu_of.end() && it->second == input;
        };
        if (node().op_type() == "Mul" && (gelu_of(la, lb) || gelu_of(lb, la))) return alias(gelu_of(la, lb) ? a : b);
        if (node().op_type() != "Add" && node().op_type() != "Sub")
            fail("a " + node().op_type() + " of two activations ('" + la + "' and '" + lb + "') is not supported");
        if (dims(a) != dims(b)) fail("operands " + list(dims(a)) + " and " + list(dims(b)) + ": broadcasting is not supported");
        emit_vector(LayerKind::add, image_tensor(sample(a)), {a, b});
    }

    void concat() {
        for (const auto& in : node().input())
            if (!is_activation(in)) fail("a concatenation with a constant tensor ('" + in + "') is not supported");
        const Dims out = dims(node().output(0));
        const auto rank = static_cast<std::int64_t>(out.size());
        std::int64_t axis = int_attribute("axis", 1);
        if (axis < 0) axis += rank;
        if (!(rank == 4 ? axis == 1 : axis == rank - 1))
            fail("axis " + std::to_string(axis) + " of rank " + std::to_string(rank) + ": fastsim concatenates channels only");
        emit_vector(LayerKind::concat, image_tensor(sample(node().output(0))), {node().input().begin(), node().input().end()});
    }

    void reduce_mean() {
        const std::string& x = node().input(0);
        Dims axes = ints_attribute("axes", {});
        for (auto& a : axes)
            if (a < 0) a += static_cast<std::int64_t>(dims(x).size());
        std::sort(axes.begin(), axes.end());
        if (dims(x).size() != 4 || axes != Dims{2, 3}) fail("only a mean over height and width (a global average pool) is supported");
        pool(true);
    }

    void visit(const onnx::NodeProto& n) {
        if (std::none_of(n.input().begin(), n.input().end(), [&](const std::string& t) { return is_activation(t); })) return;  // constants
        if (!n.domain().empty() && n.domain() != "ai.onnx" && !(n.domain() == "com.microsoft" && n.op_type() == "Gelu"))
            fail("operator domain '" + n.domain() + "' is not supported");
        const std::string& op = n.op_type();
        const bool two_operands = op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "MatMul" || op == "Gemm";
        if (n.output_size() < 1 || n.output(0).empty() || n.input_size() < (two_operands ? 2 : 1))
            fail("expected " + std::string(two_operands ? "two inputs" : "an input") + " and an output");
        const std::string& x = n.input(0);
        static const std::set<std::string> views{"Flatten", "Reshape", "Transpose", "Squeeze", "Unsqueeze", "Identity", "Dropout", "Cast"};
        if (views.count(op)) {
            if (!is_activation(x)) fail("expected an activation as the first input");
            return alias(x);
        }
        if (op == "Shape" || op == "Size") return;  // static sizes: constants
        if (op != "Add" && op != "Sub" && op != "Mul" && op != "Div" && op != "Concat" && op != "MatMul" && !is_activation(x))
            fail("expected an activation as the first input");
        if (op == "Conv") return conv();
        if (op == "Gemm" || op == "MatMul") return fc_or_matmul();
        if (op == "MaxPool" || op == "AveragePool") return pool(false);
        if (op == "GlobalAveragePool" || op == "GlobalMaxPool") return pool(true);
        if (op == "ReduceMean") return reduce_mean();
        if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") return binary();
        if (op == "Concat") return concat();
        if (op == "Relu" || op == "Clip") return emit_vector(LayerKind::relu, image_tensor(sample(x)), {x});
        if (op == "BatchNormalization") return emit_vector(LayerKind::batchnorm, image_tensor(sample(x)), {x});
        if (op == "Gelu" || op == "Erf") {
            const std::string source = layer_of(x);
            emit_vector(LayerKind::gelu, image_tensor(sample(x)), {x});
            if (op == "Erf") m_gelu_of[m_w.layers.back().name] = source;
            return;
        }
        if (op == "Softmax") return emit_vector(LayerKind::softmax, rows_tensor(sample(x), int_attribute("axis", -1)), {x});
        if (op == "LayerNormalization")
            return emit_vector(LayerKind::layernorm, rows_tensor(sample(x), int_attribute("axis", -1)), {x});
        fail("unsupported operator: fastsim imports Conv, Gemm, MatMul, MaxPool, AveragePool, GlobalAveragePool, GlobalMaxPool, "
             "ReduceMean (over H and W), BatchNormalization, Relu, Clip, Gelu (or its Erf form), Add, Sub, Mul, Div, Concat, "
             "Softmax, LayerNormalization and the views Flatten, Reshape, Transpose, Squeeze, Unsqueeze, Identity, Dropout, Cast");
    }
};

}  // namespace

bool onnx_supported() { return true; }

workload::Workload read_onnx_model(const std::string& path) {
    return read_onnx_bytes(read_input_file(path, "model file", kMaxModelBytes), path);
}

workload::Workload read_onnx_bytes(const std::string& bytes, const std::string& path) {
    onnx::ModelProto model;
    if (!model.ParseFromString(bytes) || !model.has_graph())
        throw ConfigError({path, 0, 0, ""}, "not an ONNX model: the file does not parse as an onnx.ModelProto with a graph");
    prepare_for_shape_inference(model, path);
    try {
        onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(), onnx::ShapeInferenceOptions(false, 0, true));
    } catch (const std::exception& e) {
        throw ConfigError({path, 0, 0, "graph"}, std::string("ONNX shape inference failed: ") + e.what());
    }
    workload::Workload w = GraphWalk(path, model.graph()).run();
    w.name = std::filesystem::path(path).stem().string();
    w.source = "ONNX model " + std::filesystem::path(path).filename().string() + ", graph '" + model.graph().name() + "'" +
               (model.producer_name().empty() ? "" : ", from " + model.producer_name() + " " + model.producer_version());
    for (const workload::ShapeMismatch& m : workload::shape_mismatches(w)) {
        w.shape_check = workload::ShapeCheck::warn;
        w.warnings.push_back(w.layers[m.layer].where.describe() + ": " + m.message);
    }
    return w;
}

}  // namespace fastsim::config
