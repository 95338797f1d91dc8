"""Writes squeeze-and-excitation blocks for test/tools/se-scale.test into
argv[1], each with an input set (data_<name>/):

  se.onnx      x [1, 8, 64, 64] -> Conv 3x3 p1 (8->32) + Relu -> a;
               a -> GlobalAveragePool -> Conv 1x1 (32->8) + Relu -> Conv 1x1
               (8->32) -> Sigmoid -> s; a * s (node 'se_mul') -> Conv 1x1
               (32->16) -> y.  32 channels: two whole blocks, 512 KiB.
  se_odd.onnx  the same with 24 channels (a block and a half).

with seeded random weights and biases."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]


def se_block(name, c):
    rng = np.random.default_rng(c)
    inits = []

    def w(n, shape):
        inits.append(numpy_helper.from_array(
            rng.standard_normal(shape).astype(np.float32) * 0.3, n))
        return n

    nodes = [
        helper.make_node("Conv", ["x", w("w0", (c, 8, 3, 3)), w("b0", (c,))], ["c0"],
                         pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c0"], ["a"]),
        helper.make_node("GlobalAveragePool", ["a"], ["g"]),
        helper.make_node("Conv", ["g", w("w1", (8, c, 1, 1)), w("b1", (8,))], ["c1"]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", w("w2", (c, 8, 1, 1)), w("b2", (c,))], ["c2"]),
        helper.make_node("Sigmoid", ["c2"], ["s"]),
        helper.make_node("Mul", ["a", "s"], ["m"], name="se_mul"),
        helper.make_node("Conv", ["m", w("w3", (16, c, 1, 1))], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 64, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, 64, 64])], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
              os.path.join(out, name + ".onnx"))
    data = os.path.join(out, "data_" + name)
    os.makedirs(data, exist_ok=True)
    x = rng.standard_normal((1, 8, 64, 64)).astype(np.float32)
    with open(os.path.join(data, "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, "x").SerializeToString())


se_block("se", 32)
se_block("se_odd", 24)
