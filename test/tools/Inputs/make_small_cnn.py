"""Writes cnn.onnx (opset 13), cnn_opset11.onnx (the same graph at opset
11), cnn_listed.onnx (its initializers also listed as graph inputs, as
models of IR version 3 do), 8 calibration sets (cal/test_data_set_N) and a test set (test/) into
the folder argv[1]: x [2, 3, 10, 10] -> Conv(3->16, 3x3, pad 1) ->
BatchNormalization -> Relu -> Conv(16->8, 1x1) -> BatchNormalization ->
GlobalAveragePool -> Flatten -> Gemm(8->4, transB), seeded random weights
and batch-norm statistics."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(29)

def const(name, array):
    return numpy_helper.from_array(np.asarray(array, np.float32), name)

def bn(prefix, c):
    return [const(prefix + "_g", rng.uniform(0.5, 1.5, c)),
            const(prefix + "_b", rng.normal(0, 0.1, c)),
            const(prefix + "_m", rng.normal(0, 0.2, c)),
            const(prefix + "_v", rng.uniform(0.5, 2.0, c))]

inits = ([const("w1", rng.normal(0, 0.3, (16, 3, 3, 3))),
          const("c1", rng.normal(0, 0.1, 16))] + bn("bn1", 16) +
         [const("w2", rng.normal(0, 0.3, (8, 16, 1, 1)))] + bn("bn2", 8) +
         [const("wf", rng.normal(0, 0.3, (4, 8))), const("bf", rng.normal(0, 0.1, 4))])
nodes = [
    helper.make_node("Conv", ["x", "w1", "c1"], ["a"], pads=[1, 1, 1, 1], name="conv1"),
    helper.make_node("BatchNormalization", ["a", "bn1_g", "bn1_b", "bn1_m", "bn1_v"], ["b"],
                     name="bn1"),
    helper.make_node("Relu", ["b"], ["r"], name="relu1"),
    helper.make_node("Conv", ["r", "w2"], ["c"], name="conv2"),
    helper.make_node("BatchNormalization", ["c", "bn2_g", "bn2_b", "bn2_m", "bn2_v"], ["d"],
                     name="bn2"),
    helper.make_node("GlobalAveragePool", ["d"], ["p"], name="pool"),
    helper.make_node("Flatten", ["p"], ["f"], name="flatten"),
    helper.make_node("Gemm", ["f", "wf", "bf"], ["y"], transB=1, name="fc"),
]
graph = helper.make_graph(
    nodes, "cnn", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 10, 10])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])], inits)
for name, opset in (("cnn.onnx", 13), ("cnn_opset11.onnx", 11)):
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]),
              os.path.join(out, name))
listed = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
for init in inits:
    listed.graph.input.append(helper.make_tensor_value_info(
        init.name, TensorProto.FLOAT, list(init.dims)))
onnx.save(listed, os.path.join(out, "cnn_listed.onnx"))
for i in range(9):
    d = (os.path.join(out, "cal", "test_data_set_%d" % i) if i < 8
         else os.path.join(out, "test"))
    os.makedirs(d, exist_ok=True)
    x = rng.normal(0, 1, (2, 3, 10, 10)).astype(np.float32)
    with open(os.path.join(d, "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, "x").SerializeToString())
