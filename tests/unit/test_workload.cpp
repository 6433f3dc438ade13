// SPDX-License-Identifier: MIT
// Shipped traces against published model sizes, lowering to GEMMs, and trace errors.
#include <catch2/catch.hpp>

#include <algorithm>
#include <array>
#include <cmath>
#include <random>
#include <fstream>
#include <sstream>

#include "bfp/dot.h"
#include "bfp/quantize.h"
#include "common/errors.h"
#include "config/trace_reader.h"
#include "workload/fusion.h"
#include "workload/vector_work.h"
#include "support/temp_dir.h"

using namespace fastsim;
using Catch::Matchers::Contains;

namespace {

workload::Workload shipped(const std::string& name) {
    return config::read_trace(std::string(FASTSIM_SOURCE_DIR) + "/traces/" + name + ".yaml");
}

std::uint64_t weight_count(const workload::Workload& w) {
    std::uint64_t total = 0;
    for (const auto& l : w.layers) {
        if (l.kind == workload::LayerKind::conv)
            total += std::uint64_t(l.kernel_height) * l.kernel_width * (l.in_channels / l.groups) * l.filters;
        if (l.kind == workload::LayerKind::fc) total += std::uint64_t(l.in_features) * l.out_features;
    }
    return total;
}

std::uint64_t forward_macs(const workload::Workload& w, std::size_t batch) {
    std::uint64_t total = 0;
    for (const auto& l : w.layers) total += workload::lower(l, batch).forward_macs();
    return total;
}

std::string error_of(const std::string& name, const std::string& text) {
    test::TempDir dir;
    try {
        config::read_trace(dir.write(name, text));
    } catch (const ConfigError& e) {
        const std::string what = e.what();
        return what.substr(what.find(name));
    }
    FAIL("no error");
    return {};
}

}  // namespace

// Weights = published parameter counts minus biases and BatchNorm (torchvision models;
// AlexNet one tower): ResNet-18 11,689,512 - 9,600 BN - 1,000 bias; ResNet-50 25,557,032 -
// 53,120 - 1,000; ResNet-152 60,192,808 - 151,424 BN - 1,000; VGG-11 132,863,336 - 11,944 biases; VGG-16 138,357,544 - 13,416 biases; AlexNet 62,378,344 - 10,568 biases;
// BERT-base encoder block 4 * 768^2 + 2 * 768 * 3072.
TEST_CASE("shipped traces have the published weight counts", "[workload]") {
    CHECK(weight_count(shipped("resnet18")) == 11678912);
    CHECK(weight_count(shipped("resnet50")) == 25502912);
    CHECK(weight_count(shipped("resnet152")) == 60040384);
    CHECK(weight_count(shipped("vgg11")) == 132851392);
    CHECK(weight_count(shipped("vgg16")) == 138344128);
    CHECK(weight_count(shipped("alexnet")) == 62367776);
    CHECK(weight_count(shipped("bert_base_encoder")) == 7077888);
    // GPT-3 175B (Brown et al. 2020): 96 blocks of 12 d^2 (QKV, output, MLP), the output
    // projection d x vocabulary whose weights are the token embedding's (tied, counted once),
    // and the 2,048 x d position embedding; biases and LayerNorm gains are not counted, so
    // 174.59 B of the paper's 175 B.
    const std::uint64_t d = 12288;
    const auto all_weights = [](const workload::Workload& w) {
        std::uint64_t total = 0;
        for (const workload::Layer& l : w.layers) total += workload::weight_count(l);
        return total;
    };
    CHECK(all_weights(shipped("gpt3_175b")) == 96 * 12 * d * d + d * 50257 + 2048 * d);
    // BERT-base with its masked-LM head: 12 blocks of 4 d^2 + 2 x d x 3072, the word (tied to the
    // decoder), position (512) and token-type (2) tables, the head's d x d transform: 109.36 M
    // against the published 110 M (which counts biases, LayerNorms and the pooler).
    CHECK(all_weights(shipped("bert_base")) ==
          12 * (4 * 768 * 768 + 2 * 768 * 3072) + 30522 * 768 + 512 * 768 + 2 * 768 + 768 * 768);
}

// Published forward multiply-accumulates per 224x224 image (torchvision / fvcore):
// ResNet-18 1.814 G, ResNet-50 4.089 G, ResNet-152 11.51 G, VGG-11 7.609 G, VGG-16 15.47 G.
TEST_CASE("shipped traces have the published forward MACs", "[workload]") {
    CHECK(double(forward_macs(shipped("resnet18"), 1)) == Approx(1.814e9).epsilon(0.01));
    CHECK(double(forward_macs(shipped("resnet50"), 1)) == Approx(4.089e9).epsilon(0.01));
    CHECK(double(forward_macs(shipped("resnet152"), 1)) == Approx(11.51e9).epsilon(0.01));
    CHECK(double(forward_macs(shipped("vgg11"), 1)) == Approx(7.609e9).epsilon(0.01));
    CHECK(double(forward_macs(shipped("vgg16"), 1)) == Approx(15.47e9).epsilon(0.01));
    // MobileNet-v1 1.0 at 224 (Howard et al. 2017, Table 8): 569 M mult-adds, 4.2 M parameters.
    CHECK(double(forward_macs(shipped("mobilenet_v1"), 1)) == Approx(569e6).epsilon(0.01));
    CHECK(double(weight_count(shipped("mobilenet_v1"))) == Approx(4.2e6).epsilon(0.01));
    // GPT-3 175B per sequence of 2,048 tokens: every weight once per token, and per block the
    // attention's two matmuls of 2048 x 2048 x 128 per head.
    const std::uint64_t d = 12288, tokens = 2048;
    CHECK(forward_macs(shipped("gpt3_175b"), 1) ==
          tokens * (96 * 12 * d * d + d * 50257) + 96 * 2 * tokens * tokens * d);
    // Batch scales every GEMM's M (or its count, for matmul) linearly.
    CHECK(forward_macs(shipped("bert_base_encoder"), 8) == 8 * forward_macs(shipped("bert_base_encoder"), 1));
}

TEST_CASE("layers lower to im2col GEMMs", "[workload]") {
    const auto resnet = shipped("resnet18_gemm");
    const auto& conv1 = resnet.layers.front();
    const auto g = workload::lower(conv1, 32);
    CHECK(g.dims.batch == 32u * 112 * 112);
    CHECK(g.dims.in == 7u * 7 * 3);
    CHECK(g.dims.out == 64u);
    const auto bert = shipped("bert_base_encoder_gemm");
    const auto scores = workload::lower(bert.layers[3], 4);
    CHECK(scores.count == 4u * 12);
    CHECK(scores.dims.batch == 128u);
    CHECK(scores.dims.in == 64u);
    CHECK(workload::lower(bert.layers[0], 4).dims.batch == 4u * 128);
    // Joins: the layer after a residual block names both summands' producers.
    CHECK(resnet.layers[4].name == "layer1.1.conv1");
    CHECK(resnet.layers[4].inputs == std::vector<std::string>{"layer1.0.conv2", "maxpool"});
    const auto& avgpool = resnet.layers[resnet.layers.size() - 2];
    CHECK(avgpool.kind == workload::LayerKind::pool);
    CHECK(avgpool.inputs == std::vector<std::string>{"layer4.1.conv2", "layer4.0.conv2"});
    CHECK(bert.layers[6].inputs == std::vector<std::string>{"attention_output", "input"});
    CHECK(bert.layers[7].inputs == std::vector<std::string>{"intermediate"});
}

