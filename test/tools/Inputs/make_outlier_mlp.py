"""Writes outlier_mlp.onnx, 8 calibration sets (cal/test_data_set_N) and a
test set (test/) into the folder argv[1]: x [4, 64] -> Linear(64, 96) ->
ReLU -> Linear(96, 10), seeded random weights. Feature 0 of x is 1000
times the others and its weights are tiny: a per-tensor u8 scale spanning
it rounds every other feature to 0, so the first layer's own int8 error is
near 100% while the second layer's is ordinary."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(23)

def const(name, array):
    return numpy_helper.from_array(np.asarray(array, np.float32), name)

w1 = rng.normal(0, 0.15, (64, 96))
w1[0] *= 1e-5
inits = [const("w1", w1), const("b1", rng.normal(0, 0.1, 96)),
         const("w2", rng.normal(0, 0.15, (96, 10))),
         const("b2", rng.normal(0, 0.1, 10))]
nodes = [helper.make_node("MatMul", ["x", "w1"], ["h0"], name="fc1"),
         helper.make_node("Add", ["h0", "b1"], ["h1"]),
         helper.make_node("Relu", ["h1"], ["h"]),
         helper.make_node("MatMul", ["h", "w2"], ["y0"], name="fc2"),
         helper.make_node("Add", ["y0", "b2"], ["y"])]
graph = helper.make_graph(
    nodes, "outlier_mlp",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 64])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 10])], inits)
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
          os.path.join(out, "outlier_mlp.onnx"))
for i in range(9):
    d = (os.path.join(out, "cal", "test_data_set_%d" % i) if i < 8
         else os.path.join(out, "test"))
    os.makedirs(d, exist_ok=True)
    x = rng.normal(0, 1, (4, 64)).astype(np.float32)
    x[:, 0] *= 1000
    with open(os.path.join(d, "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, "x").SerializeToString())
