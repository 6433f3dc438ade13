// SPDX-License-Identifier: MIT
// ONNX import (docs/onnx.md) on the models scripts/export_onnx.py exports from PyTorch:
// published MAC counts, a BERT block by hand, the written trace read back, and the imported
// ResNet-50 against the hand-written whole-network trace, and MobileNetV2 on every shipped cluster.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <regex>
#include <tuple>

#include "config/load.h"
#include "config/onnx_model.h"
#include "config/trace_reader.h"
#include "config/trace_writer.h"
#include "planner/planner.h"
#include "run/cluster_step.h"
#include "support/fastsim_process.h"
#include "workload/vector_work.h"

using namespace fastsim;
using workload::LayerKind;

namespace {

std::string model(const std::string& name) {
    return std::string(FASTSIM_SOURCE_DIR) + "/tests/data/onnx/" + name + ".onnx";
}

std::uint64_t forward_macs(const workload::Workload& w) {
    std::uint64_t macs = 0;
    for (const auto& l : w.layers) macs += workload::lower(l, 1).forward_macs();
    return macs;
}

std::map<LayerKind, int> kinds(const workload::Workload& w) {
    std::map<LayerKind, int> n;
    for (const auto& l : w.layers) ++n[l.kind];
    return n;
}

/// Every size layer `i` has, its producers and name: what a trace can say about it.
auto fields(const workload::Workload& w, std::size_t i) {
    const workload::Layer& l = w.layers[i];
    std::vector<std::string> producers = l.inputs;  // none written: the layer before
    if (producers.empty()) producers.push_back(i == 0 ? workload::kNetworkInput : w.layers[i - 1].name);
    return std::make_tuple(l.name, l.kind, l.in_height, l.in_width, l.in_channels, l.kernel_height, l.kernel_width,
                           l.filters, l.stride, l.stride_width > 0 ? l.stride_width : l.stride, l.padding, l.groups,
                           l.dilation, l.pool_mode, l.partial_windows, l.in_features, l.out_features, l.tokens, l.m,
                           l.k, l.n, l.repeat, producers);
}

/// A layer's work regardless of its name and place: kind, GEMM, tensor, weights and joins.
auto work(const workload::Layer& l) {
    const workload::LayerGemm g = workload::lower(l, 1);
    return std::make_tuple(l.kind, g.dims.batch, g.dims.in, g.dims.out, g.count, workload::tensor_values(l),
                           workload::weight_count(l), l.inputs.size() > 1);
}

}  // namespace

TEST_CASE("ONNX import: torchvision's ResNet-18, ResNet-50 and MobileNetV2 give their published MACs", "[onnx]") {
    // Per 224 x 224 image: ResNet-18 1.81 G (the figure; torchvision's model table), ResNet-50
    // 4.09 G (torchvision's table), MobileNetV2 300 M multiply-adds (Sandler et al., CVPR 2018, Table 4).
    const struct {
        const char* name;
        double published_macs;
        std::map<LayerKind, int> layers;
    } cases[] = {
        {"resnet18",
         1.81e9,
         {{LayerKind::conv, 20},
          {LayerKind::batchnorm, 20},
          {LayerKind::relu, 17},
          {LayerKind::add, 8},
          {LayerKind::pool, 2},
          {LayerKind::fc, 1}}},
        {"resnet50",
         4.09e9,
         {{LayerKind::conv, 53},
          {LayerKind::batchnorm, 53},
          {LayerKind::relu, 49},
          {LayerKind::add, 16},
          {LayerKind::pool, 2},
          {LayerKind::fc, 1}}},
        {"mobilenet_v2",
         300e6,
         {{LayerKind::conv, 52},
          {LayerKind::batchnorm, 52},
          {LayerKind::relu, 35},
          {LayerKind::add, 10},
          {LayerKind::pool, 1},
          {LayerKind::fc, 1}}},
    };
    for (const auto& c : cases) {
        INFO(c.name);
        const workload::Workload w = config::read_onnx_model(model(c.name));
        CHECK(w.warnings.empty());
        CHECK(w.shape_check == workload::ShapeCheck::error);  // every producer's shape chains into its consumer
        CHECK(kinds(w) == c.layers);
        CHECK(static_cast<double>(forward_macs(w)) == Approx(c.published_macs).epsilon(0.01));
    }
    // MobileNetV2's 17 depthwise convolutions are grouped, one group per channel.
    const workload::Workload mobilenet = config::read_onnx_model(model("mobilenet_v2"));
    CHECK(std::count_if(mobilenet.layers.begin(), mobilenet.layers.end(), [](const workload::Layer& l) {
              return l.kind == LayerKind::conv && l.groups > 1 && l.groups == l.in_channels && l.groups == l.filters;
          }) == 17);
}

