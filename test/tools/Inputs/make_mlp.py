"""Writes mlp.onnx, 8 calibration sets (cal/test_data_set_N) and one test
set (test/) into the folder argv[1]: x [4, 64] -> Linear(64, 96) -> ReLU
-> Linear(96, 10), seeded random weights, inputs from one distribution.
mlp_batch.onnx is the same model with a symbolic batch, x [batch, 64]."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(21)

def const(name, array):
    return numpy_helper.from_array(np.asarray(array, np.float32), name)

inits = [const("w1", rng.normal(0, 0.15, (64, 96))),
         const("b1", rng.normal(0, 0.1, 96)),
         const("w2", rng.normal(0, 0.15, (96, 10))),
         const("b2", rng.normal(0, 0.1, 10))]
nodes = [helper.make_node("MatMul", ["x", "w1"], ["h0"], name="fc1"),
         helper.make_node("Add", ["h0", "b1"], ["h1"]),
         helper.make_node("Relu", ["h1"], ["h"]),
         helper.make_node("MatMul", ["h", "w2"], ["y0"], name="fc2"),
         helper.make_node("Add", ["y0", "b2"], ["y"])]
graph = helper.make_graph(
    nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 64])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 10])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.save(model, os.path.join(out, "mlp.onnx"))
for value in list(model.graph.input) + list(model.graph.output):
    value.type.tensor_type.shape.dim[0].dim_param = "batch"
onnx.save(model, os.path.join(out, "mlp_batch.onnx"))
for i in range(9):
    d = os.path.join(out, "cal", "test_data_set_%d" % i) if i < 8 else os.path.join(out, "test")
    os.makedirs(d, exist_ok=True)
    x = rng.normal(0, 1, (4, 64)).astype(np.float32)
    with open(os.path.join(d, "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, "x").SerializeToString())
