"""Writes conv_transpose.onnx for test/tools/conv-transpose.test into
argv[1], with its inputs and the outputs PyTorch computes (input_*.pb,
output_*.pb). Seeded random weights and biases, constant in the model.

Inputs x [1, 20, 7, 9] (a block and a channel tail), g [1, 32, 6, 5],
l [1, 16, 11] and p [1, 3, 16, 16] (a model input of 3 channels, read
plain). One ConvTranspose (node name = output name) per output:

  a    x  k2 s2, 20 -> 24, bias              (U-Net's upsampling)
  b    g  k3 s2 p1 output_padding 1, group 2 (16 channels a group)
  c    x  k4 s2 p1, 20 -> 8, then Relu       (a GAN's; fused activation)
  d    x  k3 s3, 20 -> 16                    (9 phases of one tap)
  e    x  k5 s2 pads [2, 1, 1, 2] output_padding 1, bias (uneven pads)
  f    x  k3 s2 auto_pad SAME_UPPER, bias
  g2   x  k3 s2 output_shape [16, 20], bias (pads follow)
  h    g  k3 s2 p1 output_padding 1, depthwise (group 32)
  j    x  k (3, 2) s (2, 1) p (1, 0), 20 -> 16 (strides differ per dim)
  l1   l  1-D k4 s2 p1, 16 -> 16, bias
  pl   p  k2 s2, 3 -> 16, bias (16 rows a phase: split by rows on threads)
  dil  x  k3 s2 dilations 2, 20 -> 16 (declined: the portable scatter)
"""
import sys

import numpy as np
import torch
import torch.nn.functional as F
from model_files import save_model_with_data
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(17)
inputs = {
    "x": rng.standard_normal((1, 20, 7, 9)).astype(np.float32),
    "g": rng.standard_normal((1, 32, 6, 5)).astype(np.float32),
    "l": rng.standard_normal((1, 16, 11)).astype(np.float32),
    "p": rng.standard_normal((1, 3, 16, 16)).astype(np.float32),
}
inits, nodes, outputs, expected = [], [], [], []


def window(size, k, s, dil, pads_begin, pads_end, out_pad, auto_pad, out_shape):
    """ONNX's output size and begin pad per spatial dim."""
    sizes, begins = [], []
    for i in range(len(size)):
        full = s[i] * (size[i] - 1) + out_pad[i] + (k[i] - 1) * dil[i] + 1
        if out_shape or auto_pad.startswith("SAME"):
            o = out_shape[i] if out_shape else size[i] * s[i]
            total = max(0, full - o)
            begin = total // 2 if auto_pad == "SAME_UPPER" else total - total // 2
        else:
            begin = pads_begin[i]
            o = full - pads_begin[i] - pads_end[i]
        sizes.append(o)
        begins.append(begin)
    return sizes, begins


def conv_transpose(name, src, m, k, s, pads=None, out_pad=None, group=1,
                   bias=False, relu=False, dil=None, auto_pad="NOTSET",
                   out_shape=None):
    x = inputs[src]
    dims = x.ndim - 2
    c = x.shape[1]
    pads = pads or [0] * (2 * dims)
    out_pad = out_pad or [0] * dims
    dil = dil or [1] * dims
    w = (rng.standard_normal((c, m // group, *k)) * 0.3).astype(np.float32)
    b = (rng.standard_normal(m) * 0.3).astype(np.float32)
    inits.append(numpy_helper.from_array(w, name + "_w"))
    node_inputs = [src, name + "_w"]
    if bias:
        inits.append(numpy_helper.from_array(b, name + "_b"))
        node_inputs.append(name + "_b")
    attrs = dict(kernel_shape=list(k), strides=list(s), group=group)
    if auto_pad != "NOTSET":
        attrs["auto_pad"] = auto_pad
    elif out_shape:
        attrs["output_shape"] = list(out_shape)
    else:
        attrs["pads"] = list(pads)
    if any(out_pad):
        attrs["output_padding"] = list(out_pad)
    if any(d != 1 for d in dil):
        attrs["dilations"] = list(dil)
    y = name if not relu else name + "_pre"
    nodes.append(helper.make_node("ConvTranspose", node_inputs, [y], name=name,
                                  **attrs))
    if relu:
        nodes.append(helper.make_node("Relu", [y], [name]))

    # PyTorch's transposed conv without pads, then ONNX's window cut from it
    # (zeros past its end for output_padding or a larger output_shape).
    sizes, begins = window(x.shape[2:], k, s, dil, pads[:dims], pads[dims:],
                           out_pad, auto_pad, out_shape)
    fn = F.conv_transpose1d if dims == 1 else F.conv_transpose2d
    full = fn(torch.from_numpy(x), torch.from_numpy(w), None, stride=s,
              dilation=dil, groups=group).numpy()
    grow = [(0, 0), (0, 0)] + [(0, max(0, begins[i] + sizes[i] - full.shape[2 + i]))
                               for i in range(dims)]
    full = np.pad(full, grow)
    y_ref = full[(slice(None), slice(None)) +
                 tuple(slice(begins[i], begins[i] + sizes[i]) for i in range(dims))]
    if bias:
        y_ref = y_ref + b.reshape((1, m) + (1,) * dims)
    if relu:
        y_ref = np.maximum(y_ref, 0)
    outputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT,
                                                 list(y_ref.shape)))
    expected.append(np.ascontiguousarray(y_ref, dtype=np.float32))


conv_transpose("a", "x", 24, (2, 2), (2, 2), bias=True)
conv_transpose("b", "g", 32, (3, 3), (2, 2), [1, 1, 1, 1], [1, 1], group=2)
conv_transpose("c", "x", 8, (4, 4), (2, 2), [1, 1, 1, 1], relu=True)
conv_transpose("d", "x", 16, (3, 3), (3, 3))
conv_transpose("e", "x", 16, (5, 5), (2, 2), [2, 1, 1, 2], [1, 1], bias=True)
conv_transpose("f", "x", 16, (3, 3), (2, 2), bias=True, auto_pad="SAME_UPPER")
conv_transpose("g2", "x", 16, (3, 3), (2, 2), bias=True, out_shape=(16, 20))
conv_transpose("h", "g", 32, (3, 3), (2, 2), [1, 1, 1, 1], [1, 1], group=32)
conv_transpose("j", "x", 16, (3, 2), (2, 1), [1, 0, 1, 0])
conv_transpose("l1", "l", 16, (4,), (2,), [1, 1], bias=True)
conv_transpose("pl", "p", 16, (2, 2), (2, 2), bias=True)
conv_transpose("dil", "x", 16, (3, 3), (2, 2), dil=[2, 2])

save_model_with_data(out, "conv_transpose", nodes, inputs, outputs, inits,
                     expected)
