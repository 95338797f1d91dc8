"""Writes cm.onnx into the folder argv[1]: x [1, 16, 24, 24] -> Conv(16->32,
3x3, pad 1) -> Relu -> Conv(32->32, 3x3, pad 1) -> Relu ->
GlobalAveragePool -> Flatten -> Gemm(32->10), seeded random weights; big
enough that a pool of two threads splits its convs."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(41)

def const(name, array):
    return numpy_helper.from_array(np.asarray(array, np.float32), name)

inits = [const("w1", rng.normal(0, 0.1, (32, 16, 3, 3))), const("b1", rng.normal(0, 0.1, 32)),
         const("w2", rng.normal(0, 0.1, (32, 32, 3, 3))), const("b2", rng.normal(0, 0.1, 32)),
         const("wf", rng.normal(0, 0.3, (10, 32))), const("bf", rng.normal(0, 0.1, 10))]
nodes = [
    helper.make_node("Conv", ["x", "w1", "b1"], ["a"], pads=[1, 1, 1, 1], name="conv1"),
    helper.make_node("Relu", ["a"], ["ra"], name="relu1"),
    helper.make_node("Conv", ["ra", "w2", "b2"], ["c"], pads=[1, 1, 1, 1], name="conv2"),
    helper.make_node("Relu", ["c"], ["rc"], name="relu2"),
    helper.make_node("GlobalAveragePool", ["rc"], ["p"], name="pool"),
    helper.make_node("Flatten", ["p"], ["f"], name="flatten"),
    helper.make_node("Gemm", ["f", "wf", "bf"], ["y"], transB=1, name="fc"),
]
graph = helper.make_graph(
    nodes, "cm", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 16, 24, 24])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 10])], inits)
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
          os.path.join(out, "cm.onnx"))