TEST_CASE("SCALE-Sim topology CSV files are read as SCALE-Sim reads them", "[workload]") {
    test::TempDir dir;
    const auto w = config::read_trace(
        dir.write("net.csv",
                  "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, Strides,\n"
                  "Conv1, 230, 230, 7, 7, 3, 64, 2,\n"
                  "FC1, 1, 1, 1, 1, 2048, 1000, 1, anything after the last comma\n"));
    REQUIRE(w.layers.size() == 2);
    const auto g = workload::lower(w.layers[0], 2);
    // SCALE-Sim's output size counts a last, partial window: ceil((230 - 7 + 2) / 2) = 113.
    CHECK(g.dims.batch == 2u * 113 * 113);
    CHECK(g.dims.in == 147u);
    CHECK(workload::lower(w.layers[1], 2).dims.batch == 2u);
    // A 9th field is the column stride; text after the last comma is ignored, so a row without
    // a trailing comma loses its last field.
    const auto strided = config::read_trace(dir.write("s.csv", "c, 10, 20, 3, 3, 1, 1, 1, 4,\n")).layers[0];
    CHECK(strided.out_height() == 8);
    CHECK(strided.out_width() == 6);  // ceil((20 - 3) / 4) + 1
    CHECK(
        error_of("bad.csv", "Conv1, 230, 230, 7, 7, 3, 64, 2\n") ==
        "bad.csv:1:1: expected 8 comma-separated fields (Layer name, IFMAP Height, IFMAP Width, Filter Height, "
        "Filter Width, Channels, Num Filter, Strides) before the row's last comma, got 7 ('2' after the last comma is "
        "ignored, as SCALE-Sim ignores it: end the row with a comma)");
    // Header spellings of SCALE-Sim's own files; extra header columns may say anything.
    CHECK(config::read_trace(dir.write("h.csv",
                                       "\xEF\xBB\xBFLayer name,Ifmap height,ifmap width,filter height,filter width,"
                                       "channel,num filters,strides,batch size,\nConv1, 230, 230, 7, 7, 3, 64, 2,\n"))
              .layers.size() == 1);
    CHECK(config::read_trace(dir.write("d.csv", "Layer1, 230, 230, 7, 7, 3, 64, 2,\n")).layers.size() == 1);
    CHECK(error_of("bad.csv",
                   "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, "
                   "Strides,\nConv1, 230, x, 7, 7, 3, 64, 2,\n") ==
          "bad.csv:2:1: field 'IFMAP Width': expected an integer from 1 to 16777216, got 'x'");
    // The header rule: a first row that does not name the columns is data, checked as data.
    CHECK(error_of("bad.csv", "Layer name,a,b,c,d,e,f,g,\nConv1, 230, 23, 7, 7, 3, 64, 2,\n") ==
          "bad.csv:1:1: field 'IFMAP Height': expected an integer from 1 to 16777216, got 'a'");
    CHECK(error_of("bad.csv", "conv1, 22a, 224, 7, 7, 3, 64, 2,\nconv2, 112, 112, 3, 3, 64, 64, 1,\n") ==
          "bad.csv:1:1: field 'IFMAP Height': expected an integer from 1 to 16777216, got '22a'");
    CHECK(error_of("bad.csv", "conv1, -224, 224, 7, 7, 3, 64, 2,\n") ==
          "bad.csv:1:1: field 'IFMAP Height': expected an integer from 1 to 16777216, got '-224'");
    CHECK_THAT(error_of("bad.csv", "C, 5, 5, 7, 7, 3, 64, 1,\n"), Contains("bad.csv:1:1: the filter (7x7) is larger"));
    // What SCALE-Sim cannot read: bare commas, tabs, comments, non-integers past the 9th field.
    CHECK_THAT(error_of("bad.csv", ",,,,,,,,\n"), Contains("bad.csv:1:1: field 'IFMAP Height'"));
    CHECK_THAT(error_of("bad.csv", "c\t5\t5\t3\t3\t1\t1\t1\n"), Contains("not tabs"));
    CHECK_THAT(error_of("bad.csv", "# a comment\nc, 5, 5, 3, 3, 1, 1, 1,\n"), Contains("no comment rows"));
    CHECK_THAT(error_of("bad.csv", "c, 5, 5, 3, 3, 1, 1, 1, 1, Eh,\n"), Contains("field 10: expected an integer"));
    CHECK(config::read_trace(dir.write("x.csv", "c, 5, 5, 3, 3, 1, 1, 1, 1, -3, 7,\n")).layers.size() == 1);
}

TEST_CASE("SCALE-Sim's GEMM form, depthwise layers and repeated names", "[workload]") {
    test::TempDir dir;
    // Layer, M, N, K: one M x K times K x N product, not scaled by the batch.
    const auto g = config::read_trace(dir.write("g.csv", "Layer,M,N,K,\nQKT,1024,1024,64,\nFC, 8, 4096, 9216, x,\n"));
    REQUIRE(g.layers.size() == 2);
    CHECK(g.layers[0].kind == workload::LayerKind::gemm);
    const auto qkt = workload::lower(g.layers[0], 16);
    CHECK(qkt.dims.batch == 1024u);
    CHECK(qkt.dims.in == 64u);
    CHECK(qkt.dims.out == 1024u);
    CHECK(qkt.count == 1u);
    CHECK(workload::lower(g.layers[1], 16).forward_macs() == 8u * 9216 * 4096);
    // Without a header, a first row of exactly four fields is the GEMM form.
    CHECK(config::read_trace(dir.write("g2.csv", "fc1, 64, 4096, 9216,\n")).layers[0].kind ==
          workload::LayerKind::gemm);
    // "DP" in the name: one convolution per channel, each with Num Filter filters (as SCALE-Sim
    // runs it), i.e. groups = channels.
    const auto dw = config::read_trace(dir.write("dw.csv", "Conv dw DP, 114, 114, 3, 3, 32, 1,1,\n")).layers[0];
    CHECK(dw.groups == 32);
    const auto dw_gemm = workload::lower(dw, 1);
    CHECK(dw_gemm.count == 32u);
    CHECK(dw_gemm.dims.in == 9u);
    CHECK(dw_gemm.dims.out == 1u);
    CHECK(dw_gemm.forward_macs() == 112u * 112 * 9 * 32);
    // Names: repeats numbered, empty ones by position, 'input' is no reserved name here.
    const auto named = config::read_trace(dir.write("n.csv",
                                                    "a,1,1,1,1,1,1,1,\na,1,1,1,1,1,1,1,\n,1,1,1,1,1,1,1,\n"
                                                    "input,1,1,1,1,1,1,1,\n"));
    REQUIRE(named.layers.size() == 4);
    CHECK(named.layers[1].name == "a#2");
    CHECK(named.layers[2].name == "layer2");
    CHECK(named.layers[3].name == "input#2");
}

TEST_CASE("every topology file SCALE-Sim v2 reads loads with its MACs, the rest are refused", "[workload]") {
    const std::string root = std::string(FASTSIM_SOURCE_DIR) + "/tests/data/scalesim/";
    std::ifstream table(root + "reference.tsv");
    std::string line;
    std::getline(table, line);  // header
    int readable = 0, refused = 0;
    while (std::getline(table, line)) {
        std::istringstream row(line);
        std::string file, form, status;
        std::uint64_t layers = 0, macs = 0;
        REQUIRE(std::getline(row, file, '\t'));
        REQUIRE(std::getline(row, form, '\t'));
        REQUIRE(std::getline(row, status, '\t'));
        REQUIRE(row >> layers >> macs);
        INFO(file << " (SCALE-Sim: " << status << ")");
        const std::string path = root + "topologies/" + file;
        if (status != "ok") {
            CHECK_THROWS_AS(config::read_trace(path), ConfigError);
            ++refused;
            continue;
        }
        const workload::Workload w = config::read_trace(path);
        std::uint64_t scalesim_layers = 0;  // SCALE-Sim runs a depthwise layer as one layer per channel
        for (const auto& l : w.layers)
            scalesim_layers += l.name.find("DP") != std::string::npos ? std::uint64_t(l.groups) : 1u;
        CHECK(scalesim_layers == layers);
        CHECK(forward_macs(w, 1) == macs);
        CHECK((w.layers[0].kind == workload::LayerKind::gemm) == (form == "gemm"));
        ++readable;
    }
    CHECK(readable + refused == 117);  // every .csv of SCALE-Sim v2's topologies/
    CHECK(readable > 80);
    CHECK(refused > 20);
}

