"""Writes winograd.onnx, winograd_b2.onnx (batch 2) and winograd_f4.onnx (a
22x27 image: enough tiles for F(4x4, 3x3)) into argv[1], with an input set
for each (data/, data_b2/, data_f4/), for test/tools/winograd.test:

  x [N, 32, H, W] -> Conv 3x3 pad 1 (32->48) + bias + Relu -> a
  a -> Conv 3x3 pad 1 (48->48) + bias, + a, Relu -> b   (a residual block)
  b -> Conv 3x3 pads (0, 1, 2, 1) (48->35) -> y        (odd channels, pads)
  x -> Conv 3x3 pad 1 (32->8) -> s                     (too few channels)

and winograd_5x5.onnx, with data_5x5/, for F(2x2, 5x5):

  x [1, 32, 12, 13] -> Conv 5x5 pad 2 (32->40) + bias + Relu -> a
  a -> Conv 5x5 pads (1, 0, 3, 4) (40->24) -> y          (asymmetric pads)
  a -> Conv 5x5 stride 2 pad 2 (40->16) -> s            (stays direct)

with seeded random weights."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]


def save(name, graph_name, seed, nodes_of, batch, h, w):
    """The model nodes_of(t) makes, t(name, shape, scale) adding a seeded
    random initializer: x [batch, 32, h, w] in, y and s out."""
    rng = np.random.default_rng(seed)
    inits = []

    def t(n, shape, scale):
        inits.append(numpy_helper.from_array(
            rng.normal(0, scale, shape).astype(np.float32), n))
        return n

    graph = helper.make_graph(
        nodes_of(t), graph_name,
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 32, h, w])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("s", TensorProto.FLOAT, None)], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
              os.path.join(out, name))


def model(name, batch, h, w):
    save(name, "winograd", 53, lambda t: [
        helper.make_node("Conv", ["x", t("w1", (48, 32, 3, 3), 0.1), t("b1", (48,), 0.1)],
                         ["c1"], pads=[1, 1, 1, 1], name="conv1"),
        helper.make_node("Relu", ["c1"], ["a"], name="relu1"),
        helper.make_node("Conv", ["a", t("w2", (48, 48, 3, 3), 0.08), t("b2", (48,), 0.1)],
                         ["c2"], pads=[1, 1, 1, 1], name="conv2"),
        helper.make_node("Add", ["c2", "a"], ["s2"], name="add2"),
        helper.make_node("Relu", ["s2"], ["b"], name="relu2"),
        helper.make_node("Conv", ["b", t("w3", (35, 48, 3, 3), 0.08)], ["y"],
                         pads=[0, 1, 2, 1], name="conv3"),
        helper.make_node("Conv", ["x", t("w4", (8, 32, 3, 3), 0.1)], ["s"],
                         pads=[1, 1, 1, 1], name="conv4"),
    ], batch, h, w)


def model_5x5(name, batch, h, w):
    save(name, "winograd_5x5", 61, lambda t: [
        helper.make_node("Conv", ["x", t("w1", (40, 32, 5, 5), 0.05), t("b1", (40,), 0.1)],
                         ["c1"], pads=[2, 2, 2, 2], name="conv1"),
        helper.make_node("Relu", ["c1"], ["a"], name="relu1"),
        helper.make_node("Conv", ["a", t("w2", (24, 40, 5, 5), 0.05)], ["y"],
                         pads=[1, 0, 3, 4], name="conv2"),
        helper.make_node("Conv", ["a", t("w3", (16, 40, 5, 5), 0.05)], ["s"],
                         pads=[2, 2, 2, 2], strides=[2, 2], name="conv3"),
    ], batch, h, w)


SETS = ((model, "winograd.onnx", "data", 1, 9, 11),
        (model, "winograd_b2.onnx", "data_b2", 2, 9, 11),
        (model, "winograd_f4.onnx", "data_f4", 1, 22, 27),
        (model_5x5, "winograd_5x5.onnx", "data_5x5", 1, 12, 13))
rng = np.random.default_rng(59)
for make, name, d, batch, h, w in SETS:
    make(name, batch, h, w)
    os.makedirs(os.path.join(out, d), exist_ok=True)
    x = rng.normal(0, 1, (batch, 32, h, w)).astype(np.float32)
    with open(os.path.join(out, d, "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, "x").SerializeToString())
