"""Writes a test model and its data set as `mlcc run --data DIR --check`
reads them: NAME.onnx (opset 13) with the graph's inputs in the order of
`inputs`, input_*.pb and the expected output_*.pb."""
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def save_model_with_data(out, name, nodes, inputs, outputs, inits, expected):
    graph = helper.make_graph(
        nodes, name,
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(v.shape))
         for n, v in inputs.items()],
        outputs, inits)
    onnx.save(helper.make_model(graph,
                                opset_imports=[helper.make_opsetid("", 13)]),
              os.path.join(out, name + ".onnx"))
    for i, (n, v) in enumerate(inputs.items()):
        with open(os.path.join(out, f"input_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(v, n).SerializeToString())
    for i, (info, v) in enumerate(zip(outputs, expected)):
        with open(os.path.join(out, f"output_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(np.asarray(v), info.name)
                    .SerializeToString())


def add_conv_output(nodes, outputs, expected, name, y, y_ref, inputs,
                    residual=None, relu=False):
    """Ends conv output `name` (graph value y, PyTorch's y_ref): + the input
    `residual` and a Relu if asked, then an Identity named `name` that the
    graph outputs, expected to equal y_ref so treated."""
    if residual:
        nodes.append(helper.make_node("Add", [y, residual], [name + "_sum"]))
        y = name + "_sum"
        y_ref = y_ref + inputs[residual]
    if relu:
        nodes.append(helper.make_node("Relu", [y], [name + "_relu"]))
        y = name + "_relu"
        y_ref = np.maximum(y_ref, 0)
    nodes.append(helper.make_node("Identity", [y], [name]))
    outputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT,
                                                 list(y_ref.shape)))
    expected.append(np.ascontiguousarray(y_ref, dtype=np.float32))
