"""Writes the models of weights-limit.test into the folder argv[1]:
weights.onnx, a 1 MiB initializer and a 1 MiB Constant added to x;
typed_short.onnx, an initializer whose dims claim 2^33 floats with one
float_data value (must be refused before 32 GiB is allocated)."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
f = TensorProto.FLOAT
n = 1 << 18  # floats: 1 MiB
x = helper.make_tensor_value_info("x", f, [n])
y = helper.make_tensor_value_info("y", f, [n])
w = numpy_helper.from_array(np.full(n, 0.5, np.float32), "w")
c = numpy_helper.from_array(np.full(n, 2.0, np.float32), "c_value")
nodes = [helper.make_node("Constant", [], ["c"], name="const", value=c),
         helper.make_node("Add", ["x", "w"], ["t"], name="add_w"),
         helper.make_node("Add", ["t", "c"], ["y"], name="add_c")]
graph = helper.make_graph(nodes, "weights", [x], [y], [w])
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
          os.path.join(out, "weights.onnx"))

short = onnx.TensorProto()
short.name = "big"
short.data_type = f
short.dims.append(1 << 33)
short.float_data.append(1.0)
x1 = helper.make_tensor_value_info("x", f, [1])
graph = helper.make_graph([helper.make_node("Add", ["x", "x"], ["y"], name="add")],
                          "typed_short", [x1],
                          [helper.make_tensor_value_info("y", f, [1])], [short])
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
          os.path.join(out, "typed_short.onnx"))
