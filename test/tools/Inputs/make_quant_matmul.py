"""Writes quant_matmul.onnx and its inputs into the folder argv[1].

Three quantised matmuls with constant weights, as a QDQ exporter leaves
them: MatMulInteger (u8 A x u8 B, zero points on both: the kernel's row-sum
path), QLinearMatMul with an s8 B quantised per output column (u8 in and
out), and QLinearMatMul with s8 A and s8 out. Sizes cross the kernel's
tails (K = 37, N = 70 over four vectors and a masked one).
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(11)
M, K, N = 6, 37, 70

def const(name, array):
    return numpy_helper.from_array(np.asarray(array), name)

inits = [
    const("b_u8", rng.integers(0, 256, (K, N), dtype=np.uint8)),
    const("za", np.uint8(121)),
    const("zb", np.uint8(97)),
    const("a_scale", np.float32(0.02)),
    const("a_zero", np.uint8(128)),
    const("b_s8", rng.integers(-127, 128, (K, N), dtype=np.int8)),
    const("b_scale", rng.uniform(0.001, 0.01, N).astype(np.float32)),
    const("b_zero", np.zeros(N, np.int8)),
    const("y_scale", np.float32(0.05)),
    const("y_zero", np.uint8(120)),
    const("as_scale", np.float32(0.03)),
    const("as_zero", np.int8(-3)),
    const("ys_scale", np.float32(0.08)),
    const("ys_zero", np.int8(4)),
]
nodes = [
    helper.make_node("MatMulInteger", ["a", "b_u8", "za", "zb"], ["y_int"],
                     name="mmi"),
    helper.make_node("QLinearMatMul", ["a", "a_scale", "a_zero", "b_s8",
                                       "b_scale", "b_zero", "y_scale",
                                       "y_zero"], ["y_u8"], name="qmm"),
    helper.make_node("QLinearMatMul", ["as", "as_scale", "as_zero", "b_s8",
                                       "b_scale", "b_zero", "ys_scale",
                                       "ys_zero"], ["y_s8"], name="qmm_s8"),
]
graph = helper.make_graph(
    nodes, "quant_matmul",
    [helper.make_tensor_value_info("a", TensorProto.UINT8, [2, M, K]),
     helper.make_tensor_value_info("as", TensorProto.INT8, [M, K])],
    [helper.make_tensor_value_info("y_int", TensorProto.INT32, [2, M, N]),
     helper.make_tensor_value_info("y_u8", TensorProto.UINT8, [2, M, N]),
     helper.make_tensor_value_info("y_s8", TensorProto.INT8, [M, N])],
    inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.save(model, os.path.join(out, "quant_matmul.onnx"))
for i, (name, array) in enumerate(
        [("a", rng.integers(0, 256, (2, M, K), dtype=np.uint8)),
         ("as", rng.integers(-128, 128, (M, K), dtype=np.int8))]):
    with open(os.path.join(out, "input_%d.pb" % i), "wb") as f:
        f.write(numpy_helper.from_array(array, name).SerializeToString())
