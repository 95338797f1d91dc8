"""Writes models for test/tools/blocked-layout.test into argv[1] (the
test takes their references from mlcc's reference executor):

  fire.onnx     SqueezeNet's fire modules: x [1, 8, 15, 15] -> Conv 1x1
                (8->16) + Relu -> [Conv 1x1 (16->32) + Relu, Conv 3x3
                pad 1 (16->48) + Relu] -> Concat
                -> MaxPool 3x3 s2 (ceil) -> [Conv 1x1 (80->16) + Relu, the
                pool itself] -> Concat -> AveragePool 2x2 s2 pad 1 -> Conv
                1x1 (96->20) -> GlobalAveragePool -> Flatten, and the
                second concat's channels as a second output
  fire_b2.onnx  the same with a batch of 2
  fire_odd.onnx the first concat's expand 1x1 with 24 channels, not a
                whole block of 16
  fire_big.onnx fire.onnx on 60 x 60: pools big enough to be split over
                the threads
  dense.onnx    DenseNet's batch norms after concats (dense_block below)
  dense_big.onnx  the same on 60 x 60 with 52 channels (a block's tail):
                batch norms big enough to be split over the threads

with seeded random weights, and an input set for each (data/, data_odd/ and
data_dense/ hold the same one, data_b2/ two images, data_big/ and
data_dense_big/ 60 x 60)."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]


def model(name, batch, first_expand, size=15):
    rng = np.random.default_rng(41)
    inits = []

    def w(n, shape):
        inits.append(numpy_helper.from_array(
            rng.normal(0, 0.4, shape).astype(np.float32), n))
        return n

    def conv(x, y, cout, cin, k, relu=True):
        nodes = [helper.make_node("Conv", [x, w(y + "_w", (cout, cin, k, k)),
                                           w(y + "_b", (cout,))],
                                  [y + "_c" if relu else y], pads=[k // 2] * 4,
                                  name=y)]
        if relu:
            nodes.append(helper.make_node("Relu", [y + "_c"], [y], name=y + "_relu"))
        return nodes

    cat1 = first_expand + 48
    nodes = (conv("x", "squeeze", 16, 8, 1) + conv("squeeze", "e1", first_expand, 16, 1) +
             conv("squeeze", "e3", 48, 16, 3) +
             [helper.make_node("Concat", ["e1", "e3"], ["cat1"], axis=1, name="cat1"),
              helper.make_node("MaxPool", ["cat1"], ["pool1"], kernel_shape=[3, 3],
                               strides=[2, 2], ceil_mode=1, name="pool1")] +
             conv("pool1", "e4", 16, cat1, 1) +
             [helper.make_node("Concat", ["e4", "pool1"], ["cat2"], axis=-3, name="cat2"),
              helper.make_node("AveragePool", ["cat2"], ["pool2"], kernel_shape=[2, 2],
                               strides=[2, 2], pads=[1, 1, 1, 1], name="pool2")] +
             conv("pool2", "head", 20, cat1 + 16, 1, relu=False) +
             [helper.make_node("GlobalAveragePool", ["head"], ["gap"], name="gap"),
              helper.make_node("Flatten", ["gap"], ["y"], name="flatten")])
    graph = helper.make_graph(
        nodes, "fire", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, 8, size, size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [batch, 20]),
         helper.make_tensor_value_info("cat2", TensorProto.FLOAT, None)], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
         os.path.join(out, name))


def dense_block(name, size=15, growth=16):
    """DenseNet's pattern: conv -> [its output, a conv of it (`growth`
    channels)] -> Concat -> BatchNormalization -> Relu -> Conv 1x1 ->
    BatchNormalization (no activation) -> GlobalAveragePool."""
    rng = np.random.default_rng(47)
    inits = []

    def t(n, array):
        inits.append(numpy_helper.from_array(np.asarray(array, np.float32), n))
        return n

    def bn(prefix, c):
        return [t(prefix + "_g", rng.uniform(0.5, 1.5, c)), t(prefix + "_b", rng.normal(0, 0.2, c)),
                t(prefix + "_m", rng.normal(0, 0.3, c)), t(prefix + "_v", rng.uniform(0.5, 2.0, c))]

    nodes = [
        helper.make_node("Conv", ["x", t("w0", rng.normal(0, 0.4, (32, 8, 3, 3)))], ["f0"],
                         pads=[1, 1, 1, 1], name="conv0"),
        helper.make_node("Conv", ["f0", t("w1", rng.normal(0, 0.2, (growth, 32, 3, 3)))], ["f1"],
                         pads=[1, 1, 1, 1], name="conv1"),
        helper.make_node("Concat", ["f0", "f1"], ["cat"], axis=1, name="cat"),
        helper.make_node("BatchNormalization", ["cat"] + bn("bn1", 32 + growth), ["n1"],
                         name="norm1"),
        helper.make_node("Relu", ["n1"], ["r1"], name="relu1"),
        helper.make_node("Conv", ["r1", t("w2", rng.normal(0, 0.2, (32, 32 + growth, 1, 1)))],
                         ["c2"],
                         name="conv2"),
        helper.make_node("Concat", ["c2", "f1"], ["cat2"], axis=1, name="cat2"),
        helper.make_node("BatchNormalization", ["cat2"] + bn("bn2", 32 + growth), ["n2"],
                         epsilon=1e-3,
                         name="norm2"),
        helper.make_node("GlobalAveragePool", ["n2"], ["y"], name="gap"),
    ]
    graph = helper.make_graph(
        nodes, "dense", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, size, size])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 32 + growth, 1, 1]),
         helper.make_tensor_value_info("n2", TensorProto.FLOAT, None)], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
              os.path.join(out, name))


model("fire.onnx", 1, 32)
dense_block("dense.onnx")
dense_block("dense_big.onnx", size=60, growth=20)
model("fire_b2.onnx", 2, 32)
model("fire_odd.onnx", 1, 24)
model("fire_big.onnx", 1, 32, size=60)
rng = np.random.default_rng(43)
for dirs, batch, size in ((("data", "data_odd", "data_dense"), 1, 15),
                          (("data_b2",), 2, 15),
                          (("data_big", "data_dense_big"), 1, 60)):
    x = rng.normal(0, 1, (batch, 8, size, size)).astype(np.float32)
    for d in dirs:
        os.makedirs(os.path.join(out, d), exist_ok=True)
        with open(os.path.join(out, d, "input_0.pb"), "wb") as f:
            f.write(numpy_helper.from_array(x, "x").SerializeToString())
