"""Writes OUT/input_*.pb for data_dependent.mlir: x with zeros, -0.0, nan
and repeats; m with a repeated row; nms boxes in two overlapping clusters
and a far one, scores with ties, max_output_boxes_per_class = 3."""
import sys

import numpy as np
from onnx import numpy_helper

out = sys.argv[1]
nan = np.nan
inputs = dict(
    x=np.array([[0, 2, -0.0, 2], [nan, 1, 0, 3], [1, nan, 2, -1]], np.float32),
    m=np.array([[3, 1, 2], [0, 5, 1], [3, 1, 2], [0, 4, 9]], np.int32),
    c=np.array([True, False, True]),
    boxes=np.array([[[0, 0, 1, 1], [0, 0.1, 1, 1.1], [0, -0.1, 1, 0.9],
                     [0, 10, 1, 11], [0, 10.1, 1, 11.1], [0, 100, 1, 101]]],
                   np.float32),
    scores=np.array([[[0.9, 0.75, 0.6, 0.95, 0.5, 0.3],
                      [0.5, 0.5, 0.9, 0.2, 0.5, 0.7]]], np.float32),
    max=np.array([3], np.int64),
    iou=np.array([0.5], np.float32),
    thr=np.array([0.25], np.float32))
for i, (name, value) in enumerate(inputs.items()):
    with open('%s/input_%d.pb' % (out, i), 'wb') as f:
        f.write(numpy_helper.from_array(value, name).SerializeToString())