TEST_CASE("shape checking: each layer's input is its producers' output", "[workload][shapes]") {
    test::TempDir dir;
    // conv -> conv -> fc reading the flattened tensor -> fc; a per-position fc after a conv;
    // a residual add and a channel concatenation.
    const auto ok = config::read_trace(
        dir.write("ok.yaml",
                  "layers:\n"
                  "  - {name: c1, type: conv, input: [8, 8, 3], kernel: [3, 3], filters: 4, padding: 1}\n"
                  "  - {name: c2, type: conv, input: [8, 8, 4], kernel: [3, 3], filters: 4, padding: 1}\n"
                  "  - {name: c3, type: conv, input: [8, 8, 4], kernel: [1, 1], filters: 4, inputs: [c2, c1]}\n"
                  "  - {name: cat, type: conv, input: [8, 8, 8], kernel: [1, 1], filters: 2, inputs: [c3, c2]}\n"
                  "  - {name: rows, type: fc, tokens: 64, in_features: 2, out_features: 5}\n"
                  "  - {name: flat, type: fc, in_features: 128, out_features: 10, inputs: [cat]}\n"
                  "  - {name: out, type: fc, in_features: 10, out_features: 3}\n"));
    CHECK(ok.warnings.empty());
    // BERT's attention: matmul operands are repeat x m x k and repeat x k x n values.
    CHECK_NOTHROW(shipped("bert_base_encoder"));
    // Shipped traces chain their shapes (their pools are layers); only AccPar's files fold them.
    for (const char* name : {"tiny_cnn", "alexnet", "vgg11", "vgg16", "resnet18", "resnet50", "resnet152",
                             "mobilenet_v1", "bert_base", "bert_base_encoder", "gpt2_xl", "gpt3_6.7b", "gpt3_175b",
                             "alexnet_gemm", "vgg16_gemm", "resnet152_gemm", "mobilenet_v1_gemm", "gpt2_xl_gemm"}) {
        INFO(name);
        const workload::Workload w = shipped(name);
        CHECK(w.shape_check == workload::ShapeCheck::error);
        CHECK(w.warnings.empty());
    }
    // An fc whose input does not match its producer names both layers and both shapes.
    const std::string fc_after_conv =
        "layers:\n"
        "  - {name: conv5, type: conv, input: [13, 13, 256], kernel: [3, 3], filters: 256, padding: 1}\n"
        "  - {name: fc6, type: fc, in_features: 9216, out_features: 4096}\n";
    CHECK_THAT(
        error_of("t.yaml", fc_after_conv),
        Contains("t.yaml:3:5: layers[1]: layer 'fc6': its in_features 9216 (9216 values per sample) does not match "
                 "its producer: 'conv5' gives 13 x 13 x 256 = 43264 values per sample (an fc layer after a "
                 "convolution or pool reads the flattened tensor: in_features = H x W x C); if the trace leaves out "
                 "layers") &&
            Contains("shape_check: warn or off"));
    // Same values, wrong layout: 16 x 4 x 4 is not the 8 x 8 x 4 its producer gives.
    CHECK_THAT(
        error_of("t.yaml",
                 "layers:\n  - {name: a, type: conv, input: [8, 8, 3], kernel: [3, 3], filters: 4, padding: 1}\n"
                 "  - {name: b, type: conv, input: [16, 4, 4], kernel: [1, 1], filters: 4}\n"),
        Contains("layer 'b': its input 16 x 4 x 4 (256 values per sample) does not match its producer: 'a' gives "
                 "8 x 8 x 4 = 256 values per sample"));
    CHECK_THAT(
        error_of("t.yaml",
                 "layers:\n  - {name: a, type: fc, in_features: 4, out_features: 6}\n"
                 "  - {name: b, type: fc, in_features: 4, out_features: 2, inputs: [input]}\n"
                 "  - {name: c, type: fc, in_features: 5, out_features: 2, inputs: [a, b]}\n"),
        Contains("layer 'c': its in_features 5 (5 values per sample) does not match its producers (neither an add nor "
                 "a concatenation of them): 'a' gives 6 values per sample; 'b' gives 2 values per sample"));
    // warn collects the mismatches for the command to print; off skips them.
    const auto warned = config::read_trace(dir.write("w.yaml", "shape_check: warn\n" + fc_after_conv));
    REQUIRE(warned.warnings.size() == 1);
    CHECK_THAT(warned.warnings[0], Contains("w.yaml:4:5: layers[1]: layer 'fc6'"));
    CHECK(config::read_trace(dir.write("o.yaml", "shape_check: off\n" + fc_after_conv)).warnings.empty());
    CHECK_THAT(error_of("t.yaml", "shape_check: maybe\n" + fc_after_conv),
               Contains("shape_check: expected one of error, warn, off"));
}

TEST_CASE("malformed traces are errors with file, line and key path", "[workload]") {
    CHECK(error_of("t.yaml", "layers:\n  - {name: a, type: conv, input: [8, 8, 3], kernel: [3, 3]}\n") ==
          "t.yaml:2:5: layers[0].filters: missing filters (a positive integer)");
    CHECK(error_of("t.yaml", "layers:\n  - {name: a, type: fc, in_features: 4, out_features: 2, filters: 3}\n") ==
          "t.yaml:2:58: layers[0].filters: unknown key 'filters' in layers[0] (expected one of: in_features, inputs, "
          "name, out_features, tokens, type)");
    CHECK_THAT(
        error_of("t.yaml",
                 "layers:\n  - {name: a, type: conv, input: [8, 8, 6], kernel: [3, 3], filters: 4, groups: 3}\n"),
        Contains("layers[0].groups: groups (3) must divide both the input channels (6) and filters (4)"));
    CHECK_THAT(
        error_of("t.yaml",
                 "layers:\n  - {name: a, type: conv, input: [8, 8, 6], kernel: [3, 3], filters: 6, groups: 0}\n"),
        Contains("layers[0].groups"));
    CHECK_THAT(error_of("t.yaml", "layers:\n  - {name: a, type: gemm, m: 4, k: 2}\n"),
               Contains("layers[0].n: missing n"));
    CHECK_THAT(
        error_of("t.yaml", "layers:\n  - {name: a, type: lstm}\n"),
        Contains("t.yaml:2:21: layers[0].type: expected one of conv, fc, matmul, gemm, pool, batchnorm, relu, gelu, "
                 "add, softmax, layernorm, concat, embedding, got 'lstm'"));
    CHECK_THAT(error_of("t.yaml",
                        "layers:\n  - {name: a, type: fc, in_features: 4, out_features: 2}\n"
                        "  - {name: b, type: fc, in_features: 2, out_features: 2, inputs: [c]}\n"),
               Contains("t.yaml:3:5: layers[1]: input 'c' is not the name of an earlier layer"));
    CHECK_THAT(error_of("t.yaml", "layers:\n  - {name: a, type: conv, input: [8, 8], kernel: [3, 3], filters: 4}\n"),
               Contains("layers[0].input: expected input: [height, width, channels], got 2 values"));
    CHECK_THAT(error_of("t.yaml", "layers: []\n"), Contains("layers: expected a non-empty list of layers"));
    CHECK_THAT(error_of("t.txt", "x"), Contains("unknown trace format"));
}

TEST_CASE("A trace's shortcuts key says what a join's later inputs name", "[workload]") {
    test::TempDir dir;
    const std::string layers =
        "layers:\n"
        "  - {name: a, type: fc, in_features: 4, out_features: 4}\n"
        "  - {name: b, type: fc, in_features: 4, out_features: 4}\n"
        "  - {name: c, type: fc, in_features: 4, out_features: 4}\n"
        "  - {name: d, type: fc, in_features: 4, out_features: 4, inputs: [c, b]}\n";
    const auto producer = config::read_trace(dir.write("p.yaml", layers));
    CHECK(producer.shortcuts == workload::ShortcutConvention::producer);
    const auto accpar = config::read_trace(dir.write("a.yaml", "shortcuts: accpar\n" + layers));
    CHECK(accpar.shortcuts == workload::ShortcutConvention::accpar);
    CHECK_THAT(error_of("t.yaml", "shortcuts: block\n" + layers),
               Contains("t.yaml:1:12: shortcuts: expected one of producer, accpar, got 'block'"));
}

