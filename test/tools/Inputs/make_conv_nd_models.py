"""Writes conv1d.onnx, conv3d.onnx and their batch-2 forms (conv1d_b2.onnx,
conv3d_b2.onnx) into argv[1], with an input set for each (data1d/,
data1d_b2/, data3d/, data3d_b2/), for test/tools/conv-nd.test. 1-D:

  x [N, 1, 200] -> Conv k7 s2 (1->64) + LeakyRelu -> a   (a stem)
  a -> Conv k5 dilation 2 pad 4 (64->72) -> b           (5 blocks, the last
                                                           half full)
  b -> Conv k1 (72->32) -> p
  p -> Conv k3 pad 1 group 4 (32->32) + Relu -> c       (grouped)
  c -> depthwise Conv k3 pads (2, 0) (32) -> y

3-D:

  x [N, 3, 6, 12, 12] -> Conv 3x7x7 s (1,2,2) p (1,3,3) (3->32) + Relu -> a
  a -> Conv 3x3x3 p 1 (32->32) + Relu -> b
  b -> Conv 3x3x3 p 1 (32->32), + a, Relu -> c       (a residual block)
  c -> Conv 3x3x3 s 2 p 1 (32->40) + Relu -> e
  c -> Conv 1x1x1 s 2 (32->40) -> s                 (a downsample)
  e -> Conv 3x3x3 p 1 (40->40), + s, Relu -> f       (channel tail)
  f -> depthwise Conv 3x3x3 pads (0,1,1,2,1,1) dilation (2,1,1) -> g
  g -> GlobalAveragePool -> y

with seeded random weights and biases."""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]


class Weights:
    """Seeded initializers and the nodes that use them."""

    def __init__(self):
        self.rng = np.random.default_rng(61)
        self.inits = []

    def t(self, n, shape, scale):
        self.inits.append(numpy_helper.from_array(
            self.rng.normal(0, scale, shape).astype(np.float32), n))
        return n

    def conv(self, name, x, oc, ic, k, y, **attrs):
        w = self.t(name + "_w", (oc, ic) + k, 1.0 / np.sqrt(ic * np.prod(k)))
        b = self.t(name + "_b", (oc,), 0.1)
        return helper.make_node("Conv", [x, w, b], [y], name=name, **attrs)


relu = lambda x, y: helper.make_node("Relu", [x], [y], name=y)
add = lambda x, z, y: helper.make_node("Add", [x, z], [y], name=y + "_add")


def save(name, nodes, x_shape, outputs, inits):
    graph = helper.make_graph(
        nodes, name.split(".")[0].split("_")[0],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
        [helper.make_tensor_value_info(o, TensorProto.FLOAT, None)
         for o in outputs], inits)
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]),
              os.path.join(out, name))


def model1d(name, batch):
    m = Weights()
    nodes = [
        m.conv("stem", "x", 64, 1, (7,), "a0", strides=[2]),
        helper.make_node("LeakyRelu", ["a0"], ["a"], name="a", alpha=0.1),
        m.conv("conv1", "a", 72, 64, (5,), "b", dilations=[2], pads=[4, 4]),
        m.conv("proj", "b", 32, 72, (1,), "p"),
        m.conv("grouped", "p", 32, 8, (3,), "c0", pads=[1, 1], group=4),
        relu("c0", "c"),
        m.conv("depthwise", "c", 32, 1, (3,), "y", pads=[2, 0], group=32),
    ]
    save(name, nodes, [batch, 1, 200], ["y"], m.inits)


def model3d(name, batch):
    m = Weights()
    conv = m.conv
    nodes = [
        conv("stem", "x", 32, 3, (3, 7, 7), "a0", strides=[1, 2, 2],
             pads=[1, 3, 3, 1, 3, 3]), relu("a0", "a"),
        conv("conv1", "a", 32, 32, (3, 3, 3), "b0", pads=[1] * 6),
        relu("b0", "b"),
        conv("conv2", "b", 32, 32, (3, 3, 3), "c0", pads=[1] * 6),
        add("c0", "a", "c1"), relu("c1", "c"),
        conv("conv3", "c", 40, 32, (3, 3, 3), "e0", strides=[2, 2, 2],
             pads=[1] * 6), relu("e0", "e"),
        conv("down", "c", 40, 32, (1, 1, 1), "s", strides=[2, 2, 2]),
        conv("conv4", "e", 40, 40, (3, 3, 3), "f0", pads=[1] * 6),
        add("f0", "s", "f1"), relu("f1", "f"),
        conv("depthwise", "f", 40, 1, (3, 3, 3), "g", group=40,
             pads=[0, 1, 1, 2, 1, 1], dilations=[2, 1, 1]),
        helper.make_node("GlobalAveragePool", ["g"], ["y"], name="pool"),
    ]
    save(name, nodes, [batch, 3, 6, 12, 12], ["y", "f"], m.inits)


model1d("conv1d.onnx", 1)
model1d("conv1d_b2.onnx", 2)
model3d("conv3d.onnx", 1)
model3d("conv3d_b2.onnx", 2)
rng = np.random.default_rng(67)
for d, shape in (("data1d", (1, 1, 200)), ("data1d_b2", (2, 1, 200)),
                 ("data3d", (1, 3, 6, 12, 12)),
                 ("data3d_b2", (2, 3, 6, 12, 12))):
    os.makedirs(os.path.join(out, d), exist_ok=True)
    x = rng.normal(0, 1, shape).astype(np.float32)
    with open(os.path.join(out, d, "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, "x").SerializeToString())
