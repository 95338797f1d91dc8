"""Writes quant_conv.onnx and its input into the folder argv[1].

Quantised convs with constant weights: QLinearConv (u8 in and out, s8
weight per output channel, int32 bias, stride 2, pads), ConvInteger (u8 x
u8 with zero points, dilation 2), and the QDQ form of conv + residual add +
ReLU (one fused_conv after the pipeline) with a 1x1 conv beside it. Those
read a 5-channel input from NCHW; the second input has 20 channels, so the
same kinds of conv read it channel-blocked (NCHW16c, 12 padding lanes):
QuantizeLinear of the f32 input, QLinearConv (3x3, stride 2) and a 1x1
ConvInteger (read in place, weight zero point 133) on it, and a QDQ chain:
a dilated 3x3 conv + ReLU, quantised again in the blocked layout, into a
1x1 conv with that conv's output as its residual.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(31)
C, H, W, OC = 5, 9, 11, 20
C2 = 20

def const(name, array):
    return numpy_helper.from_array(np.asarray(array), name)

wq = rng.integers(-127, 128, (OC, C, 3, 3), dtype=np.int8)
inits = [
    const("xs", np.float32(0.03)), const("xz", np.uint8(118)),
    const("wq", wq), const("ws", rng.uniform(0.002, 0.01, OC).astype(np.float32)),
    const("wz", np.zeros(OC, np.int8)),
    const("ys", np.float32(0.04)), const("yz", np.uint8(131)),
    const("bias_i32", rng.integers(-300, 300, OC).astype(np.int32)),
    const("wu", rng.integers(0, 256, (OC, C, 3, 3), dtype=np.uint8)),
    const("xz2", np.uint8(7)), const("wz2", np.uint8(133)),
    const("fz", np.uint8(128)),
    const("bias_f", rng.normal(0, 0.5, OC).astype(np.float32)),
    const("w1", rng.integers(-127, 128, (OC, C, 1, 1), dtype=np.int8)),
    const("w1s", np.float32(0.01)), const("w1z", np.int8(0)),
    # The 20-channel part.
    const("as", np.float32(0.05)), const("az", np.uint8(128)),
    const("w20", rng.integers(-127, 128, (OC, C2, 3, 3), dtype=np.int8)),
    const("w20s", rng.uniform(0.002, 0.01, OC).astype(np.float32)),
    const("w20z", np.zeros(OC, np.int8)),
    const("wu20", rng.integers(0, 256, (24, C2, 1, 1), dtype=np.uint8)),
    const("w3", rng.integers(-127, 128, (C2, C2, 3, 3), dtype=np.int8)),
    const("w3s", np.float32(0.004)), const("w3z", np.int8(0)),
    const("bias3", rng.normal(0, 0.5, C2).astype(np.float32)),
    const("hs", np.float32(0.03)), const("hz", np.uint8(0)),
    const("w4", rng.integers(-127, 128, (C2, C2, 1, 1), dtype=np.int8)),
    const("w4s", rng.uniform(0.002, 0.01, C2).astype(np.float32)),
    const("w4z", np.zeros(C2, np.int8)),
]
q, dq = "QuantizeLinear", "DequantizeLinear"
nodes = [
    helper.make_node("QLinearConv", ["x", "xs", "xz", "wq", "ws", "wz", "ys",
                                     "yz", "bias_i32"], ["y_q"],
                     strides=[2, 2], pads=[1, 0, 1, 2], name="qconv"),
    helper.make_node("ConvInteger", ["x", "wu", "xz2", "wz2"], ["y_int"],
                     dilations=[2, 2], pads=[2, 2, 2, 2], name="iconv"),
    helper.make_node(dq, ["x", "xs", "fz"], ["xd"]),
    helper.make_node(dq, ["wq", "ws", "wz"], ["wd"], axis=0),
    helper.make_node("Conv", ["xd", "wd", "bias_f"], ["c"], pads=[1, 1, 1, 1],
                     name="dqconv"),
    helper.make_node(dq, ["w1", "w1s", "w1z"], ["w1d"]),
    helper.make_node("Conv", ["xd", "w1d"], ["r"], name="dqconv1x1"),
    helper.make_node("Add", ["c", "r"], ["s"]),
    helper.make_node("Relu", ["s"], ["y_f"]),
    helper.make_node(q, ["xf", "as", "az"], ["aq"]),
    helper.make_node("QLinearConv", ["aq", "as", "az", "w20", "w20s", "w20z",
                                     "ys", "yz", "bias_i32"], ["y2_q"],
                     strides=[2, 2], pads=[1, 1, 0, 1], name="qconv20"),
    helper.make_node("ConvInteger", ["aq", "wu20", "az", "wz2"], ["y2_int"],
                     name="iconv20"),
    helper.make_node(dq, ["aq", "as", "az"], ["ad"]),
    helper.make_node(dq, ["w3", "w3s", "w3z"], ["w3d"]),
    helper.make_node("Conv", ["ad", "w3d", "bias3"], ["c3"],
                     dilations=[2, 2], pads=[2, 2, 2, 2], name="dqconv20"),
    helper.make_node("Relu", ["c3"], ["h"]),
    helper.make_node(q, ["h", "hs", "hz"], ["hq"]),
    helper.make_node(dq, ["hq", "hs", "hz"], ["hd"]),
    helper.make_node(dq, ["w4", "w4s", "w4z"], ["w4d"], axis=0),
    helper.make_node("Conv", ["hd", "w4d"], ["c4"], name="dqconv20_1x1"),
    helper.make_node("Add", ["c4", "h"], ["s2"]),
    helper.make_node("Relu", ["s2"], ["y2_f"]),
]
graph = helper.make_graph(
    nodes, "quant_conv",
    [helper.make_tensor_value_info("x", TensorProto.UINT8, [2, C, H, W]),
     helper.make_tensor_value_info("xf", TensorProto.FLOAT, [2, C2, H, W])],
    [helper.make_tensor_value_info("y_q", TensorProto.UINT8, None),
     helper.make_tensor_value_info("y_int", TensorProto.INT32, None),
     helper.make_tensor_value_info("y_f", TensorProto.FLOAT, None),
     helper.make_tensor_value_info("y2_q", TensorProto.UINT8, None),
     helper.make_tensor_value_info("y2_int", TensorProto.INT32, None),
     helper.make_tensor_value_info("y2_f", TensorProto.FLOAT, None)],
    inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.save(model, os.path.join(out, "quant_conv.onnx"))
x = rng.integers(0, 256, (2, C, H, W), dtype=np.uint8)
with open(os.path.join(out, "input_0.pb"), "wb") as f:
    f.write(numpy_helper.from_array(x, "x").SerializeToString())
xf = rng.normal(0, 2, (2, C2, H, W)).astype(np.float32)
with open(os.path.join(out, "input_1.pb"), "wb") as f:
    f.write(numpy_helper.from_array(xf, "xf").SerializeToString())