namespace {

const std::string kEveryVectorLayer = std::string(FASTSIM_SOURCE_DIR) + "/tests/data/every_vector_layer.yaml";

const workload::Layer& named(const workload::Workload& w, const std::string& name) {
    for (const auto& l : w.layers)
        if (l.name == name) return l;
    FAIL("no layer " << name);
    return w.layers.front();
}

}  // namespace

TEST_CASE("vector-unit layers: shapes from their producers, pools by their windows", "[workload][vector]") {
    const workload::Workload w = config::read_trace(kEveryVectorLayer);
    REQUIRE(w.layers.size() == 14);
    const auto shape = [&](const char* name) { return *workload::output_shape(named(w, name)); };
    CHECK(shape("bn1") == std::array<std::uint64_t, 3>{16, 16, 16});
    CHECK(shape("pool1") == std::array<std::uint64_t, 3>{8, 8, 16});  // floor((16 + 2 - 3) / 2) + 1
    CHECK(shape("add1") == std::array<std::uint64_t, 3>{8, 8, 16});
    CHECK(shape("cat") == std::array<std::uint64_t, 3>{8, 8, 24});  // 8 + 16 channels
    CHECK(shape("gap") == std::array<std::uint64_t, 3>{1, 1, 24});  // stride defaults to the kernel
    CHECK(shape("gelu1") == std::array<std::uint64_t, 3>{1, 1, 32});
    CHECK(shape("sm") == std::array<std::uint64_t, 3>{1, 1, 10});
    for (const auto& l : w.layers)
        if (workload::runs_on_vector_unit(l.kind)) CHECK(workload::lower(l, 4).forward_macs() == 0);
    CHECK(workload::lower(named(w, "relu1"), 4).count == 0);
}

TEST_CASE("the whole-network ResNet traces chain their shapes and have the GEMM traces' MACs and weights",
          "[workload][vector]") {
    for (const char* name : {"resnet18", "resnet50", "resnet152"}) {
        INFO(name);
        const workload::Workload full = shipped(name);
        CHECK(full.shape_check == workload::ShapeCheck::error);  // every layer's input is its producer's output
        CHECK(forward_macs(full, 2) == forward_macs(shipped(std::string(name) + "_gemm"), 2));
        CHECK(weight_count(full) == weight_count(shipped(std::string(name) + "_gemm")));
        std::size_t pools = 0, norms = 0, adds = 0;
        for (const auto& l : full.layers) {
            pools += l.kind == workload::LayerKind::pool;
            norms += l.kind == workload::LayerKind::batchnorm;
            adds += l.kind == workload::LayerKind::add;
        }
        CHECK(pools == 2);  // the max pool after conv1 and the global average pool
        const std::string n = name;
        CHECK(norms == (n == "resnet18" ? 20 : n == "resnet50" ? 53 : 155));  // one per conv
        CHECK(adds == (n == "resnet18" ? 8 : n == "resnet50" ? 16 : 50));     // one per block
    }
}

TEST_CASE("vector work by hand: operations and tensors per layer type and pass", "[workload][vector]") {
    const workload::Workload w = config::read_trace(kEveryVectorLayer);
    const auto fwd = [&](const char* name) { return workload::vector_work(named(w, name), 2, false); };
    const auto bwd = [&](const char* name) { return workload::vector_work(named(w, name), 2, true); };
    constexpr std::uint64_t t = 16 * 16 * 16;  // values of bn1's and relu1's tensor per sample
    // batchnorm: 7 and 9 operations per value, 4 per channel once per batch.
    CHECK(fwd("bn1") == workload::VectorWork{7 * t * 2 + 4 * 16, t * 2, 0, t * 2});
    CHECK(bwd("bn1") == workload::VectorWork{9 * t * 2 + 4 * 16, t * 2, t * 2, t * 2});
    CHECK(fwd("relu1") == workload::VectorWork{t * 2, t * 2, 0, t * 2});
    CHECK(bwd("relu1") == workload::VectorWork{t * 2, t * 2, t * 2, t * 2});
    // max pool 3x3 over 8 x 8 x 16 outputs: 9 compares each; backward 18 (argmax again, then route).
    constexpr std::uint64_t o = 8 * 8 * 16;
    CHECK(fwd("pool1") == workload::VectorWork{9 * o * 2, t * 2, 0, o * 2});
    CHECK(bwd("pool1") == workload::VectorWork{18 * o * 2, t * 2, o * 2, t * 2});
    // average pool 8x8 to 1 x 1 x 24: 64 operations per output; backward reads dy only.
    CHECK(fwd("gap") == workload::VectorWork{64 * 24 * 2, 8 * 8 * 24 * 2, 0, 24 * 2});
    CHECK(bwd("gap") == workload::VectorWork{64 * 24 * 2, 0, 24 * 2, 8 * 8 * 24 * 2});
    // add of two operands: one add per value; nothing backward.
    CHECK(fwd("add1") == workload::VectorWork{o * 2, 2 * o * 2, 0, o * 2});
    CHECK(bwd("add1") == workload::VectorWork{});
    CHECK(fwd("cat") == workload::VectorWork{8 * 8 * 24 * 2, 8 * 8 * 24 * 2, 0, 8 * 8 * 24 * 2});
    CHECK(bwd("cat") == workload::VectorWork{8 * 8 * 24 * 2, 0, 8 * 8 * 24 * 2, 8 * 8 * 24 * 2});
    CHECK(fwd("gelu1") == workload::VectorWork{9 * 32 * 2, 32 * 2, 0, 32 * 2});
    CHECK(bwd("gelu1") == workload::VectorWork{17 * 32 * 2, 32 * 2, 32 * 2, 32 * 2});
    // layernorm and softmax: per row (one row of 32 and of 10 values per sample).
    CHECK(fwd("ln1") == workload::VectorWork{(7 * 32 + 4) * 2, 32 * 2, 0, 32 * 2});
    CHECK(fwd("sm") == workload::VectorWork{(5 * 10 + 1) * 2, 10 * 2, 0, 10 * 2});
    CHECK(bwd("sm") == workload::VectorWork{4 * 10 * 2, 10 * 2, 10 * 2, 10 * 2});
    CHECK_THROWS_AS(workload::vector_work(named(w, "conv1"), 2, false), std::invalid_argument);
}

TEST_CASE("optimiser updates by hand: operations and fp32 tensors per weight", "[workload][vector]") {
    const workload::Workload w = config::read_trace(kEveryVectorLayer);
    const workload::Layer& fc1 = named(w, "fc1");  // 24 x 32 weights
    CHECK(workload::weight_count(fc1) == 768);
    CHECK(workload::weight_count(named(w, "conv2")) == 3 * 3 * 16 * 16);
    CHECK(workload::optimizer_work(fc1, workload::Optimizer::none) == workload::VectorWork{});
    CHECK(workload::optimizer_work(fc1, workload::Optimizer::sgd) ==
          workload::VectorWork{2 * 768, 0, 0, 768, 2 * 768, 768});
    CHECK(workload::optimizer_work(fc1, workload::Optimizer::sgd_momentum) ==
          workload::VectorWork{4 * 768, 0, 0, 768, 3 * 768, 2 * 768});
    CHECK(workload::optimizer_work(fc1, workload::Optimizer::adam) ==
          workload::VectorWork{14 * 768, 0, 0, 768, 4 * 768, 3 * 768});
    CHECK(workload::optimizer_work(named(w, "relu1"), workload::Optimizer::adam) == workload::VectorWork{});
}

