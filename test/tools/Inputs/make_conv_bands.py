"""Writes OUT/model.onnx and OUT/input_0.pb for conv-bands.test: convs with
few output channel blocks and 23 output rows, which threads split by bands
of rows (2 rows each, so 12 bands, the last of 1 row):

  x [1, 3, 46, 70] -> Conv 7x7 s2 p3 (3->32) + Relu -> a   (a stem on the
                                                          plain input)
  a -> depthwise Conv 3x3 p1 (32) -> b
  b -> Conv 1x1 (32->40) -> c                              (a channel tail)
  a -> Conv 1x1 (32->40) -> r
  Relu(c + r) -> y                                         (a residual)
  a -> Conv 1x1 (32->256) + Relu -> z                      (8 chunks of two
                                   channel blocks, but bands read fewer bytes)

with seeded random weights and biases."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(7)


def weight(name, shape):
    return numpy_helper.from_array(
        rng.standard_normal(shape).astype(np.float32) * 0.3, name)


inits = [weight("ws", (32, 3, 7, 7)), weight("bs", (32,)),
         weight("wd", (32, 1, 3, 3)), weight("bd", (32,)),
         weight("wc", (40, 32, 1, 1)), weight("wr", (40, 32, 1, 1)),
         weight("br", (40,)), weight("wz", (256, 32, 1, 1)),
         weight("bz", (256,))]
nodes = [
    helper.make_node("Conv", ["x", "ws", "bs"], ["s"], kernel_shape=[7, 7],
                     strides=[2, 2], pads=[3, 3, 3, 3]),
    helper.make_node("Relu", ["s"], ["a"]),
    helper.make_node("Conv", ["a", "wd", "bd"], ["b"], group=32,
                     kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
    helper.make_node("Conv", ["b", "wc"], ["c"], kernel_shape=[1, 1]),
    helper.make_node("Conv", ["a", "wr", "br"], ["r"], kernel_shape=[1, 1]),
    helper.make_node("Add", ["c", "r"], ["sum"]),
    helper.make_node("Relu", ["sum"], ["y"]),
    helper.make_node("Conv", ["a", "wz", "bz"], ["zc"], kernel_shape=[1, 1]),
    helper.make_node("Relu", ["zc"], ["z"]),
]
graph = helper.make_graph(
    nodes, "bands",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 46, 70])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 40, 23, 35]),
     helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, 256, 23, 35])],
    inits)
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
          os.path.join(out, "model.onnx"))
x = rng.standard_normal((1, 3, 46, 70)).astype(np.float32)
open(os.path.join(out, "input_0.pb"), "wb").write(
    numpy_helper.from_array(x, "x").SerializeToString())
