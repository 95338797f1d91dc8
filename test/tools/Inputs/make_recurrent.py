"""Writes OUT/model.onnx and its inputs OUT/input_<i>.pb: recurrent cells
with constant weights, the form the AVX-512 kernels take
(lowering/AVX512/SelectRecurrent.cpp):

- a bidirectional LSTM, batch 8 (a block of 6 rows and a tail of 2), 20
  hidden units (a unit block of 16 and a tail of 4), initial h and c;
- a reverse GRU with linear_before_reset, batch 1 (the K steps split over
  accumulator sets), 18 units, initial h;
- a forward RNN with relu and clip, no bias, whose Y is not an output.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(3)


def uniform(*shape):
    return rng.uniform(-0.5, 0.5, shape).astype(np.float32)


inits = [numpy_helper.from_array(a, n) for n, a in [
    ("lw", uniform(2, 80, 7)), ("lr", uniform(2, 80, 20)),
    ("lb", uniform(2, 160)),
    ("gw", uniform(1, 54, 7)), ("gr", uniform(1, 54, 18)),
    ("gb", uniform(1, 108)),
    ("rw", uniform(1, 5, 7)), ("rr", uniform(1, 5, 5))]]
nodes = [
    helper.make_node("LSTM", ["x", "lw", "lr", "lb", "", "h0", "c0"],
                     ["ly", "lh", "lc"], direction="bidirectional",
                     hidden_size=20),
    helper.make_node("GRU", ["x1", "gw", "gr", "gb", "", "gh0"],
                     ["gy", "gh"], direction="reverse", hidden_size=18,
                     linear_before_reset=1),
    helper.make_node("RNN", ["x1", "rw", "rr"], ["", "rh"], hidden_size=5,
                     activations=["Relu"], clip=0.8),
]
inputs = [("x", [4, 8, 7]), ("x1", [6, 1, 7]), ("h0", [2, 8, 20]),
          ("c0", [2, 8, 20]), ("gh0", [1, 1, 18])]
outputs = [("ly", [4, 2, 8, 20]), ("lh", [2, 8, 20]), ("lc", [2, 8, 20]),
           ("gy", [6, 1, 1, 18]), ("gh", [1, 1, 18]), ("rh", [1, 1, 5])]
info = lambda n, s: helper.make_tensor_value_info(n, TensorProto.FLOAT, s)
graph = helper.make_graph(nodes, "recurrent", [info(*i) for i in inputs],
                          [info(*o) for o in outputs], inits)
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)]),
          os.path.join(out, "model.onnx"))
for i, (n, s) in enumerate(inputs):
    open(os.path.join(out, "input_%d.pb" % i), "wb").write(
        numpy_helper.from_array(uniform(*s) * 2, n).SerializeToString())