TEST_CASE("without its vector-unit layers each is carried by the GEMM layer whose tensor it works on",
          "[workload][vector]") {
    std::vector<std::string> removed;
    const workload::Workload g = workload::without_vector_layers(config::read_trace(kEveryVectorLayer), &removed);
    CHECK(removed == std::vector<std::string>{"bn1", "relu1", "pool1", "add1", "cat", "gap", "gelu1", "ln1", "sm"});
    REQUIRE(g.layers.size() == 5);
    CHECK(g.layers[1].name == "conv2");
    CHECK(g.layers[1].inputs.empty());  // pool1 <- relu1 <- bn1 <- conv1: the previous layer
    CHECK(g.layers[2].name == "conv3");
    CHECK(g.layers[2].inputs == std::vector<std::string>{"conv2", "conv1"});  // the residual add, as a join
    CHECK(g.layers[3].name == "fc1");
    // The concat of conv3 (8 channels) and add1 (16), whose tensor is conv2's: a join does not
    // reach past its operands, and each operand is its part of fc1's input.
    CHECK(g.layers[3].inputs == std::vector<std::string>{"conv3", "conv2"});
    CHECK(g.layers[3].input_shares == std::vector<double>{8.0 / 24, 16.0 / 24});
    CHECK(g.layers[2].input_shares.empty());  // the residual add's operands are whole
    CHECK(g.layers[4].inputs.empty());
    CHECK(g.shape_check == workload::ShapeCheck::off);
    std::vector<std::pair<std::string, std::size_t>> hosts;
    for (const workload::HostedLayer& h : g.hosted) {
        hosts.emplace_back(h.layer.name, h.host);
        CHECK_FALSE(h.on_input);
        CHECK(h.backward);
    }
    CHECK(hosts == std::vector<std::pair<std::string, std::size_t>>{{"bn1", 0},
                                                                    {"relu1", 0},
                                                                    {"pool1", 0},
                                                                    {"add1", 1},
                                                                    {"cat", 2},
                                                                    {"gap", 2},
                                                                    {"gelu1", 3},
                                                                    {"ln1", 3},
                                                                    {"sm", 4}});
    CHECK(g.hosted[3].layer.inputs == std::vector<std::string>{"conv2", "pool1"});  // its operands, for its work
}

TEST_CASE("Vector-unit layers before the first GEMM layer are carried on its input", "[workload][vector]") {
    const workload::Workload g = workload::without_vector_layers(config::read_trace_text(
        "layers:\n  - {name: ln0, type: layernorm, input: [4, 32]}\n  - {name: g0, type: gelu}\n"
        "  - {name: fc1, type: fc, in_features: 32, out_features: 8, tokens: 4}\n"
        "  - {name: r1, type: relu}\n",
        "t.yaml"));
    REQUIRE(g.layers.size() == 1);
    CHECK(g.layers[0].inputs.empty());
    REQUIRE(g.hosted.size() == 3);
    CHECK((g.hosted[0].host == 0 && g.hosted[0].on_input && !g.hosted[0].backward));  // reads the network input
    CHECK((g.hosted[1].host == 0 && g.hosted[1].on_input && g.hosted[1].backward));
    CHECK((g.hosted[2].host == 0 && !g.hosted[2].on_input && g.hosted[2].backward));
}

TEST_CASE("vector-unit layer errors name the layer and what is expected", "[workload][vector]") {
    const std::string conv =
        "layers:\n  - {name: c, type: conv, input: [8, 8, 4], kernel: [3, 3], filters: 4, padding: 1}\n";
    CHECK_THAT(
        error_of("t.yaml", "layers:\n  - {name: r, type: relu}\n"),
        Contains("t.yaml:2:5: layers[0]: layer 'r' reads the network input, whose shape is not known: give its input"));
    CHECK_THAT(error_of("t.yaml", conv + "  - {name: p, type: pool, input: [8, 8, 4], kernel: [2, 2]}\n"),
               Contains("layers[1].mode: missing mode (one of max, average)"));
    CHECK_THAT(error_of("t.yaml", conv + "  - {name: p, type: pool, input: [8, 8, 4], kernel: [2, 2], mode: min}\n"),
               Contains("layers[1].mode: expected one of max, average, got 'min'"));
    CHECK_THAT(error_of("t.yaml",
                        conv + "  - {name: p, type: pool, input: [8, 8, 4], kernel: [2, 2], mode: max, padding: 2}\n"),
               Contains("layers[1].padding: padding (2) must be at most half the kernel"));
    CHECK_THAT(
        error_of("t.yaml", conv + "  - {name: p, type: pool, input: [8, 8, 5], kernel: [2, 2], mode: max}\n"),
        Contains(
            "layer 'p': its input 8 x 8 x 5 (320 values per sample) does not match its producer: 'c' gives 8 x 8 x 4"));
    CHECK_THAT(error_of("t.yaml", conv + "  - {name: a, type: add, inputs: [c]}\n"),
               Contains("layers[1].type: an add layer joins tensors: list two or more producers under inputs"));
    // A layer that reads one tensor is not given a join, whose extra producers it would drop.
    const std::string two_convs = conv +
                                  "  - {name: d, type: conv, input: [8, 8, 4], kernel: [3, 3], filters: 4, "
                                  "padding: 1, inputs: [c]}\n";
    CHECK_THAT(error_of("t.yaml", two_convs + "  - {name: r, type: relu, inputs: [c, d]}\n"),
               Contains("t.yaml:4:35: layers[2].inputs:"));  // at the list
    for (const char* kind : {"relu", "gelu", "layernorm", "batchnorm"})
        CHECK_THAT(error_of("t.yaml", two_convs + "  - {name: r, type: " + kind + ", inputs: [c, d]}\n"),
                   Contains("layers[2].inputs: a " + std::string(kind) +
                            " layer reads one tensor, but inputs lists 2 producers (add them first in an add layer)"));
    CHECK_THAT(error_of("t.yaml", two_convs + "  - {name: s, type: softmax, inputs: [c, d, c]}\n"),
               Contains("layers[2].inputs: a softmax layer reads one tensor, but inputs lists 3 producers"));
    CHECK_THAT(error_of("t.yaml", two_convs + "  - {name: m, type: matmul, m: 8, k: 8, n: 4, inputs: [c, d, c]}\n"),
               Contains("layers[2].inputs: a matmul layer reads two tensors, but inputs lists 3 producers"));
    CHECK_THAT(
        error_of("t.yaml", conv + "  - {name: p, type: pool, input: [8, 8, 4], kernel: [2, 2], mode: max}\n"
                                  "  - {name: j, type: concat, inputs: [c, p]}\n"),
        Contains("concat 'j': 'p' gives 4 x 4 positions, 'c' 8 x 8: a concatenation needs equal height and width"));
    CHECK_THAT(
        error_of("t.yaml", conv + "  - {name: p, type: pool, input: [8, 8, 4], kernel: [2, 2], mode: max}\n"
                                  "  - {name: a, type: add, inputs: [c, p]}\n"),
        Contains("layer 'a': its tensor 8 x 8 x 4 (256 values per sample) does not match its producers (an add needs"));
    CHECK_THAT(
        error_of("t.yaml", conv + "  - {name: n, type: layernorm, input: [1, 2, 3, 4]}\n"),
        Contains(
            "layers[1].input: expected input: [height, width, channels], [positions, channels] or [channels], got 4"));
    CHECK_THAT(error_of("t.yaml", conv + "  - {name: r, type: relu, input: [8, 0, 4]}\n"), Contains("layers[1].input"));
}

