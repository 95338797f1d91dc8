"""Writes dynamic.onnx, a torch export with a dynamic batch and sequence
length, and two test-data sets of different shapes into argv[1].

The model is a small attention block over x [batch, seq, 16]: q/k/v
projections, softmax(q k^T / 4) v, a residual and a mean over the
features, as transformers are exported with dynamic_axes. The sets are
batch 1, seq 7 and batch 3, seq 12; their outputs come from torch.
"""
import os
import sys

import numpy as np
import torch
from onnx import numpy_helper

out = sys.argv[1]
torch.manual_seed(3)


class Attention(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.q = torch.nn.Linear(16, 16)
        self.k = torch.nn.Linear(16, 16)
        self.v = torch.nn.Linear(16, 16)

    def forward(self, x):
        scores = torch.matmul(self.q(x), self.k(x).transpose(1, 2)) / 4.0
        h = torch.matmul(torch.softmax(scores, dim=-1), self.v(x)) + x
        return h, h.mean(dim=-1)


model = Attention().eval()
torch.onnx.export(model, (torch.zeros(2, 5, 16),),
                  os.path.join(out, "dynamic.onnx"), opset_version=13,
                  input_names=["x"], output_names=["h", "m"],
                  dynamic_axes={"x": {0: "batch", 1: "seq"},
                                "h": {0: "batch", 1: "seq"},
                                "m": {0: "batch", 1: "seq"}})


def save(path, name, array):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(array, name).SerializeToString())


for i, (batch, seq) in enumerate([(1, 7), (3, 12)]):
    folder = os.path.join(out, "data", "test_data_set_%d" % i)
    os.makedirs(folder)
    x = torch.randn(batch, seq, 16)
    with torch.no_grad():
        h, m = model(x)
    save(os.path.join(folder, "input_0.pb"), "x", x.numpy())
    save(os.path.join(folder, "output_0.pb"), "h", h.numpy())
    save(os.path.join(folder, "output_1.pb"), "m", m.numpy())
