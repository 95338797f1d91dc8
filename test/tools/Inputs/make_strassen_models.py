"""Writes strassen.onnx into argv[1], with an input set in data/, for
test/tools/strassen.test:

  x [1, 64, 512] -> MatMul (512->1024) + bias, Gelu -> h    (an fc, Strassen)
  h -> MatMul (1024->512) + bias, + x -> y           (its residual, Strassen)
  x2 [64, 768] -> Gemm transB, alpha 0.5, beta 2 (768->640) -> g  (Strassen)
  x -> MatMul (512->48) -> s                       (too narrow: a direct GEMM)
  x3 [1, 65, 512] -> MatMul (512->512) + bias, + x3 -> o   (odd M: padded)

with seeded random weights of scale 1/sqrt(K), so that outputs are of
order 1."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(59)
inits = []


def t(name, shape, scale):
    inits.append(numpy_helper.from_array(
        rng.normal(0, scale, shape).astype(np.float32), name))
    return name


nodes = [
    helper.make_node("MatMul", ["x", t("w1", (512, 1024), 512 ** -0.5)], ["m1"],
                     name="fc1"),
    helper.make_node("Add", ["m1", t("b1", (1024,), 0.5)], ["a1"], name="bias1"),
    helper.make_node("Gelu", ["a1"], ["h"], domain="", name="gelu1"),
    helper.make_node("MatMul", ["h", t("w2", (1024, 512), 1024 ** -0.5)], ["m2"],
                     name="fc2"),
    helper.make_node("Add", ["m2", t("b2", (512,), 0.5)], ["a2"], name="bias2"),
    helper.make_node("Add", ["a2", "x"], ["y"], name="residual2"),
    helper.make_node("Gemm", ["x2", t("w3", (640, 768), 768 ** -0.5),
                              t("b3", (640,), 0.5)], ["g"],
                     transB=1, alpha=0.5, beta=2.0, name="gemm3"),
    helper.make_node("MatMul", ["x", t("w4", (512, 48), 512 ** -0.5)], ["s"],
                     name="narrow4"),
    helper.make_node("MatMul", ["x3", t("w5", (512, 512), 512 ** -0.5)], ["m5"],
                     name="fc5"),
    helper.make_node("Add", ["m5", t("b5", (512,), 0.5)], ["a5"], name="bias5"),
    helper.make_node("Add", ["a5", "x3"], ["o"], name="odd5"),
]
graph = helper.make_graph(
    nodes, "strassen",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64, 512]),
     helper.make_tensor_value_info("x2", TensorProto.FLOAT, [64, 768]),
     helper.make_tensor_value_info("x3", TensorProto.FLOAT, [1, 65, 512])],
    [helper.make_tensor_value_info(n, TensorProto.FLOAT, None)
     for n in ("y", "g", "s", "o")], inits)
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)]),
          os.path.join(out, "strassen.onnx"))
data = os.path.join(out, "data")
os.makedirs(data, exist_ok=True)
for i, (name, shape) in enumerate([("x", (1, 64, 512)), ("x2", (64, 768)),
                                   ("x3", (1, 65, 512))]):
    value = rng.normal(0, 1, shape).astype(np.float32)
    with open(os.path.join(data, f"input_{i}.pb"), "wb") as f:
        f.write(numpy_helper.from_array(value, name).SerializeToString())
