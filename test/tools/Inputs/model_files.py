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


class ConvModel:
    """Conv nodes (2-D or 3-D by their input's rank) with seeded random
    weights and biases, constant in the model, each a graph output with the
    output PyTorch computes; save() writes them as save_model_with_data."""

    def __init__(self, inputs, rng, weight_scale):
        self.inputs, self.rng, self.weight_scale = inputs, rng, weight_scale
        self.inits, self.nodes, self.outputs, self.expected = [], [], [], []

    def conv(self, name, src, m, k, group=1, s=1, pad=0, bias=False,
             residual=None, relu=False):
        """Output `name`: Conv(src) with m output channels, a k^dims kernel,
        then + the input `residual` and a Relu if asked."""
        import torch
        import torch.nn.functional as F
        x = self.inputs[src]
        dims = x.ndim - 2
        w = (self.rng.standard_normal((m, x.shape[1] // group) + (k,) * dims)
             * self.weight_scale).astype(np.float32)
        b = (self.rng.standard_normal(m) * 0.3).astype(np.float32)
        self.inits.append(numpy_helper.from_array(w, name + "_w"))
        node_inputs = [src, name + "_w"]
        if bias:
            self.inits.append(numpy_helper.from_array(b, name + "_b"))
            node_inputs.append(name + "_b")
        y = name + "_conv"
        self.nodes.append(helper.make_node(
            "Conv", node_inputs, [y], name=name, kernel_shape=[k] * dims,
            strides=[s] * dims, pads=[pad] * (2 * dims), group=group))
        fn = F.conv3d if dims == 3 else F.conv2d
        y_ref = fn(torch.from_numpy(x), torch.from_numpy(w),
                   torch.from_numpy(b) if bias else None, stride=s,
                   padding=pad, groups=group).numpy()
        if residual:
            self.nodes.append(
                helper.make_node("Add", [y, residual], [name + "_sum"]))
            y = name + "_sum"
            y_ref = y_ref + self.inputs[residual]
        if relu:
            self.nodes.append(helper.make_node("Relu", [y], [name + "_relu"]))
            y = name + "_relu"
            y_ref = np.maximum(y_ref, 0)
        self.nodes.append(helper.make_node("Identity", [y], [name]))
        self.outputs.append(helper.make_tensor_value_info(
            name, TensorProto.FLOAT, list(y_ref.shape)))
        self.expected.append(np.ascontiguousarray(y_ref, dtype=np.float32))

    def save(self, out, name):
        save_model_with_data(out, name, self.nodes, self.inputs, self.outputs,
                             self.inits, self.expected)
