"""Writes qdq_matmul.onnx and its input into the folder argv[1].

The QDQ form of quantised layers, as ONNX Runtime's quantiser writes it:
x -> QuantizeLinear -> DequantizeLinear -> MatMul with a weight behind its
own DequantizeLinear (s8, one scale per output column), then Gemm with
transB = 1 (a Linear layer's weight, per-row scales, axis 0) and a bias,
then a MatMul with a per-tensor u8 weight and a zero point; last the first
weight read by an f32 MatMul of x itself.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(12)
B, M, K, N, N2, N3 = 2, 5, 40, 67, 24, 33

def const(name, array):
    return numpy_helper.from_array(np.asarray(array), name)

def quantize_per_column(w, axis):
    scale = np.abs(w).max(axis=1 - axis) / 127
    q = np.round(w / np.expand_dims(scale, 1 - axis)).astype(np.int8)
    return q, scale.astype(np.float32)

w1, s1 = quantize_per_column(rng.normal(0, 0.2, (K, N)).astype(np.float32), 1)
w2, s2 = quantize_per_column(rng.normal(0, 0.2, (N2, N)).astype(np.float32), 0)
inits = [
    const("x_scale", np.float32(4.0 / 255)), const("x_zero", np.uint8(128)),
    const("w1", w1), const("w1_scale", s1), const("w1_zero", np.zeros(N, np.int8)),
    const("h_scale", np.float32(0.05)), const("h_zero", np.uint8(100)),
    const("w2", w2), const("w2_scale", s2), const("w2_zero", np.zeros(N2, np.int8)),
    const("bias2", rng.normal(0, 1, N2).astype(np.float32)),
    const("w3", rng.integers(0, 256, (N2, N3), dtype=np.uint8)),
    const("w3_scale", np.float32(0.01)), const("w3_zero", np.uint8(131)),
    const("g_scale", np.float32(0.06)), const("g_zero", np.int8(-5)),
]
q, dq = "QuantizeLinear", "DequantizeLinear"
nodes = [
    helper.make_node(q, ["x", "x_scale", "x_zero"], ["xq"]),
    helper.make_node(dq, ["xq", "x_scale", "x_zero"], ["xd"]),
    helper.make_node(dq, ["w1", "w1_scale", "w1_zero"], ["w1d"], axis=1),
    helper.make_node("MatMul", ["xd", "w1d"], ["h"], name="mm1"),
    helper.make_node("Reshape", ["h", "shape2d"], ["h2"]),
    helper.make_node(q, ["h2", "h_scale", "h_zero"], ["hq"]),
    helper.make_node(dq, ["hq", "h_scale", "h_zero"], ["hd2"]),
    helper.make_node(dq, ["w2", "w2_scale", "w2_zero"], ["w2d"], axis=0),
    helper.make_node("Gemm", ["hd2", "w2d", "bias2"], ["g"], transB=1,
                     name="gemm2"),
    helper.make_node(q, ["g", "g_scale", "g_zero"], ["gq"]),
    helper.make_node(dq, ["gq", "g_scale", "g_zero"], ["gd"]),
    helper.make_node(dq, ["w3", "w3_scale", "w3_zero"], ["w3d"]),
    helper.make_node("MatMul", ["gd", "w3d"], ["y"], name="mm3"),
    # x is not dequantised: no int8 kernel; the weight's DequantizeLinear
    # (per column) is computed for the f32 matmul after all.
    helper.make_node("MatMul", ["x", "w1d"], ["z"], name="mm_f32"),
]
inits.append(const("shape2d", np.array([B * M, N], np.int64)))
graph = helper.make_graph(
    nodes, "qdq_matmul",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [B, M, K])],
    [helper.make_tensor_value_info("h", TensorProto.FLOAT, [B, M, N]),
     helper.make_tensor_value_info("g", TensorProto.FLOAT, [B * M, N2]),
     helper.make_tensor_value_info("y", TensorProto.FLOAT, [B * M, N3]),
     helper.make_tensor_value_info("z", TensorProto.FLOAT, [B, M, N])],
    inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.save(model, os.path.join(out, "qdq_matmul.onnx"))
x = rng.uniform(-2, 2, (B, M, K)).astype(np.float32)
with open(os.path.join(out, "input_0.pb"), "wb") as f:
    f.write(numpy_helper.from_array(x, "x").SerializeToString())
