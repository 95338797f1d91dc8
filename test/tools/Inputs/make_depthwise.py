"""Writes OUT/model.onnx (a depthwise 3x3 conv over 40 channels, stride 2,
bias, then a dense 1x1 conv to 24 channels) and OUT/input_0.pb: 40 and 24
channels are 3 and 2 blocks of 16 with narrower last blocks, so a threaded
run splits both convs into a full-block kernel and a tail kernel."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(0)
wd = rng.standard_normal((40, 1, 3, 3)).astype(np.float32)
bd = rng.standard_normal(40).astype(np.float32)
w1 = rng.standard_normal((24, 40, 1, 1)).astype(np.float32)
nodes = [helper.make_node("Conv", ["x", "wd", "bd"], ["d"], group=40,
                          kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2]),
         helper.make_node("Relu", ["d"], ["r"]),
         helper.make_node("Conv", ["r", "w1"], ["y"], kernel_shape=[1, 1])]
graph = helper.make_graph(
    nodes, "depthwise",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 40, 9, 11])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 24, 5, 6])],
    [numpy_helper.from_array(wd, "wd"), numpy_helper.from_array(bd, "bd"),
     numpy_helper.from_array(w1, "w1")])
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
          os.path.join(out, "model.onnx"))
x = rng.standard_normal((1, 40, 9, 11)).astype(np.float32)
open(os.path.join(out, "input_0.pb"), "wb").write(
    numpy_helper.from_array(x, "x").SerializeToString())
