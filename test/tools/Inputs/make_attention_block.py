"""Writes attention.onnx, 8 calibration sets (cal/test_data_set_N) and one
test set (test/) into the folder argv[1]: one BERT-style self-attention
block (Q, K, V projections, 2 heads of 16, scores / 4 plus a [1, 1, 1, S]
mask, softmax, context, output projection) in the form
mlcc-fuse-attention fuses, seeded random weights."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(41)
S, H, D = 12, 2, 16
E = H * D

def const(name, array, dtype=np.float32):
    return numpy_helper.from_array(np.asarray(array, dtype), name)

inits = [const("split", [1, S, H, D], np.int64),
         const("merge", [1, S, E], np.int64),
         const("four", 4.0)]
nodes = []
for p in "qkv":
    inits += [const("w" + p, rng.normal(0, 0.25, (E, E))),
              const("b" + p, rng.normal(0, 0.1, E))]
    nodes += [helper.make_node("MatMul", ["x", "w" + p], [p + "0"], name=p + "_proj"),
              helper.make_node("Add", [p + "0", "b" + p], [p]),
              helper.make_node("Reshape", [p, "split"], [p + "4"])]
inits += [const("wo", rng.normal(0, 0.2, (E, E)))]
nodes += [
    helper.make_node("Transpose", ["q4"], ["qh"], perm=[0, 2, 1, 3]),
    helper.make_node("Transpose", ["k4"], ["kh"], perm=[0, 2, 3, 1]),
    helper.make_node("Transpose", ["v4"], ["vh"], perm=[0, 2, 1, 3]),
    helper.make_node("MatMul", ["qh", "kh"], ["s0"], name="scores"),
    helper.make_node("Div", ["s0", "four"], ["s1"]),
    helper.make_node("Add", ["s1", "mask"], ["s2"]),
    helper.make_node("Softmax", ["s2"], ["probs"], axis=-1),
    helper.make_node("MatMul", ["probs", "vh"], ["c0"], name="context"),
    helper.make_node("Transpose", ["c0"], ["c1"], perm=[0, 2, 1, 3]),
    helper.make_node("Reshape", ["c1", "merge"], ["c"], name="attention"),
    helper.make_node("MatMul", ["c", "wo"], ["y"], name="out_proj"),
]
f32 = TensorProto.FLOAT
graph = helper.make_graph(
    nodes, "attention",
    [helper.make_tensor_value_info("x", f32, [1, S, E]),
     helper.make_tensor_value_info("mask", f32, [1, 1, 1, S])],
    [helper.make_tensor_value_info("y", f32, [1, S, E])], inits)
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
          os.path.join(out, "attention.onnx"))
for i in range(9):
    d = os.path.join(out, "cal", "test_data_set_%d" % i) if i < 8 else os.path.join(out, "test")
    os.makedirs(d, exist_ok=True)
    x = rng.normal(0, 1, (1, S, E)).astype(np.float32)
    mask = np.zeros((1, 1, 1, S), np.float32)
    mask[..., S - 1 - i % 3:] = -10000.0  # the padded tail of a shorter one
    for j, (name, value) in enumerate([("x", x), ("mask", mask)]):
        with open(os.path.join(d, "input_%d.pb" % j), "wb") as f:
            f.write(numpy_helper.from_array(value, name).SerializeToString())