TEST_CASE("fusion: relu, gelu and add stream from the layer before them, and outputs no one else needs stay on chip",
          "[workload][fusion]") {
    const workload::Workload w = config::read_trace_text(R"(
layers:
  - {name: conv1, type: conv, input: [8, 8, 4], kernel: [3, 3], filters: 4, padding: 1}
  - {name: bn1, type: batchnorm}
  - {name: relu1, type: relu}
  - {name: conv2, type: conv, input: [8, 8, 4], kernel: [3, 3], filters: 4, padding: 1}
  - {name: add1, type: add, inputs: [relu1, conv2]}
  - {name: relu2, type: relu}
  - {name: fc1, type: fc, in_features: 256, out_features: 32}
  - {name: gelu1, type: gelu}
  - {name: sm, type: softmax}
  - {name: relu3, type: relu}
  - {name: fc2, type: fc, in_features: 32, out_features: 32, inputs: [gelu1]}
  - {name: relu4, type: relu}
  - {name: relu5, type: relu, inputs: [fc2]}
)",
                                                         "fusion.yaml");
    const std::vector<workload::LayerFusion> f = workload::plan_fusion(w);
    const auto streams = [&](std::size_t i) { return f[i].streams_input; };
    const auto kept = [&](std::size_t i) { return !f[i].output_streamed; };
    CHECK(!streams(0));
    CHECK(!streams(1));                // batchnorm: statistics first, not elementwise
    CHECK((streams(2) && !kept(1)));   // relu1 in bn1's pass; bn1's output feeds nothing else
    CHECK(kept(2));                    // relu1's output is read by conv2 and add1
    CHECK((streams(4) && !kept(3)));   // add1 streams conv2 (the layer before it, its second input)
    CHECK((streams(5) && !kept(4)));   // relu2 in add1's pass
    CHECK((streams(7) && kept(6)));    // gelu1 streams fc1, whose output its backward still reads
    CHECK(!streams(8));                // softmax: a row reduction, not elementwise
    CHECK((streams(9) && kept(8)));    // softmax's backward reads its own output
    CHECK(kept(7));                    // gelu1's output is read by fc2 as well as sm
    CHECK((streams(11) && kept(10)));  // relu4 streams fc2, but relu5 reads fc2 too
    CHECK(!streams(12));               // relu5 reads fc2, not the layer before it
}

TEST_CASE("A share of vector work rounds every count up", "[workload][vector]") {
    const workload::VectorWork w{10, 7, 0, 3, 1, 2};
    CHECK(workload::share_of(w, 1, 1) == w);
    CHECK(workload::share_of(w, 1, 3) == workload::VectorWork{4, 3, 0, 1, 1, 1});
    CHECK(workload::share_of(w, 0, 3) == workload::VectorWork{});
    const std::uint64_t big = std::uint64_t{1} << 62;  // big x 3 leaves 64 bits; the share does not
    CHECK(workload::share_of(workload::VectorWork{big, 0, 0, 0, 0, 0}, 3, 4).ops == 3 * (big / 4));
    CHECK_THROWS_AS(workload::share_of(w, 2, 1), std::invalid_argument);
    CHECK_THROWS_AS(workload::share_of(w, 0, 0), std::invalid_argument);
}

namespace {

workload::Layer conv_layer(int hw, int c_in, int filters, int kernel, int stride, int padding, int dilation = 1,
                           int groups = 1) {
    workload::Layer l;
    l.name = "c";
    l.kind = workload::LayerKind::conv;
    l.in_height = l.in_width = hw;
    l.in_channels = c_in;
    l.kernel_height = l.kernel_width = kernel;
    l.filters = filters;
    l.stride = stride;
    l.padding = padding;
    l.dilation = dilation;
    l.groups = groups;
    return l;
}

std::uint64_t macs_of(const std::vector<workload::ShapedGemms>& gemms) {
    std::uint64_t macs = 0;
    for (const auto& g : gemms) macs += g.count * g.shape.m * g.shape.k * g.shape.n;
    return macs;
}

using Shapes = std::vector<std::pair<std::array<std::uint64_t, 3>, std::uint64_t>>;
Shapes shapes_of(const std::vector<workload::ShapedGemms>& gemms) {
    Shapes out;
    for (const auto& g : gemms) out.push_back({{g.shape.m, g.shape.k, g.shape.n}, g.count});
    return out;
}

}  // namespace

TEST_CASE("A transposed backward-data is one GEMM per class of input positions the same taps reach", "[workload]") {
    using workload::BackwardDataLowering;
    const auto bwd = [](const workload::Layer& l, BackwardDataLowering lowering) {
        return workload::phase_gemms(l, 32, fmac::TrainingPhase::backward_data, lowering);
    };
    // 3x3 stride 1 "same": the forward's shape, reduction over 9 taps x 64 filters.
    const workload::Layer same = conv_layer(56, 64, 64, 3, 1, 1);
    CHECK(shapes_of(bwd(same, BackwardDataLowering::transposed)) == Shapes{{{32u * 56 * 56, 9u * 64, 64}, 1}});
    CHECK(shapes_of(bwd(same, BackwardDataLowering::col2im)) == Shapes{{{32u * 56 * 56, 64, 9u * 64}, 1}});
    // 3x3 stride 2 pad 1 over 14x14 (ResNet-18's layer4.0.conv1): per axis, taps 0 and 2 reach
    // the 7 odd positions, tap 1 the 7 even ones; 4 classes, the two of 2 x 1 taps merged.
    const workload::Layer strided = conv_layer(14, 256, 512, 3, 2, 1);
    CHECK(shapes_of(bwd(strided, BackwardDataLowering::transposed)) ==
          Shapes{{{32u * 49, 4u * 512, 256}, 1}, {{32u * 49, 2u * 512, 256}, 2}, {{32u * 49, 512, 256}, 1}});
    CHECK(macs_of(bwd(strided, BackwardDataLowering::transposed)) == workload::lower(strided, 32).forward_macs());
    // 1x1 stride 2: only the even positions are read; the odd ones' gradient is 0 (no GEMM).
    CHECK(shapes_of(bwd(conv_layer(56, 64, 128, 1, 2, 0), BackwardDataLowering::transposed)) ==
          Shapes{{{32u * 28 * 28, 128, 64}, 1}});
    // Kernel 2 at stride 3 over 9: taps reach positions 0 and 1 mod 3 (3 each), never 2 mod 3.
    CHECK(shapes_of(bwd(conv_layer(9, 5, 6, 2, 3, 0), BackwardDataLowering::transposed)) ==
          Shapes{{{32u * 9, 6, 5}, 4}});
    // Groups: per group, C_in / groups columns and filters / groups in the reduction.
    CHECK(shapes_of(bwd(conv_layer(8, 32, 64, 3, 1, 1, 1, 4), BackwardDataLowering::transposed)) ==
          Shapes{{{32u * 64, 9u * 16, 8}, 4}});
    // Not a convolution: both lowerings are the forward's transpose.
    workload::Layer fc;
    fc.kind = workload::LayerKind::fc;
    fc.in_features = 300;
    fc.out_features = 70;
    for (const auto lowering : {BackwardDataLowering::transposed, BackwardDataLowering::col2im})
        CHECK(shapes_of(bwd(fc, lowering)) == Shapes{{{32, 70, 300}, 1}});
}

TEST_CASE("A transposed backward-data's MACs are every (position, tap) pair the stride lines up", "[workload]") {
    // Per axis, brute force: input position i takes tap r when (i + padding - r * dilation) is a
    // multiple of the stride. The GEMMs must multiply exactly those pairs (borders included).
    std::mt19937_64 rng(5);
    std::uniform_int_distribution<int> hw(1, 20), kernel(1, 5), stride(1, 4), padding(0, 3), dilation(1, 3),
        groups(1, 3);
    for (int trial = 0; trial < 300; ++trial) {
        const int g = groups(rng);
        const workload::Layer l =
            conv_layer(hw(rng), 2 * g, 3 * g, kernel(rng), stride(rng), padding(rng), dilation(rng), g);
        if (l.window_height() > l.in_height + 2 * l.padding) continue;  // no window fits: not a valid layer
        std::uint64_t pairs = 0;
        for (int i = 0; i < l.in_height; ++i)
            for (int r = 0; r < l.kernel_height; ++r) pairs += (i + l.padding - r * l.dilation) % l.stride == 0 ? 1 : 0;
        INFO("trial " << trial << ": " << l.in_height << " wide, kernel " << l.kernel_height << " stride " << l.stride
                      << " padding " << l.padding << " dilation " << l.dilation);
        CHECK(macs_of(workload::phase_gemms(l, 2, fmac::TrainingPhase::backward_data,
                                            workload::BackwardDataLowering::transposed)) ==
              2 * pairs * pairs * 2 * 3 * static_cast<std::uint64_t>(g));
    }
}

