// SPDX-License-Identifier: MIT
#include "config/onnx_preflight.h"

#include <onnx/defs/schema.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/errors.h"

namespace fastsim::config {
namespace {

using Dims = std::vector<std::int64_t>;

/// The statically declared shape of `tensor` (an initializer, graph input or value_info with every
/// size given), if the file declares one.
std::optional<Dims> declared_shape(const onnx::GraphProto& graph, const std::string& tensor) {
    for (const auto& init : graph.initializer())
        if (init.name() == tensor) return Dims(init.dims().begin(), init.dims().end());
    const auto from = [&](const auto& infos) -> std::optional<Dims> {
        for (const onnx::ValueInfoProto& v : infos) {
            if (v.name() != tensor || !v.type().has_tensor_type() || !v.type().tensor_type().has_shape()) continue;
            Dims d;
            for (const auto& dim : v.type().tensor_type().shape().dim()) {
                if (!dim.has_dim_value()) return std::nullopt;
                d.push_back(dim.dim_value());
            }
            return d;
        }
        return std::nullopt;
    };
    if (auto d = from(graph.input())) return d;
    return from(graph.value_info());
}

/// The operand holding a convolution's weights, for the operators whose ONNX shape inference
/// takes the kernel size from it; -1 for any other operator.
int weight_operand(const onnx::NodeProto& n) {
    if (!n.domain().empty() && n.domain() != "ai.onnx") return -1;
    const std::string& op = n.op_type();
    if (op == "Conv" || op == "ConvInteger" || op == "ConvTranspose") return 1;
    if (op == "QLinearConv") return 3;
    return -1;
}

}  // namespace

void prepare_for_shape_inference(onnx::ModelProto& model, const std::string& path) {
    if (model.functions_size() > 0)
        throw ConfigError({path, 0, 0, "functions"}, "model-local functions are not supported: export without them");
    std::map<std::string, int> opset;  // domain -> version
    for (const auto& o : model.opset_import())
        opset[o.domain() == "ai.onnx" ? "" : o.domain()] = static_cast<int>(o.version());
    onnx::GraphProto& graph = *model.mutable_graph();
    for (int i = 0; i < graph.node_size(); ++i) {
        onnx::NodeProto& n = *graph.mutable_node(i);
        const Location where{path, 0, 0,
                             "graph.node[" + std::to_string(i) + "] '" + n.name() + "' (" + n.op_type() + ")"};
        for (const auto& a : n.attribute())
            if (a.has_g() || a.graphs_size() > 0)
                throw ConfigError(where, "control flow (a subgraph attribute) is not supported");
        const std::string domain = n.domain() == "ai.onnx" ? "" : n.domain();
        const auto version = opset.find(domain);
        const onnx::OpSchema* schema =
            version == opset.end() ? nullptr : onnx::OpSchemaRegistry::Schema(n.op_type(), version->second, domain);
        if (schema) {
            try {
                schema->Verify(n);
            } catch (const std::exception& e) {
                throw ConfigError(where, std::string("not a valid ONNX node: ") + e.what());
            }
        }
        // ONNX's shape inference divides by strides and dilations and by a kernel's extent without
        // checking them (libonnx's convPoolShapeInference dies of SIGFPE on a zero stride).
        for (const auto& a : n.attribute()) {
            const bool positive = a.name() == "strides" || a.name() == "dilations" || a.name() == "kernel_shape";
            for (const std::int64_t v : a.ints())
                if ((positive && v < 1) || (a.name() == "pads" && v < 0))
                    throw ConfigError(where, "attribute " + a.name() + " has " + std::to_string(v) + ": expected " +
                                                 (positive ? "every value at least 1" : "no negative padding"));
            if (a.name() == "group" && a.has_i() && a.i() < 1)
                throw ConfigError(where, "attribute group is " + std::to_string(a.i()) + ": expected at least 1");
        }
        const int w = weight_operand(n);
        if (w < 0 || w >= n.input_size()) continue;
        if (std::any_of(n.attribute().begin(), n.attribute().end(),
                        [](const auto& a) { return a.name() == "kernel_shape"; }))
            continue;
        const std::optional<Dims> weight = declared_shape(graph, n.input(w));
        if (!weight || weight->size() < 3)
            throw ConfigError(where, "the kernel size is unknown: give the node kernel_shape, or its weight '" +
                                         n.input(w) + "' a declared shape of rank 3 or more");
        onnx::AttributeProto& k = *n.add_attribute();
        k.set_name("kernel_shape");
        k.set_type(onnx::AttributeProto::INTS);
        for (auto d = weight->begin() + 2; d != weight->end(); ++d) k.add_ints(*d);
    }
}

}  // namespace fastsim::config
