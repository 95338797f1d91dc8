"""Writes grouped_convs.onnx for test/tools/grouped-conv.test into argv[1],
with its inputs and the outputs PyTorch computes (input_*.pb, output_*.pb).
Seeded random weights and biases, constant in the model. One grouped Conv
per output:

  g8   a [1, 48, 14, 14]   3x3 p1, 6 groups of 8 (RegNet's), bias, Relu
  g8t  b [1, 104, 9, 9]    3x3 s2 p1, 13 groups of 8: a last chunk of one
                           group, bias
  g8r  a                   3x3 p1, 6 groups of 8, + z, Relu (a residual)
  g4   c [1, 64, 10, 10]   3x3 s2 p1, 16 groups of 4 (ResNeXt's), bias
  g2   d [2, 32, 8, 8]     3x3 p1, 16 groups of 2, two images
  g48  c                   1x1, 16 groups of 4 in and 8 out (channels
                           cross the block's halves: the dense chunk)

On avx512 the chunks of 16 channels whose groups keep within 8 run on ymm
halves (Conv.cpp, pairedGroups); g48's run the dense kernel.
"""
import sys

import numpy as np
import torch
import torch.nn.functional as F
from model_files import add_conv_output, save_model_with_data
from onnx import helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(29)
inputs = {
    "a": rng.standard_normal((1, 48, 14, 14)).astype(np.float32),
    "b": rng.standard_normal((1, 104, 9, 9)).astype(np.float32),
    "c": rng.standard_normal((1, 64, 10, 10)).astype(np.float32),
    "d": rng.standard_normal((2, 32, 8, 8)).astype(np.float32),
    "z": rng.standard_normal((1, 48, 14, 14)).astype(np.float32),
}
inits, nodes, outputs, expected = [], [], [], []


def conv(name, src, m, k, group, s=1, pad=0, bias=False, residual=None,
         relu=False):
    x = inputs[src]
    w = (rng.standard_normal((m, x.shape[1] // group, k, k)) * 0.2).astype(
        np.float32)
    b = (rng.standard_normal(m) * 0.3).astype(np.float32)
    inits.append(numpy_helper.from_array(w, name + "_w"))
    node_inputs = [src, name + "_w"]
    if bias:
        inits.append(numpy_helper.from_array(b, name + "_b"))
        node_inputs.append(name + "_b")
    y = name + "_conv"
    nodes.append(helper.make_node("Conv", node_inputs, [y], name=name,
                                  kernel_shape=[k, k], strides=[s, s],
                                  pads=[pad] * 4, group=group))
    y_ref = F.conv2d(torch.from_numpy(x), torch.from_numpy(w),
                     torch.from_numpy(b) if bias else None, stride=s,
                     padding=pad, groups=group).numpy()
    add_conv_output(nodes, outputs, expected, name, y, y_ref, inputs,
                    residual, relu)


conv("g8", "a", 48, 3, 6, pad=1, bias=True, relu=True)
conv("g8t", "b", 104, 3, 13, s=2, pad=1, bias=True)
conv("g8r", "a", 48, 3, 6, pad=1, residual="z", relu=True)
conv("g4", "c", 64, 3, 16, s=2, pad=1, bias=True)
conv("g2", "d", 32, 3, 16, pad=1)
conv("g48", "c", 128, 1, 16)

save_model_with_data(out, "grouped_convs", nodes, inputs, outputs, inits,
                     expected)
