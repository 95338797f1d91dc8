"""Writes qdq_activation_matmul.onnx and its inputs into the folder argv[1].

Matmuls of two activations in QDQ form, as ONNX Runtime's quantiser writes
a transformer's attention: scores = DQ(Q(q)) x DQ(Q(k^T)), batched over
[B, H] with u8 sides and zero points; probs = softmax(scores), quantised
(u8, scale 1/255) and multiplied by DQ(Q(v)) (s8, symmetric); and a 2-D
product whose computed B is quantised per column (axis 1, s8 with zero
points), behind a 3-D A.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(31)
B, H, S, D = 2, 3, 21, 16
M, K, N = 7, 37, 45

def const(name, array):
    return numpy_helper.from_array(np.asarray(array), name)

inits = [
    const("q_scale", np.float32(6.0 / 255)), const("q_zero", np.uint8(120)),
    const("k_scale", np.float32(5.0 / 255)), const("k_zero", np.uint8(131)),
    const("p_scale", np.float32(1.0 / 255)), const("p_zero", np.uint8(0)),
    const("v_scale", np.float32(3.0 / 127)), const("v_zero", np.int8(0)),
    const("x_scale", np.float32(4.0 / 255)), const("x_zero", np.uint8(128)),
    const("w_scale", rng.uniform(0.01, 0.03, N).astype(np.float32)),
    const("w_zero", rng.integers(-6, 7, N).astype(np.int8)),
]
q, dq = "QuantizeLinear", "DequantizeLinear"
nodes = [
    helper.make_node(q, ["q", "q_scale", "q_zero"], ["qq"]),
    helper.make_node(dq, ["qq", "q_scale", "q_zero"], ["qd"]),
    helper.make_node("Transpose", ["k"], ["kt"], perm=[0, 1, 3, 2]),
    helper.make_node(q, ["kt", "k_scale", "k_zero"], ["ktq"]),
    helper.make_node(dq, ["ktq", "k_scale", "k_zero"], ["ktd"]),
    helper.make_node("MatMul", ["qd", "ktd"], ["scores"], name="qk"),
    helper.make_node("Softmax", ["scores"], ["probs"], axis=-1),
    helper.make_node(q, ["probs", "p_scale", "p_zero"], ["pq"]),
    helper.make_node(dq, ["pq", "p_scale", "p_zero"], ["pd"]),
    helper.make_node(q, ["v", "v_scale", "v_zero"], ["vq"]),
    helper.make_node(dq, ["vq", "v_scale", "v_zero"], ["vd"]),
    helper.make_node("MatMul", ["pd", "vd"], ["context"], name="pv"),
    helper.make_node(q, ["x", "x_scale", "x_zero"], ["xq"]),
    helper.make_node(dq, ["xq", "x_scale", "x_zero"], ["xd"]),
    helper.make_node(q, ["w", "w_scale", "w_zero"], ["wq"], axis=1),
    helper.make_node(dq, ["wq", "w_scale", "w_zero"], ["wd"], axis=1),
    helper.make_node("MatMul", ["xd", "wd"], ["y"], name="xw"),
]
f32 = TensorProto.FLOAT
graph = helper.make_graph(
    nodes, "qdq_activation_matmul",
    [helper.make_tensor_value_info("q", f32, [B, H, S, D]),
     helper.make_tensor_value_info("k", f32, [B, H, S, D]),
     helper.make_tensor_value_info("v", f32, [B, H, S, D]),
     helper.make_tensor_value_info("x", f32, [B, M, K]),
     helper.make_tensor_value_info("w", f32, [K, N])],
    [helper.make_tensor_value_info("scores", f32, [B, H, S, S]),
     helper.make_tensor_value_info("context", f32, [B, H, S, D]),
     helper.make_tensor_value_info("y", f32, [B, M, N])],
    inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.save(model, os.path.join(out, "qdq_activation_matmul.onnx"))
inputs = {
    "q": rng.uniform(-3, 3, (B, H, S, D)),
    "k": rng.uniform(-2.5, 2.5, (B, H, S, D)),
    "v": rng.uniform(-3, 3, (B, H, S, D)),
    "x": rng.uniform(-2, 2, (B, M, K)),
    "w": rng.uniform(-0.5, 0.5, (K, N)),
}
for i, (name, value) in enumerate(inputs.items()):
    with open(os.path.join(out, "input_%d.pb" % i), "wb") as f:
        f.write(numpy_helper.from_array(value.astype(np.float32),
                                        name).SerializeToString())
