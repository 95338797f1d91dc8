"""Writes models whose declared or computed shapes overflow int64, or ask
for terabytes, into the folder argv[1] (test/compiler/Import/shape-limits.test):
a name per case, <name>.onnx, and in data/ an input x = [1.0]."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]

def save(name, nodes, inputs, outputs, inits=()):
    graph = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]),
              os.path.join(out, name + ".onnx"))

def i64(name, values):
    return numpy_helper.from_array(np.asarray(values, np.int64), name)

f = TensorProto.FLOAT
x1 = helper.make_tensor_value_info("x", f, [1])
y = helper.make_tensor_value_info("y", f, None)
# The shape's product overflows int64.
save("constant_of_shape_overflow",
     [helper.make_node("ConstantOfShape", ["s"], ["c"], name="fill"),
      helper.make_node("Add", ["x", "c"], ["y"], name="add")],
     [x1], [y], [i64("s", [1 << 21, 1 << 21, 1 << 22])])
# 2^40 floats: 4 TiB, no overflow.
save("constant_of_shape_huge",
     [helper.make_node("ConstantOfShape", ["s"], ["c"], name="fill"),
      helper.make_node("Add", ["x", "c"], ["y"], name="add")],
     [x1], [y], [i64("s", [1 << 20, 1 << 20])])
save("input_overflow", [helper.make_node("Relu", ["x"], ["y"], name="relu")],
     [helper.make_tensor_value_info("x", f, [1 << 32, 1 << 32])], [y])
save("input_huge", [helper.make_node("Relu", ["x"], ["y"], name="relu")],
     [helper.make_tensor_value_info("x", f, [1 << 20, 1 << 20])], [y])
save("expand_overflow", [helper.make_node("Expand", ["x", "s"], ["y"], name="expand")],
     [x1], [y], [i64("s", [1 << 31, 1 << 31, 4])])
save("tile_overflow", [helper.make_node("Tile", ["x", "r"], ["y"], name="tile")],
     [helper.make_tensor_value_info("x", f, [1 << 20])], [y], [i64("r", [1 << 50])])
save("range_huge", [helper.make_node("Range", ["a", "b", "d"], ["r"], name="range"),
                    helper.make_node("Cast", ["r"], ["rf"], to=f, name="cast"),
                    helper.make_node("Add", ["x", "rf"], ["y"], name="add")],
     [x1], [y], [numpy_helper.from_array(np.asarray(0, np.int64), "a"),
                 numpy_helper.from_array(np.asarray(1 << 40, np.int64), "b"),
                 numpy_helper.from_array(np.asarray(1, np.int64), "d")])
save("reshape_overflow", [helper.make_node("Reshape", ["x", "s"], ["y"], name="reshape")],
     [helper.make_tensor_value_info("x", f, [4])], [y], [i64("s", [1 << 62, 1 << 62, -1])])
# Shape operands of unknown values whose length, the result's rank, is 2^40
# (the importer allocated a vector of 2^40 dims for the result's type).
s_huge = helper.make_tensor_value_info("s", TensorProto.INT64, [1 << 40])
save("reshape_rank_huge", [helper.make_node("Reshape", ["x", "s"], ["y"], name="reshape")],
     [x1, s_huge], [y])
save("unsqueeze_rank_huge", [helper.make_node("Unsqueeze", ["x", "s"], ["y"], name="unsqueeze")],
     [x1, s_huge], [y])
save("expand_rank_huge", [helper.make_node("Expand", ["x", "s"], ["y"], name="expand")],
     [x1, s_huge], [y])
# Slice's starts of unknown values, 2^40 of them for 2 ends (compiling it
# looped over the 2^40 before).
save("slice_starts_huge",
     [helper.make_node("Slice", ["x", "s", "e"], ["y"], name="slice")], [x1, s_huge], [y],
     [i64("e", [1, 1])])
save("constant_of_shape_rank_huge",
     [helper.make_node("ConstantOfShape", ["s"], ["y"], name="fill")], [s_huge], [y])
save("input_negative", [helper.make_node("Relu", ["x"], ["y"], name="relu")],
     [helper.make_tensor_value_info("x", f, [-3])], [y])
# limit - start overflows.
save("range_overflow", [helper.make_node("Range", ["a", "b", "d"], ["y"], name="range")],
     [], [helper.make_tensor_value_info("y", TensorProto.INT64, None)],
     [numpy_helper.from_array(np.asarray(-(1 << 62) * 2, np.int64), "a"),
      numpy_helper.from_array(np.asarray(1 << 62, np.int64), "b"),
      numpy_helper.from_array(np.asarray(1, np.int64), "d")])
save("resize_overflow",
     [helper.make_node("Resize", ["x", "", "s"], ["y"], mode="nearest", name="resize")],
     [helper.make_tensor_value_info("x", f, [1, 1, 2, 2])], [y],
     [numpy_helper.from_array(np.asarray([1, 1, 1e30, 1], np.float32), "s")])
save("conv_transpose_overflow",
     [helper.make_node("ConvTranspose", ["x", "w"], ["y"], strides=[1 << 62], name="deconv")],
     [helper.make_tensor_value_info("x", f, [1, 1, 4])], [y],
     [numpy_helper.from_array(np.ones((1, 1, 1), np.float32), "w")])
save("depth_to_space_overflow",
     [helper.make_node("DepthToSpace", ["x"], ["y"], blocksize=1 << 32, name="d2s")],
     [helper.make_tensor_value_info("x", f, [1, 4, 1, 1])], [y])
# A dilation, pads, or the sizes along a concat's axis that overflow.
save("conv_dilation_overflow",
     [helper.make_node("Conv", ["x", "w"], ["y"], dilations=[1 << 62], name="conv")],
     [helper.make_tensor_value_info("x", f, [1, 1, 8])], [y],
     [numpy_helper.from_array(np.ones((1, 1, 3), np.float32), "w")])
save("pad_overflow",
     [helper.make_node("Pad", ["x", "p"], ["y"], name="pad")],
     [x1], [y], [i64("p", [(1 << 63) - 1, 0])])
u8 = TensorProto.UINT8
save("concat_overflow",
     [helper.make_node("Concat", ["a", "b"], ["y"], axis=0, name="concat")],
     [helper.make_tensor_value_info("a", u8, [1 << 62]),
      helper.make_tensor_value_info("b", u8, [1 << 62])],
     [helper.make_tensor_value_info("y", u8, None)])

# Intermediates of 3 * 2^60 bytes, two alive at once: each fits in int64,
# the arena they need does not.
big = i64("s", [3 << 58])
save("arena_overflow",
     [helper.make_node("Expand", ["x", "s"], ["a"], name="expand"),
      helper.make_node("Neg", ["a"], ["b"], name="neg"),
      helper.make_node("Add", ["a", "b"], ["c"], name="add"),
      helper.make_node("Mul", ["c", "a"], ["y"], name="mul")],
     [x1], [y], [big])

os.makedirs(os.path.join(out, "data"), exist_ok=True)
with open(os.path.join(out, "data", "input_0.pb"), "wb") as fh:
    fh.write(numpy_helper.from_array(np.ones(1, np.float32), "x").SerializeToString())

