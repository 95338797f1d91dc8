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
from model_files import ConvModel

out = sys.argv[1]
rng = np.random.default_rng(29)
inputs = {
    "a": rng.standard_normal((1, 48, 14, 14)).astype(np.float32),
    "b": rng.standard_normal((1, 104, 9, 9)).astype(np.float32),
    "c": rng.standard_normal((1, 64, 10, 10)).astype(np.float32),
    "d": rng.standard_normal((2, 32, 8, 8)).astype(np.float32),
    "z": rng.standard_normal((1, 48, 14, 14)).astype(np.float32),
}
model = ConvModel(inputs, rng, weight_scale=0.2)

model.conv("g8", "a", 48, 3, group=6, pad=1, bias=True, relu=True)
model.conv("g8t", "b", 104, 3, group=13, s=2, pad=1, bias=True)
model.conv("g8r", "a", 48, 3, group=6, pad=1, residual="z", relu=True)
model.conv("g4", "c", 64, 3, group=16, s=2, pad=1, bias=True)
model.conv("g2", "d", 32, 3, group=16, pad=1)
model.conv("g48", "c", 128, 1, group=16)

model.save(out, "grouped_convs")