TEST_CASE("ONNX import: a BERT-base encoder block, layer by layer and its MACs by hand", "[onnx]") {
    const workload::Workload w = config::read_onnx_model(model("bert_block"));
    const int t = 128, d = 768, heads = 12, ffn = 3072;
    // Four d x d projections and the two FFN GEMMs per token, and the two attention products per head.
    const std::uint64_t expected =
        std::uint64_t{t} * (4ull * d * d + 2ull * d * ffn) + 2ull * heads * t * t * (d / heads);
    CHECK(forward_macs(w) == expected);
    using V = std::vector<std::string>;
    const std::vector<std::tuple<std::string, LayerKind, V>> layers{
        {"query", LayerKind::fc, {"input"}},
        {"key", LayerKind::fc, {"input"}},
        {"value", LayerKind::fc, {"input"}},
        {"MatMul", LayerKind::matmul, {"query", "key"}},
        {"Softmax", LayerKind::softmax, {"MatMul"}},
        {"MatMul_1", LayerKind::matmul, {"Softmax", "value"}},
        {"attention_out", LayerKind::fc, {"MatMul_1"}},
        {"Add", LayerKind::add, {"input", "attention_out"}},
        {"norm1", LayerKind::layernorm, {"Add"}},
        {"ffn_in", LayerKind::fc, {"norm1"}},
        {"gelu", LayerKind::gelu, {"ffn_in"}},
        {"ffn_out", LayerKind::fc, {"gelu"}},
        {"Add_1", LayerKind::add, {"norm1", "ffn_out"}},
        {"norm2", LayerKind::layernorm, {"Add_1"}},
    };
    REQUIRE(w.layers.size() == layers.size());
    for (std::size_t i = 0; i < layers.size(); ++i) {
        INFO(w.layers[i].name);
        CHECK(std::make_tuple(w.layers[i].name, w.layers[i].kind, w.layers[i].inputs) == layers[i]);
    }
    const auto& scores = w.layers[3];  // Q K^T per head: (t x d/h) (d/h x t), 12 times per sample
    CHECK(std::make_tuple(scores.m, scores.k, scores.n, scores.repeat) == std::make_tuple(t, d / heads, t, heads));
    const auto& softmax = w.layers[4];  // over each row of each head's scores
    CHECK(std::make_tuple(softmax.in_height, softmax.in_width, softmax.in_channels) == std::make_tuple(heads, t, t));
    CHECK(std::make_tuple(w.layers[10].in_width, w.layers[10].in_channels) ==
          std::make_tuple(t, ffn));  // the GELU's tensor
    CHECK(w.layers[9].tokens == t);
}

TEST_CASE("ONNX import: dilation, unequal strides, ceil-mode pooling, concat and a spatial mean", "[onnx]") {
    const workload::Workload w = config::read_onnx_model(model("features"));  // input 31 x 31 x 3
    REQUIRE(w.layers.size() == 8);
    const auto& dilated = w.layers[0];  // 3 x 3 taps 2 apart span 5 positions: (31 + 4 - 5) + 1 = 31
    CHECK(std::make_tuple(dilated.dilation, dilated.out_height(), dilated.out_width()) == std::make_tuple(2, 31, 31));
    const auto& tall =
        w.layers[1];  // 3 x 1 kernel, strides (2, 1), padding 1: (31 + 2 - 3) / 2 + 1 = 16 rows, 33 columns
    CHECK(std::make_tuple(tall.stride, tall.stride_width, tall.out_height(), tall.out_width()) ==
          std::make_tuple(2, 1, 16, 33));
    const auto& pool = w.layers[3];  // 2 x 2, ceil mode: 16 -> 8 rows, 33 -> 17 columns (floor would give 16)
    CHECK(pool.partial_windows);
    CHECK(std::make_tuple(pool.out_height(), pool.out_width()) == std::make_tuple(8, 17));
    CHECK(std::make_tuple(w.layers[5].kind, w.layers[5].in_channels, w.layers[5].inputs) ==
          std::make_tuple(LayerKind::concat, 12, std::vector<std::string>{"pool", "branch"}));
    const auto& mean = w.layers[6];  // x.mean(dim=(2, 3)): a global average pool
    CHECK(std::make_tuple(mean.kind, mean.pool_mode, mean.kernel_height, mean.kernel_width, mean.out_height(),
                          mean.out_width()) ==
          std::make_tuple(LayerKind::pool, workload::PoolMode::average, 8, 17, 1, 1));
    // 31*31*8*27 + 16*33*8*(3*8) + 8*17*4*8 + 12*10 MACs per sample: dilation does not add taps.
    CHECK(forward_macs(w) == 207576u + 101376u + 4352u + 120u);
    CHECK(w.warnings.empty());
}

