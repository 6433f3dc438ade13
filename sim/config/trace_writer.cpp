// SPDX-License-Identifier: MIT
#include "config/trace_writer.h"

#include <yaml-cpp/yaml.h>

namespace fastsim::config {
namespace {

using workload::Layer;
using workload::LayerKind;

void sizes(YAML::Emitter& out, const char* key, std::initializer_list<int> values) {
    out << YAML::Key << key << YAML::Value << YAML::Flow << YAML::BeginSeq;
    for (const int v : values) out << v;
    out << YAML::EndSeq;
}

void key(YAML::Emitter& out, const char* name, int value) { out << YAML::Key << name << YAML::Value << value; }

/// The window keys of a conv or pool beyond input and kernel; `default_stride` is the stride
/// read_trace assumes when none is written.
void window(YAML::Emitter& out, const Layer& l, bool pool) {
    const int stride_width = l.stride_width > 0 ? l.stride_width : l.stride;
    const bool default_stride =
        pool ? l.stride == l.kernel_height && stride_width == l.kernel_width : l.stride == 1 && stride_width == 1;
    if (!default_stride) {
        key(out, "stride", l.stride);
        if (stride_width != l.stride) key(out, "stride_width", stride_width);
    }
    if (l.padding != 0) key(out, "padding", l.padding);
    if (l.partial_windows) out << YAML::Key << "ceil_mode" << YAML::Value << true;
}

void layer(YAML::Emitter& out, const Layer& l, const std::string& previous) {
    out << YAML::Flow << YAML::BeginMap;
    out << YAML::Key << "name" << YAML::Value << l.name << YAML::Key << "type" << YAML::Value
        << workload::to_string(l.kind);
    switch (l.kind) {
    case LayerKind::conv:
        sizes(out, "input", {l.in_height, l.in_width, l.in_channels});
        sizes(out, "kernel", {l.kernel_height, l.kernel_width});
        key(out, "filters", l.filters);
        window(out, l, false);
        if (l.groups != 1) key(out, "groups", l.groups);
        if (l.dilation != 1) key(out, "dilation", l.dilation);
        break;
    case LayerKind::pool:
        sizes(out, "input", {l.in_height, l.in_width, l.in_channels});
        sizes(out, "kernel", {l.kernel_height, l.kernel_width});
        out << YAML::Key << "mode" << YAML::Value << name_of(l.pool_mode).data();
        window(out, l, true);
        break;
    case LayerKind::fc:
        key(out, "in_features", l.in_features);
        key(out, "out_features", l.out_features);
        if (l.tokens != 1) key(out, "tokens", l.tokens);
        break;
    case LayerKind::matmul:
    case LayerKind::gemm:
        key(out, "m", l.m);
        key(out, "k", l.k);
        key(out, "n", l.n);
        if (l.kind == LayerKind::matmul && l.repeat != 1) key(out, "repeat", l.repeat);
        break;
    case LayerKind::batchnorm:
    case LayerKind::relu:
    case LayerKind::gelu:
    case LayerKind::add:
    case LayerKind::softmax:
    case LayerKind::layernorm:
    case LayerKind::concat: sizes(out, "input", {l.in_height, l.in_width, l.in_channels}); break;
    case LayerKind::embedding:
        key(out, "vocab", l.vocab);
        key(out, "features", l.in_channels);
        if (l.in_width != 1) key(out, "tokens", l.in_width);
        if (!l.tied_to.empty()) out << YAML::Key << "tied_to" << YAML::Value << l.tied_to;
        break;
    }
    if (!(l.inputs.empty() || (l.inputs.size() == 1 && l.inputs[0] == previous))) {
        out << YAML::Key << "inputs" << YAML::Value << YAML::Flow << YAML::BeginSeq;
        for (const std::string& input : l.inputs) out << input;
        out << YAML::EndSeq;
    }
    out << YAML::EndMap;
}

}  // namespace

std::string trace_yaml(const workload::Workload& w) {
    YAML::Emitter out;
    out << YAML::BeginMap;
    out << YAML::Key << "network" << YAML::Value << w.name;
    if (!w.source.empty()) out << YAML::Key << "source" << YAML::Value << w.source;
    if (w.shortcuts != workload::ShortcutConvention::producer)
        out << YAML::Key << "shortcuts" << YAML::Value << workload::to_string(w.shortcuts);
    if (w.shape_check != workload::ShapeCheck::error)
        out << YAML::Key << "shape_check" << YAML::Value << name_of(w.shape_check).data();
    out << YAML::Key << "layers" << YAML::Value << YAML::BeginSeq;
    std::string previous = workload::kNetworkInput;
    for (const Layer& l : w.layers) {
        layer(out, l, previous);
        previous = l.name;
    }
    out << YAML::EndSeq << YAML::EndMap;
    return std::string(out.c_str()) + "\n";
}

}  // namespace fastsim::config