TEST_CASE("The transposed backward-data GEMMs compute the convolution's input gradient from BFP operands",
          "[workload][bfp]") {
    // A strided, padded, dilated conv: the GEMMs phase_gemms charges, built from ∇O and W (W read
    // per class with its taps as the forward's, channel axes swapped: Y^T row c_in, reduction
    // (tap_h, tap_w, filter)), give ∇A. Operands are BFP of g = 4 along the filters (per position
    // of ∇O, per tap and input channel of W); their products are exact, so bfp::gemm matches a
    // double-precision sum of the dequantised operands to fp32 rounding.
    for (const auto& [stride, dilation] : {std::pair{2, 1}, std::pair{1, 2}, std::pair{3, 1}}) {
        const workload::Layer l = conv_layer(7, 3, 8, 3, stride, 1, dilation);
        const int batch = 2, h = l.in_height, oh = l.out_height(), k = l.kernel_height, c_in = 3, f = 8;
        std::mt19937_64 rng(9);
        std::normal_distribution<float> normal(0.0f, 1.0f);
        std::vector<float> d_out(static_cast<std::size_t>(batch * oh * oh * f)),
            w(static_cast<std::size_t>(k * k * c_in * f));
        for (float& v : d_out) v = normal(rng);
        for (float& v : w) v = normal(rng);
        const bfp::Format format{4, 4, 8, 0, bfp::Overflow::nan};
        bfp::Quantizer q(format, bfp::Rounding::nearest);
        q.quantize_dequantize_rows(d_out.data(), d_out.size() / f, f, d_out.data());  // per position, along filters
        q.quantize_dequantize_rows(w.data(), w.size() / f, f, w.data());              // per tap and channel
        const auto dO = [&](int n, int y, int x, int o) { return d_out[((std::size_t(n) * oh + y) * oh + x) * f + o]; };
        const auto W = [&](int r, int c, int ci, int o) { return w[((std::size_t(r) * k + c) * c_in + ci) * f + o]; };
        // The reference: ∇A[n][i][j][ci] = sum over taps and filters whose window lines up.
        std::vector<double> reference(static_cast<std::size_t>(batch * h * h * c_in), 0.0);
        std::vector<double> magnitude(reference.size(), 0.0);
        for (int n = 0; n < batch; ++n)
            for (int y = 0; y < oh; ++y)
                for (int x = 0; x < oh; ++x)
                    for (int r = 0; r < k; ++r)
                        for (int c = 0; c < k; ++c) {
                            const int i = y * stride + r * dilation - 1, j = x * stride + c * dilation - 1;
                            if (i < 0 || j < 0 || i >= h || j >= h) continue;
                            for (int ci = 0; ci < c_in; ++ci)
                                for (int o = 0; o < f; ++o) {
                                    const std::size_t at = ((std::size_t(n) * h + i) * h + j) * c_in + ci;
                                    reference[at] += double(dO(n, y, x, o)) * double(W(r, c, ci, o));
                                    magnitude[at] += std::abs(double(dO(n, y, x, o)) * double(W(r, c, ci, o)));
                                }
                        }
        // The lowering: per class (residue of i + padding, of j + padding), the positions and taps.
        std::vector<double> lowered(reference.size(), 0.0);
        Shapes built;
        for (int ry = 0; ry < stride; ++ry)
            for (int rx = 0; rx < stride; ++rx) {
                std::vector<int> taps_y, taps_x, rows_y, rows_x;
                for (int r = 0; r < k; ++r) {
                    if (r * dilation % stride == ry) taps_y.push_back(r);
                    if (r * dilation % stride == rx) taps_x.push_back(r);
                }
                for (int i = 0; i < h; ++i) {
                    if ((i + 1) % stride == ry) rows_y.push_back(i);
                    if ((i + 1) % stride == rx) rows_x.push_back(i);
                }
                if (taps_y.empty() || taps_x.empty() || rows_y.empty() || rows_x.empty()) continue;
                const std::size_t m = batch * rows_y.size() * rows_x.size(), kk = taps_y.size() * taps_x.size() * f;
                std::vector<float> x_rows(m * kk, 0.0f), y_rows(std::size_t(c_in) * kk);
                std::size_t row = 0;
                for (int n = 0; n < batch; ++n)
                    for (const int i : rows_y)
                        for (const int j : rows_x) {
                            std::size_t col = 0;
                            for (const int r : taps_y)
                                for (const int c : taps_x)
                                    for (int o = 0; o < f; ++o, ++col) {
                                        const int y = (i + 1 - r * dilation), x = (j + 1 - c * dilation);
                                        if (y < 0 || x < 0 || y % stride || x % stride || y / stride >= oh ||
                                            x / stride >= oh)
                                            continue;  // a zero of the padded, dilated ∇O
                                        x_rows[row * kk + col] = dO(n, y / stride, x / stride, o);
                                    }
                            ++row;
                        }
                for (int ci = 0; ci < c_in; ++ci) {
                    std::size_t col = 0;
                    for (const int r : taps_y)
                        for (const int c : taps_x)
                            for (int o = 0; o < f; ++o, ++col) y_rows[std::size_t(ci) * kk + col] = W(r, c, ci, o);
                }
                const bfp::BfpMatrix xq = bfp::quantize_rows(x_rows.data(), m, kk, kk, 1, q);
                const bfp::BfpMatrix yq = bfp::quantize_rows(y_rows.data(), std::size_t(c_in), kk, kk, 1, q);
                const std::vector<float> product = bfp::gemm(xq, yq);
                row = 0;
                for (int n = 0; n < batch; ++n)
                    for (const int i : rows_y)
                        for (const int j : rows_x) {
                            for (int ci = 0; ci < c_in; ++ci)
                                lowered[((std::size_t(n) * h + i) * h + j) * c_in + ci] =
                                    product[row * std::size_t(c_in) + std::size_t(ci)];
                            ++row;
                        }
                const std::array<std::uint64_t, 3> shape{m, kk, std::uint64_t(c_in)};
                const auto same =
                    std::find_if(built.begin(), built.end(), [&](const auto& e) { return e.first == shape; });
                if (same == built.end())
                    built.push_back({shape, 1});
                else
                    ++same->second;
            }
        INFO("stride " << stride << ", dilation " << dilation);
        Shapes charged = shapes_of(workload::phase_gemms(l, std::size_t(batch), fmac::TrainingPhase::backward_data,
                                                         workload::BackwardDataLowering::transposed));
        std::sort(built.begin(), built.end());
        std::sort(charged.begin(), charged.end());
        CHECK(built == charged);
        for (std::size_t at = 0; at < reference.size(); ++at)
            CHECK(std::abs(lowered[at] - reference[at]) <= 1e-6 * magnitude[at] + 1e-30);
    }
}

TEST_CASE("A col2im reads the im2col-form gradient, adds each value into dA and writes dA", "[workload][vector]") {
    // 3x3 stride 1 pad 1 over 8x8, 4 channels, batch 2: 2 x 64 positions x 36 values gathered,
    // 2 x 64 x 4 written.
    const workload::VectorWork same = workload::col2im_work(conv_layer(8, 4, 6, 3, 1, 1), 2);
    CHECK(same.ops == 2u * 64 * 36);
    CHECK(same.gradient_reads == 2u * 64 * 36);
    CHECK(same.writes == 2u * 64 * 4);
    CHECK(same.activation_reads == 0);
    // A 1x1 stride-1 conv's im2col form is dA itself; a 1x1 stride-2 one scatters into every
    // other position.
    CHECK(workload::col2im_work(conv_layer(8, 4, 6, 1, 1, 0), 2).ops == 0);
    const workload::VectorWork strided = workload::col2im_work(conv_layer(8, 4, 6, 1, 2, 0), 2);
    CHECK(strided.ops == 2u * 16 * 4);
    CHECK(strided.writes == 2u * 64 * 4);
    // Grouped: the gathered values are every group's.
    CHECK(workload::col2im_work(conv_layer(8, 4, 8, 3, 1, 1, 1, 2), 2).ops == 2u * 64 * 36);
}

