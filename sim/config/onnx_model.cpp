// SPDX-License-Identifier: MIT
// read_onnx_model (docs/onnx.md), built when libonnx-dev is found: the graph walk's operator
// families (GraphWalk, onnx_graph_walk.h), then the model read, checked and shape-inferred.
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
#include "config/onnx_graph_walk.h"
#include "config/onnx_preflight.h"
#include "config/ranges.h"
#include "workload/shapes.h"

namespace fastsim::config {
namespace onnx_walk {

void GraphWalk::conv() {
    const std::string& x = node().input(0);
    if (node().input_size() < 2 || is_activation(node().input(1)))
        fail("expected constant weights as the second input");
    if (node().input_size() > 2 && is_activation(node().input(2)))
        fail("expected a constant bias as the third input, got the activation '" + node().input(2) + "'");
    const Dims xs = sample(x), w = dims(node().input(1));
    if (xs.size() != 3 || w.size() != 4)
        fail("expected a 2-D convolution (input [N, C, H, W], weights [F, C/groups, kh, kw])");
    Layer l;
    l.kind = LayerKind::conv;
    read_window(l, xs, w[2], w[3]);
    l.filters = size(w[0], "filters");
    l.groups = size(int_attribute("group", 1), "group");
    if (l.in_channels % l.groups || l.filters % l.groups || w[1] * l.groups != l.in_channels)
        fail("weights " + list(w) + " do not fit " + std::to_string(l.in_channels) + " input channels in " +
             std::to_string(l.groups) + " groups");
    check_output(l, l.filters);
    emit(std::move(l), {x});
}

void GraphWalk::pool(bool global) {
    const std::string& x = node().input(0);
    const Dims xs = sample(x);
    if (xs.size() != 3) fail("expected a 2-D pooling of [N, C, H, W], got " + list(dims(x)));
    Layer l;
    l.kind = LayerKind::pool;
    l.pool_mode =
        node().op_type().find("Max") != std::string::npos ? workload::PoolMode::max : workload::PoolMode::average;
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

void GraphWalk::fc_or_matmul() {
    const std::string &a = node().input(0), &b = node().input(1);
    const bool gemm = node().op_type() == "Gemm";
    if (is_activation(a) && is_activation(b)) {
        if (gemm) fail("a Gemm of two activations: fastsim costs it as a MatMul only");
        const Dims as = sample(a), bs = sample(b);
        if (as.size() < 2 || as.size() != bs.size() || !std::equal(as.begin(), as.end() - 2, bs.begin()))
            fail("operands " + list(dims(a)) + " and " + list(dims(b)) +
                 ": expected equal batch dimensions (no broadcasting)");
        Layer l;
        l.kind = LayerKind::matmul;
        l.m = size(as[as.size() - 2], "m");
        l.k = size(as.back(), "k");
        l.n = size(bs.back(), "n");
        if (bs[bs.size() - 2] != as.back())
            fail("operands " + list(dims(a)) + " and " + list(dims(b)) + " do not chain");
        l.repeat = product(as, 0, as.size() - 2, "the batch dimensions");
        emit(std::move(l), {a, b});
        return;
    }
    if (!is_activation(a)) fail("the first operand is constant: fastsim's layers multiply activations by weights");
    if (gemm && int_attribute("transA", 0)) fail("transA = 1 (a transposed activation) is not supported");
    const Dims as = sample(a), w = dims(b);
    if (w.size() != 2 || as.empty() || (gemm && as.size() != 1))
        fail("operands " + list(dims(a)) + " and " + list(w) + ": expected [N, ..., K] x [K, N]");
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
void GraphWalk::binary() {
    const std::string &a = node().input(0), &b = node().input(1);
    if (node().op_type() == "Div" && !is_activation(a) && is_activation(b))
        fail("a constant divided by an activation ('" + b + "') is not a scale of it, and is not supported");
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
    if (dims(a) != dims(b))
        fail("operands " + list(dims(a)) + " and " + list(dims(b)) + ": broadcasting is not supported");
    emit_vector(LayerKind::add, image_tensor(sample(a)), {a, b});
}

void GraphWalk::concat() {
    for (const auto& in : node().input())
        if (!is_activation(in)) fail("a concatenation with a constant tensor ('" + in + "') is not supported");
    if (node().input_size() == 1) return alias(node().input(0));  // one tensor: a copy of it
    const Dims out = dims(node().output(0));
    const auto rank = static_cast<std::int64_t>(out.size());
    std::int64_t axis = int_attribute("axis", 1);
    if (axis < 0) axis += rank;
    if (!(rank == 4 ? axis == 1 : axis == rank - 1))
        fail("axis " + std::to_string(axis) + " of rank " + std::to_string(rank) +
             ": fastsim concatenates channels only");
    emit_vector(LayerKind::concat, image_tensor(sample(node().output(0))),
                {node().input().begin(), node().input().end()});
}

void GraphWalk::reduce_mean() {
    const std::string& x = node().input(0);
    Dims axes = ints_attribute("axes", {});
    for (auto& a : axes)
        if (a < 0) a += static_cast<std::int64_t>(dims(x).size());
    std::sort(axes.begin(), axes.end());
    if (dims(x).size() != 4 || axes != Dims{2, 3})
        fail("only a mean over height and width (a global average pool) is supported");
    pool(true);
}

void GraphWalk::check_batch_kept(const std::string& x, const std::string& out) const {
    // The layers after a view read its output's first dimension as the batch: the view must
    // leave each sample's values together, and in the first dimension.
    if (node().op_type() == "Transpose") {
        const Dims perm = ints_attribute("perm", {});
        if ((perm.empty() && dims(x).size() > 1) || (!perm.empty() && perm.front() != 0))
            fail(
                "a transpose that moves the batch (dimension 0) is not supported: fastsim's layers take the "
                "batch first");
    }
    const auto values = [&](const std::string& tensor) {
        const Dims d = sample(tensor);
        std::int64_t p = 1;
        for (const std::int64_t v : d)
            if (__builtin_mul_overflow(p, v, &p))
                fail("'" + tensor + "' has more values per sample than fastsim counts");
        return p;
    };
    const std::int64_t in = values(x), kept = values(out);
    if (in != kept)
        fail("'" + out + "' has " + std::to_string(kept) + " values per sample, '" + x + "' " + std::to_string(in) +
             ": a view that folds the batch (dimension 0) into another dimension, or another into it, is not "
             "supported (fastsim's layers take the batch first)");
}

void GraphWalk::visit(const onnx::NodeProto& n) {
    if (std::none_of(n.input().begin(), n.input().end(), [&](const std::string& t) { return is_activation(t); }))
        return;  // constants
    if (!n.domain().empty() && n.domain() != "ai.onnx" && !(n.domain() == "com.microsoft" && n.op_type() == "Gelu"))
        fail("operator domain '" + n.domain() + "' is not supported");
    const std::string& op = n.op_type();
    const bool two_operands =
        op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "MatMul" || op == "Gemm";
    if (n.output_size() < 1 || n.output(0).empty() || n.input_size() < (two_operands ? 2 : 1))
        fail("expected " + std::string(two_operands ? "two inputs" : "an input") + " and an output");
    const std::string& x = n.input(0);
    static const std::set<std::string> views{"Flatten",   "Reshape",  "Transpose", "Squeeze",
                                             "Unsqueeze", "Identity", "Dropout",   "Cast"};
    if (views.count(op)) {
        if (!is_activation(x)) fail("expected an activation as the first input");
        check_batch_kept(x, n.output(0));
        return alias(x);
    }
    if (op == "Shape" || op == "Size") return;  // static sizes: constants
    if (op != "Add" && op != "Sub" && op != "Mul" && op != "Div" && op != "Concat" && op != "MatMul" &&
        !is_activation(x))
        fail("expected an activation as the first input");
    if (op == "Conv") return conv();
    if (op == "Gemm" || op == "MatMul") return fc_or_matmul();
    if (op == "MaxPool" || op == "AveragePool") return pool(false);
    if (op == "GlobalAveragePool" || op == "GlobalMaxPool") return pool(true);
    if (op == "ReduceMean") return reduce_mean();
    if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div") return binary();
    if (op == "Concat") return concat();
    if (op == "Clip")
        for (int i = 1; i < n.input_size(); ++i)
            if (is_activation(n.input(i)))
                fail("a Clip bounded by the activation '" + n.input(i) + "' is not supported (constant bounds only)");
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
    fail(
        "unsupported operator: fastsim imports Conv, Gemm, MatMul, MaxPool, AveragePool, GlobalAveragePool, "
        "GlobalMaxPool, "
        "ReduceMean (over H and W), BatchNormalization, Relu, Clip, Gelu (or its Erf form), Add, Sub, Mul, Div, "
        "Concat, "
        "Softmax, LayerNormalization and the views Flatten, Reshape, Transpose, Squeeze, Unsqueeze, Identity, "
        "Dropout, Cast");
}

}  // namespace onnx_walk

namespace {

/// Largest ONNX file read: protobuf's own message limit.
constexpr std::uint64_t kMaxModelBytes = std::uint64_t{2} << 30;

using onnx_walk::GraphWalk;

}  // namespace

bool onnx_supported() { return true; }

workload::Workload read_onnx_model(const std::string& path) {
    return read_onnx_bytes(read_input_file(path, "model file", kMaxModelBytes), path);
}

workload::Workload read_onnx_bytes(const std::string& bytes, const std::string& path) {
    onnx::ModelProto model;
    if (!model.ParseFromString(bytes) || !model.has_graph())
        throw ConfigError({path, 0, 0, ""},
                          "not an ONNX model: the file does not parse as an onnx.ModelProto with a graph");
    prepare_for_shape_inference(model, path);
    try {
        onnx::shape_inference::InferShapes(model, onnx::OpSchemaRegistry::Instance(),
                                           onnx::ShapeInferenceOptions(false, 0, true));
    } catch (const std::exception& e) {
        throw ConfigError({path, 0, 0, "graph"}, std::string("ONNX shape inference failed: ") + e.what());
    }
    workload::Workload w = GraphWalk(path, model.graph()).run();
    w.name = std::filesystem::path(path).stem().string();
    w.source =
        "ONNX model " + std::filesystem::path(path).filename().string() + ", graph '" + model.graph().name() + "'" +
        (model.producer_name().empty() ? "" : ", from " + model.producer_name() + " " + model.producer_version());
    for (const workload::ShapeMismatch& m : workload::shape_mismatches(w)) {
        w.shape_check = workload::ShapeCheck::warn;
        w.warnings.push_back(w.layers[m.layer].where.describe() + ": " + m.message);
    }
    return w;
}

}  // namespace fastsim::config
