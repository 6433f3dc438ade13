#!/usr/bin/python3
"""Exports the ONNX models of tests/data/onnx/ (docs/onnx.md): torchvision's ResNet-18,
ResNet-50 and MobileNetV2 at 224 x 224, and one BERT-base encoder block (128 tokens, 768 wide,
12 heads, 3072 FFN), each for batch 1 in training mode (batch norms stay), opset 17.

Architecture only: the weights go to an external-data file that is deleted, so each .onnx holds
the graph and the initializers' shapes (small shape tensors stay inline) and is a few tens of KB.
fastsim's importer never reads weights. Needs Debian's python3-torch, python3-torchvision and
python3-onnx; run with Debian's interpreter:

    /usr/bin/python3 scripts/export_onnx.py [OUT_DIR]          # default: tests/data/onnx
    /usr/bin/python3 scripts/export_onnx.py --bad [OUT_DIR]    # models to refuse: tests/bad_inputs/files/onnx
"""
import math
import os
import sys
import tempfile

import onnx
import torch
import torchvision
from torch import nn


class BertBlock(nn.Module):
    """One post-norm transformer encoder block as BERT-base has it."""

    def __init__(self, tokens=128, width=768, heads=12, ffn=3072):
        super().__init__()
        self.tokens, self.width, self.heads = tokens, width, heads
        self.query, self.key, self.value = nn.Linear(width, width), nn.Linear(width, width), nn.Linear(width, width)
        self.attention_out = nn.Linear(width, width)
        self.norm1 = nn.LayerNorm(width)
        self.ffn_in, self.ffn_out = nn.Linear(width, ffn), nn.Linear(ffn, width)
        self.gelu = nn.GELU()
        self.norm2 = nn.LayerNorm(width)

    def forward(self, x):
        t, h, d = self.tokens, self.heads, self.width // self.heads
        q = self.query(x).reshape(1, t, h, d).transpose(1, 2)      # [1, h, t, d]
        k = self.key(x).reshape(1, t, h, d).permute(0, 2, 3, 1)    # [1, h, d, t]
        v = self.value(x).reshape(1, t, h, d).transpose(1, 2)      # [1, h, t, d]
        scores = torch.softmax(torch.matmul(q, k) / math.sqrt(d), dim=-1)
        context = torch.matmul(scores, v).transpose(1, 2).reshape(1, t, self.width)
        x = self.norm1(x + self.attention_out(context))
        return self.norm2(x + self.ffn_out(self.gelu(self.ffn_in(x))))


class Features(nn.Module):
    """A small net of the attributes the torchvision models lack: a dilated convolution,
    unequal strides, a ceil-mode pool, a channel concatenation and a mean over H and W."""

    def __init__(self):
        super().__init__()
        self.dilated = nn.Conv2d(3, 8, 3, padding=2, dilation=2)
        self.tall = nn.Conv2d(8, 8, (3, 1), stride=(2, 1), padding=1)
        self.pool = nn.MaxPool2d(2, ceil_mode=True)
        self.branch = nn.Conv2d(8, 4, 1)
        self.head = nn.Linear(12, 10)

    def forward(self, x):
        x = self.pool(torch.relu(self.tall(self.dilated(x))))
        x = torch.cat([x, self.branch(x)], dim=1)
        return self.head(x.mean(dim=(2, 3)))


MODELS = {
    "resnet18": (lambda: torchvision.models.resnet18(weights=None), (1, 3, 224, 224)),
    "resnet50": (lambda: torchvision.models.resnet50(weights=None), (1, 3, 224, 224)),
    "mobilenet_v2": (lambda: torchvision.models.mobilenet_v2(weights=None), (1, 3, 224, 224)),
    "bert_block": (BertBlock, (1, 128, 768)),
    "features": (Features, (1, 3, 31, 31)),
}


def export(name, out_dir):
    make, shape = MODELS[name]
    model = make().train()
    with tempfile.TemporaryDirectory() as tmp:
        full = os.path.join(tmp, name + ".onnx")
        torch.onnx.export(model, torch.zeros(*shape), full, opset_version=17, input_names=["input"],
                          training=torch.onnx.TrainingMode.TRAINING, do_constant_folding=False)
        graph = onnx.load(full)
        path = os.path.join(out_dir, name + ".onnx")
        onnx.save_model(graph, path, save_as_external_data=True, all_tensors_to_one_file=True,
                        location=name + ".weights", size_threshold=256)
        os.remove(os.path.join(out_dir, name + ".weights"))
    print(f"{path}: {os.path.getsize(path)} bytes")


