#!/usr/bin/env python3
"""Writes small ONNX models for the importer's lit tests: make_model.py CASE OUT.onnx"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model(nodes, inputs, outputs, inits=(), opset=17):
    g = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def conv_relu():
    w = numpy_helper.from_array(np.ones((4, 3, 3, 3), np.float32), "w")
    return model(
        [helper.make_node("Conv", ["x", "w"], ["y"], name="conv1", pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["y"], ["z"], name="relu1")],
        [vi("x", F, [1, 3, 8, 8])], [vi("z", F, None)], [w])


def symbolic_reshape():
    # BERT-style shape arithmetic on a symbolic batch: folds away once fixed.
    return model(
        [helper.make_node("Shape", ["x"], ["s"], name="shape"),
         helper.make_node("Gather", ["s", "zero"], ["b"], name="gather", axis=0),
         helper.make_node("Unsqueeze", ["b", "axes0"], ["b1"], name="unsqueeze"),
         helper.make_node("Concat", ["b1", "rest"], ["newshape"], name="concat", axis=0),
         helper.make_node("Reshape", ["x", "newshape"], ["y"], name="reshape")],
        [vi("x", F, ["batch", 4, 6])], [vi("y", F, None)],
        [numpy_helper.from_array(np.array(0, np.int64), "zero"),
         numpy_helper.from_array(np.array([0], np.int64), "axes0"),
         numpy_helper.from_array(np.array([2, 12], np.int64), "rest")])


def unknown_ops():
    return model(
        [helper.make_node("FancyOp", ["x"], ["y"], name="fancy"),
         helper.make_node("Relu", ["x"], ["r"], name="ok"),
         helper.make_node("OtherOp", ["r"], ["z"], name="other")],
        [vi("x", F, [2])], [vi("y", F, None), vi("z", F, None)])


def missing_input():
    return model([helper.make_node("Add", ["x", "nowhere"], ["y"], name="add1")],
                 [vi("x", F, [2])], [vi("y", F, None)])


def legacy_slice():
    return model(
        [helper.make_node("Slice", ["x"], ["y"], name="slice1", starts=[1], ends=[3], axes=[0])],
        [vi("x", F, [5])], [vi("y", F, None)], opset=9)


def if_capture():
    then_g = helper.make_graph(
        [helper.make_node("Add", ["x", "outer"], ["t"], name="then_add")], "then", [], [vi("t", F, [2])])
    else_g = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["e"], name="else_neg")], "else", [], [vi("e", F, [2])])
    return model(
        [helper.make_node("If", ["c"], ["y"], name="if1", then_branch=then_g, else_branch=else_g)],
        [vi("c", B, []), vi("x", F, [2])], [vi("y", F, [2])],
        [numpy_helper.from_array(np.array([1, 2], np.float32), "outer")])


def nested_if(depth):
    # Each level an If whose then-branch holds the next one: 3 protobuf
    # messages deeper per level (NodeProto, AttributeProto, GraphProto).
    small = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "e", [], [vi("e", F, [2])])
    g = helper.make_graph([helper.make_node("Identity", ["x"], ["y0"])], "g0", [], [vi("y0", F, [2])])
    for d in range(1, depth + 1):
        n = helper.make_node("If", ["c"], ["y%d" % d], then_branch=g, else_branch=small)
        g = helper.make_graph([n], "g%d" % d, [], [vi("y%d" % d, F, [2])])
    return model(list(g.node), [vi("c", B, []), vi("x", F, [2])], [vi("y%d" % depth, F, [2])])


def nested_if_20():
    return nested_if(20)


def nested_if_300():
    return nested_if(300)


def gelu_opset20():
    # Gelu-20 is newer than the generated op table (and than onnx 1.12's
    # schemas): the importer maps it to graph.gelu by hand.
    return model(
        [helper.make_node("Gelu", ["x"], ["y"], name="gelu_erf"),
         helper.make_node("Gelu", ["y"], ["z"], name="gelu_tanh", approximate="tanh")],
        [vi("x", F, [2, 3])], [vi("z", F, None)], opset=20)


def concat_without_axis():
    # Found by the onnx-import fuzzer: the op's verifier needs the axis.
    return model([helper.make_node("Concat", ["a", "b"], ["y"], name="cat")],
                 [vi("a", F, [2]), vi("b", F, [3])], [vi("y", F, None)])


def legacy_wrong_kinds():
    # Attributes of the wrong kind in opset-9 forms the importer rewrites.
    return model(
        [helper.make_node("Slice", ["x"], ["s"], name="slice", starts=[0.5], ends=[1]),
         helper.make_node("Softmax", ["s"], ["y"], name="softmax", axis=1.5)],
        [vi("x", F, [2, 3])], [vi("y", F, None)], opset=9)


def if_condition(cond_type, cond_shape):
    # If takes one bool; the region op a scalar (found by the onnx-import
    # fuzzer: a module that did not verify).
    then_g = helper.make_graph([helper.make_node("Neg", ["x"], ["t"])], "then", [], [vi("t", F, [2])])
    else_g = helper.make_graph([helper.make_node("Abs", ["x"], ["e"])], "else", [], [vi("e", F, [2])])
    return model(
        [helper.make_node("If", ["c"], ["y"], name="if1", then_branch=then_g, else_branch=else_g)],
        [vi("c", cond_type, cond_shape), vi("x", F, [2])], [vi("y", F, [2])])


def if_float_condition():
    return if_condition(F, [])


def if_two_conditions():
    return if_condition(B, [2])


def if_one_element_condition():
    return if_condition(B, [1, 1])


def negating_loop(trip_type, outputs):
    # A body with one loop-carried value (negated each trip) and no scan.
    body = helper.make_graph(
        [helper.make_node("Identity", ["c_in"], ["c_out"]),
         helper.make_node("Neg", ["v_in"], ["v_out"])], "body",
        [vi("i", I64, []), vi("c_in", B, []), vi("v_in", F, [2])],
        [vi("c_out", B, []), vi("v_out", F, [2])])
    return model([helper.make_node("Loop", ["m", "", "x"], outputs, name="loop1", body=body)],
                 [vi("m", trip_type, []), vi("x", F, [2])], [vi(o, F, None) for o in outputs])


def loop_float_trip_count():
    return negating_loop(F, ["y"])


def loop_more_outputs():
    return negating_loop(I64, ["y", "z"])


def function_op_undefined_input():
    # SequenceMap is expanded through libonnx's body builder, which read
    # the type of the undefined input and crashed.
    body = helper.make_graph([helper.make_node("Identity", ["a"], ["b"])], "body",
                             [vi("a", F, [2])], [vi("b", F, [2])])
    return model([helper.make_node("SequenceMap", ["nowhere"], ["y"], name="map1", body=body)],
                 [], [vi("y", F, None)])


def external_data():
    m = conv_relu()
    path = os.path.dirname(os.path.abspath(sys.argv[2]))
    onnx.save_model(m, sys.argv[2], save_as_external_data=True, all_tensors_to_one_file=True,
                    location=os.path.basename(sys.argv[2]) + ".data", size_threshold=0)
    return None


CASES = {f.__name__: f for f in [conv_relu, symbolic_reshape, unknown_ops, missing_input,
                                 legacy_slice, if_capture, external_data, gelu_opset20,
                                 nested_if_20, nested_if_300, concat_without_axis,
                                 legacy_wrong_kinds, if_float_condition, if_two_conditions,
                                 if_one_element_condition, loop_float_trip_count,
                                 loop_more_outputs, function_op_undefined_input]}

if __name__ == "__main__":
    m = CASES[sys.argv[1]]()
    if m is not None:
        onnx.save(m, sys.argv[2])
