"""Writes conv_passes.onnx for test/tools/conv-channel-passes.test into
argv[1], with its inputs and the outputs PyTorch computes (input_*.pb,
output_*.pb). Seeded random weights and biases, constant in the model.

Each conv's weights per group of 32 output channels exceed 256 KiB, so it
runs in passes over slices of its input channel blocks
(lowering/AVX512/ConvChannelPasses.cpp). One Conv per output:

  a   f [1, 100, 9, 9]    5x5 p2, 100 -> 40, bias, Relu (a channel tail
                          in the last pass, an output channel tail)
  b   x [1, 250, 7, 7]    3x3 s2 p1, 250 -> 64            (no bias)
  r   x                   3x3 s2 p1, 250 -> 48, bias, + z, Relu (a
                          residual: the first pass adds z)
  v   d [1, 80, 4, 5, 5]  3x3x3 p1, 80 -> 32, bias    (3-D: 27 taps a block)
  w   l [1, 256, 28, 28]  3x3 s2 p1, 256 -> 64, bias, Relu (rows on threads)
  n2  m [2, 250, 7, 7]    3x3 s2 p1, 250 -> 64, bias  (a batch: one pass)

3x3 convs of stride 1 would run as Winograd convs, hence the strides.
"""
import sys

import numpy as np
from model_files import ConvModel

out = sys.argv[1]
rng = np.random.default_rng(23)
inputs = {
    "f": rng.standard_normal((1, 100, 9, 9)).astype(np.float32),
    "x": rng.standard_normal((1, 250, 7, 7)).astype(np.float32),
    "z": rng.standard_normal((1, 48, 4, 4)).astype(np.float32),
    "d": rng.standard_normal((1, 80, 4, 5, 5)).astype(np.float32),
    "l": rng.standard_normal((1, 256, 28, 28)).astype(np.float32),
    "m": rng.standard_normal((2, 250, 7, 7)).astype(np.float32),
}
model = ConvModel(inputs, rng, weight_scale=0.05)

model.conv("a", "f", 40, 5, pad=2, bias=True, relu=True)
model.conv("b", "x", 64, 3, s=2, pad=1)
model.conv("r", "x", 48, 3, s=2, pad=1, bias=True, residual="z", relu=True)
model.conv("v", "d", 32, 3, pad=1, bias=True)
model.conv("w", "l", 64, 3, s=2, pad=1, bias=True, relu=True)
model.conv("n2", "m", 64, 3, s=2, pad=1, bias=True)

model.save(out, "conv_passes")