def bad_models(out_dir):
    """Small graphs fastsim must refuse, each for one reason (tests/bad_inputs/cases.tsv)."""
    from onnx import TensorProto, helper

    def conv_graph(name, extra_nodes, x_shape=(1, 3, 8, 8), pads=(1, 1, 1, 1), inputs=None, outputs=("y",)):
        weight = helper.make_tensor("w", TensorProto.FLOAT, [4, 3, 3, 3], [0.0] * 108)
        nodes = [helper.make_node("Conv", ["x", "w"], ["c"], name="conv", pads=list(pads))] + extra_nodes
        graph_inputs = inputs or [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x_shape))]
        graph_outputs = [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs]
        graph = helper.make_graph(nodes, name, graph_inputs, graph_outputs, initializer=[weight])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
        onnx.save_model(model, os.path.join(out_dir, name + ".onnx"))

    conv_graph("sigmoid", [helper.make_node("Sigmoid", ["c"], ["y"], name="gate")])
    conv_graph("asymmetric_pads", [helper.make_node("Relu", ["c"], ["y"], name="relu")], pads=(0, 0, 1, 1))
    conv_graph("dynamic_size", [helper.make_node("Relu", ["c"], ["y"], name="relu")], x_shape=("N", 3, "H", "W"))
    conv_graph("gating_mul", [helper.make_node("Relu", ["c"], ["r"], name="relu"),
                              helper.make_node("Mul", ["c", "r"], ["y"], name="gate")])
    conv_graph("two_inputs", [helper.make_node("Relu", ["c"], ["y"], name="relu")],
               inputs=[helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8]),
                       helper.make_tensor_value_info("mask", TensorProto.FLOAT, [1, 4, 8, 8])])
    # Sizes within 2^24 each whose GEMM reduction (kh * kw * C = 2^60) times its rows overflows 64 bits.
    huge = 1 << 20
    model = helper.make_model(helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["y"], name="huge")], "huge_conv",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, huge, huge, huge]),
         helper.make_tensor_value_info("w", TensorProto.FLOAT, [16, huge, huge, huge])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)]), opset_imports=[helper.make_opsetid("", 17)])
    model.graph.input.pop()  # w: an initializer's shape without its data
    model.graph.initializer.append(onnx.TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[16, huge, huge, huge],
                                                    data_location=TensorProto.EXTERNAL))
    onnx.save_model(model, os.path.join(out_dir, "huge_conv.onnx"))
    conv_graph("one_operand_add", [helper.make_node("Add", ["c"], ["y"], name="sum")])
    # Two nodes writing one tensor (not static single assignment).
    conv_graph("two_writers", [helper.make_node("Relu", ["c"], ["r"], name="relu"),
                               helper.make_node("Mul", ["c", "r"], ["r"], name="gate")])
    # Convolutions without kernel_shape: a 4-D weight on a 3-D input (ONNX 1.12's shape inference
    # reads past the input's sizes), and a weight whose shape is known only after inference.
    for name, x_shape, weight_of in (("conv_rank_mismatch", [1, 3, 8], "w"), ("conv_kernel_unknown", [1, 3, 8, 8], "v")):
        model = helper.make_model(helper.make_graph(
            [helper.make_node("Identity", ["w"], ["v"], name="view"),
             helper.make_node("Conv", ["x", weight_of], ["y"], name="conv")], name,
            [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
            [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
            initializer=[helper.make_tensor("w", TensorProto.FLOAT, [4, 3, 3, 3], [0.0] * 108)]),
            opset_imports=[helper.make_opsetid("", 17)])
        onnx.save_model(model, os.path.join(out_dir, name + ".onnx"))
    with open(os.path.join(out_dir, "truncated.onnx"), "wb") as f:
        f.write(onnx.load(os.path.join(out_dir, "sigmoid.onnx")).SerializeToString()[:40])


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--bad":
        out_dir = sys.argv[2] if len(sys.argv) > 2 else os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                                     "..", "tests", "bad_inputs", "files", "onnx")
        os.makedirs(out_dir, exist_ok=True)
        return bad_models(out_dir)
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                                 "..", "tests", "data", "onnx")
    os.makedirs(out_dir, exist_ok=True)
    torch.manual_seed(0)
    for name in MODELS:
        export(name, out_dir)


if __name__ == "__main__":
    main()
