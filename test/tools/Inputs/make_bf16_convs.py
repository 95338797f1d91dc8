"""Writes bf16_convs.onnx and its input into the folder argv[1]: f32 convs
of every kind the bf16 path takes, on a 20-channel input (read in NCHW16c,
12 padding lanes) and a 3-channel one (gathered from NCHW): a dilated 3x3
conv + ReLU, then a 1x1 conv (read in place) + that conv's output as a
residual + ReLU; a 3x3 stride-2 conv with pads; a 3-channel 5x5 stem conv.
Seeded random weights scaled so outputs are of order 1."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(37)
C, H, W = 20, 9, 11

def const(name, array):
    return numpy_helper.from_array(np.asarray(array, np.float32), name)

def weight(oc, c, k):
    return rng.normal(0, 1.0 / np.sqrt(c * k * k), (oc, c, k, k))

inits = [const("w1", weight(C, C, 3)), const("b1", rng.normal(0, 0.1, C)),
         const("w2", weight(C, C, 1)), const("w3", weight(24, C, 3)),
         const("ws", weight(16, 3, 5)), const("bs", rng.normal(0, 0.1, 16))]
nodes = [
    helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], dilations=[2, 2],
                     pads=[2, 2, 2, 2], name="conv3x3"),
    helper.make_node("Relu", ["c1"], ["h"]),
    helper.make_node("Conv", ["h", "w2"], ["c2"], name="conv1x1"),
    helper.make_node("Add", ["c2", "h"], ["s"]),
    helper.make_node("Relu", ["s"], ["y"]),
    helper.make_node("Conv", ["x", "w3"], ["y2"], strides=[2, 2],
                     pads=[1, 0, 1, 1], name="strided"),
    helper.make_node("Conv", ["img", "ws", "bs"], ["y3"], pads=[2, 2, 2, 2],
                     name="stem"),
]
graph = helper.make_graph(
    nodes, "bf16_convs",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, C, H, W]),
     helper.make_tensor_value_info("img", TensorProto.FLOAT, [1, 3, 12, 12])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
     helper.make_tensor_value_info("y2", TensorProto.FLOAT, None),
     helper.make_tensor_value_info("y3", TensorProto.FLOAT, None)],
    inits)
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
          os.path.join(out, "bf16_convs.onnx"))
for i, (name, shape) in enumerate((("x", (2, C, H, W)), ("img", (1, 3, 12, 12)))):
    with open(os.path.join(out, "input_%d.pb" % i), "wb") as f:
        f.write(numpy_helper.from_array(rng.normal(0, 1, shape).astype(np.float32),
                                        name).SerializeToString())
