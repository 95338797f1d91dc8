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