TEST_CASE("Grouped convolutions' GEMMs pack block-diagonally as many as fill a fold", "[workload]") {
    const fmac::ArrayGeometry array{32, 32, 16};
    using workload::ShapedGemms;
    // A depthwise 3x3 over 64 channels: k = 9 (one group of 16), n = 1; 32 fit a fold.
    const workload::Layer dw = conv_layer(14, 64, 64, 3, 1, 1, 1, 64);
    const auto forward = workload::node_phase_gemms(dw, 2, fmac::TrainingPhase::forward, {}, array);
    REQUIRE(forward.size() == 1);
    CHECK(forward[0] == ShapedGemms{{2u * 196, 32u * 16, 32}, 2, 32, {2u * 196, 9, 1}});
    // 70 channels: two packs of 32 and one of the 6 left.
    const auto seventy =
        workload::node_phase_gemms(conv_layer(14, 70, 70, 3, 1, 1, 1, 70), 2, fmac::TrainingPhase::forward, {}, array);
    CHECK(seventy == std::vector<ShapedGemms>{{{2u * 196, 512, 32}, 2, 32, {2u * 196, 9, 1}},
                                              {{2u * 196, 96, 6}, 1, 6, {2u * 196, 9, 1}}});
    // Grouped with 8 channels and 16 filters a group: k = 72 (5 groups of 16), n = 16: 2 fit.
    CHECK(workload::node_phase_gemms(conv_layer(8, 32, 64, 3, 1, 1, 1, 4), 1, fmac::TrainingPhase::forward, {},
                                     array) == std::vector<ShapedGemms>{{{64, 160, 32}, 2, 2, {64, 72, 16}}});
    // The weight gradient reduces over the batch's positions: one group's k fills the rows.
    const auto wg = workload::node_phase_gemms(dw, 2, fmac::TrainingPhase::weight_gradient, {}, array);
    CHECK(wg == std::vector<ShapedGemms>{{{9, 2u * 196, 1}, 64, 1, {9, 2u * 196, 1}}});
    // per_channel keeps a GEMM per group; vector leaves the layer to the vector unit.
    workload::Lowering per_channel;
    per_channel.depthwise = workload::DepthwiseLowering::per_channel;
    CHECK(workload::node_phase_gemms(dw, 2, fmac::TrainingPhase::forward, per_channel, array) ==
          std::vector<ShapedGemms>{{{2u * 196, 9, 1}, 64, 1, {2u * 196, 9, 1}}});
    workload::Lowering vector;
    vector.depthwise = workload::DepthwiseLowering::vector;
    CHECK(workload::node_phase_gemms(dw, 2, fmac::TrainingPhase::forward, vector, array).empty());
    // An ungrouped conv is never packed.
    CHECK(workload::node_phase_gemms(conv_layer(8, 4, 1, 3, 1, 1), 1, fmac::TrainingPhase::forward, {}, array) ==
          std::vector<ShapedGemms>{{{64, 36, 1}, 1, 1, {64, 36, 1}}});
}

TEST_CASE("A block-diagonal GEMM computes each packed block's GEMM bit for bit", "[workload][bfp]") {
    // Five blocks of 20 x 9 x 3 (k padded to two groups of 8): X side by side along k, Y^T's
    // rows of block b non-zero on b's k only. Each block's columns equal bfp::gemm of the block.
    std::mt19937_64 rng(13);
    std::normal_distribution<float> normal(0.0f, 1.0f);
    const std::size_t blocks = 5, m = 20, k = 9, n = 3, g = 8, padded = 16;
    bfp::Quantizer q({int(g), 4, 8, 0, bfp::Overflow::nan}, bfp::Rounding::nearest);
    std::vector<float> x_all(m * blocks * padded, 0.0f), y_all(blocks * n * blocks * padded, 0.0f);
    std::vector<std::vector<float>> product(blocks);
    for (std::size_t b = 0; b < blocks; ++b) {
        std::vector<float> x(m * k), y(n * k);
        for (float& v : x) v = normal(rng);
        for (float& v : y) v = normal(rng);
        product[b] =
            bfp::gemm(bfp::quantize_rows(x.data(), m, k, k, 1, q), bfp::quantize_rows(y.data(), n, k, k, 1, q));
        for (std::size_t r = 0; r < m; ++r)
            for (std::size_t c = 0; c < k; ++c) x_all[r * blocks * padded + b * padded + c] = x[r * k + c];
        for (std::size_t r = 0; r < n; ++r)
            for (std::size_t c = 0; c < k; ++c) y_all[(b * n + r) * blocks * padded + b * padded + c] = y[r * k + c];
    }
    const std::vector<float> packed =
        bfp::gemm(bfp::quantize_rows(x_all.data(), m, blocks * padded, blocks * padded, 1, q),
                  bfp::quantize_rows(y_all.data(), blocks * n, blocks * padded, blocks * padded, 1, q));
    for (std::size_t b = 0; b < blocks; ++b)
        for (std::size_t r = 0; r < m; ++r)
            for (std::size_t c = 0; c < n; ++c) {
                INFO("block " << b << ", row " << r << ", column " << c);
                CHECK(packed[r * blocks * n + b * n + c] == product[b][r * n + c]);
            }
}

TEST_CASE("An embedding looks up rows of its table: work, weights, tying and its errors", "[workload][vector]") {
    const char* kLm =
        "layers:\n"
        "  - {name: wte, type: embedding, vocab: 1000, features: 64, tokens: 8, tied_to: head}\n"
        "  - {name: wpe, type: embedding, vocab: 8, features: 64, tokens: 8, inputs: [input]}\n"
        "  - {name: sum, type: add, inputs: [wte, wpe]}\n"
        "  - {name: head, type: fc, in_features: 64, out_features: 1000, tokens: 8}\n";
    const workload::Workload w = config::read_trace_text(kLm, "lm.yaml");
    const workload::Layer& wte = named(w, "wte");
    CHECK(workload::output_shape(wte) == std::array<std::uint64_t, 3>{1, 8, 64});
    CHECK(workload::weight_count(wte) == 0);                   // the head's 64 x 1000 weights
    CHECK(workload::weight_count(named(w, "wpe")) == 8 * 64);  // its own table
    constexpr std::uint64_t t = 8 * 64 * 3;                    // values looked up for 3 samples
    // Forward: a copy of each row read from the table. Backward: no dA; dy added into the fp32
    // table gradient (read, add, write).
    CHECK(workload::vector_work(wte, 3, false) == workload::VectorWork{t, t, 0, t});
    CHECK(workload::vector_work(wte, 3, true) == workload::VectorWork{t, 0, t, 0, t, t});
    CHECK(workload::optimizer_work(named(w, "wpe"), workload::Optimizer::sgd) ==
          workload::VectorWork{2 * 512, 0, 0, 512, 2 * 512, 512});
    // Carried by the head on its input, with a backward pass although it reads the network input.
    const workload::Workload g = workload::without_vector_layers(w);
    REQUIRE(g.layers.size() == 1);
    REQUIRE(g.hosted.size() == 3);
    CHECK((g.hosted[0].on_input && g.hosted[0].backward && g.hosted[1].backward));

    std::string text = kLm;
    text.replace(text.find("tied_to: head"), 13, "tied_to: sum");
    CHECK_THAT(error_of("lm.yaml", text),
               Contains("layers[0]: embedding 'wte': tied_to 'sum' must name an fc layer of in_features 64 "
                        "(features) and out_features 1000 (vocab)"));
    CHECK_THAT(error_of("e.yaml",
                        "layers:\n  - {name: f, type: fc, in_features: 4, out_features: 4}\n"
                        "  - {name: e, type: embedding, vocab: 10, features: 4}\n"),
               Contains("layers[1]: embedding 'e' looks up token ids, which are the network input"));
    CHECK_THAT(error_of("e.yaml", "layers:\n  - {name: e, type: embedding, features: 4}\n"),
               Contains("layers[0].vocab: missing vocab"));
}