TEST_CASE("ONNX import: the written trace reads back into the same layers", "[onnx]") {
    // concat_one_input: a Concat of one tensor, a copy of it (not a concat layer, which joins two
    // or more).
    for (const char* name : {"resnet18", "resnet50", "mobilenet_v2", "bert_block", "features", "concat_one_input"}) {
        INFO(name);
        const workload::Workload imported = config::read_onnx_model(model(name));
        const workload::Workload read =
            config::read_trace_text(config::trace_yaml(imported), std::string(name) + ".yaml");
        REQUIRE(read.layers.size() == imported.layers.size());
        for (std::size_t i = 0; i < read.layers.size(); ++i) {
            INFO(imported.layers[i].name);
            CHECK(fields(read, i) == fields(imported, i));
        }
        CHECK(read.name == imported.name);
        CHECK(read.shape_check == imported.shape_check);
    }
}

TEST_CASE("ONNX import: ResNet-50 from PyTorch is the hand-written traces/resnet50.yaml", "[onnx]") {
    const workload::Workload imported = config::read_onnx_model(model("resnet50"));
    const workload::Workload written = config::read_trace(std::string(FASTSIM_SOURCE_DIR) + "/traces/resnet50.yaml");
    REQUIRE(imported.layers.size() == written.layers.size());
    std::vector<decltype(work(imported.layers[0]))> a, b;
    for (const auto& l : imported.layers) a.push_back(work(l));
    for (const auto& l : written.layers) b.push_back(work(l));
    std::sort(a.begin(), a.end());
    std::sort(b.begin(), b.end());
    CHECK(a == b);
}

TEST_CASE("ONNX import: workload.model runs the same training step as the equivalent trace", "[onnx][cli]") {
    // The imported ResNet-50 and the hand-written trace, batch 256 with Adam: the same cycles and energy.
    const auto total = [](const std::string& config) {
        const test::Result r = test::run_fastsim("run " + std::string(FASTSIM_SOURCE_DIR) + "/configs/bench/" + config);
        REQUIRE(r.exit_code == 0);
        std::smatch m;
        REQUIRE(std::regex_search(r.out, m, std::regex("total: ([0-9]+) cycles")));
        return m[1].str();
    };
    CHECK(total("resnet50_onnx_b256.yaml") == total("resnet50_b256.yaml"));
}

TEST_CASE("ONNX import: fastsim import writes the trace and its summary", "[onnx][cli]") {
    test::TempDir dir;
    const std::string out = dir.path("bert.yaml");
    const test::Result r = test::run_fastsim("import " + model("bert_block") + " --out " + out);
    REQUIRE(r.exit_code == 0);
    CHECK_THAT(r.err, Catch::Contains("14 layers (2 add, 6 fc, 1 gelu, 2 layernorm, 2 matmul, 1 softmax); per sample "
                                      "931135488 forward MACs, 7077888 weights"));
    CHECK(config::read_trace(out).layers.size() == 14);
    // Without --out the trace goes to standard output; an existing file is kept unless --force.
    CHECK(test::run_fastsim("import " + model("bert_block")).out == test::slurp(out));
    CHECK(test::run_fastsim("import " + model("resnet18") + " --out " + out).exit_code == 2);
    CHECK(config::read_trace(out).layers.size() == 14);
    CHECK(test::run_fastsim("import " + model("resnet18") + " --out " + out + " --force").exit_code == 0);
    CHECK(config::read_trace(out).layers.size() == 68);
}

TEST_CASE("ONNX import: MobileNetV2's depthwise layers run on every shipped cluster config x planner",
          "[onnx][cluster]") {
    // A depthwise layer after the first once divided by zero on 4 or more nodes (SIGFPE).
    std::vector<std::string> configs;
    for (const auto& entry : std::filesystem::directory_iterator(std::string(FASTSIM_SOURCE_DIR) + "/configs/cluster"))
        if (entry.path().extension() == ".yaml") configs.push_back(entry.path().string());
    std::sort(configs.begin(), configs.end());
    REQUIRE(configs.size() >= 3);
    for (const std::string& path : configs) {
        std::string text = test::slurp(path);
        const std::size_t trace = text.find("\n  trace: ");
        REQUIRE(trace != std::string::npos);
        text.replace(trace, text.find('\n', trace + 1) - trace, "\n  model: " + model("mobilenet_v2"));
        const auto params = config::load_text(text, path);
        for (const planner::PlannerKind kind : planner::kAllPlanners) {
            planner::PlannerOptions options = params.planner.options();
            options.kind = kind;
            INFO(path << ", " << planner::to_string(kind));
            const auto r = run::run_cluster_step_in_fresh_kernel(params, options);
            CHECK(r.step_s > 0);
            CHECK(std::abs(r.planned.plan.step_s - r.step_s) <= 0.05 * r.step_s);
        }
    }
}
