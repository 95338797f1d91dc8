#!/usr/bin/python3
"""Writes the recurrent benchmark: a 2-layer LSTM and a 2-layer GRU (input
256, hidden 256, 100 steps, batch 1), exported from torch (seeded weights)
as model folders (model.onnx + test_data_set_0 with the torch outputs):
lstm2x256_seq100 and gru2x256_seq100. Time them with tools/bench/bench.py.

    /usr/bin/python3 tools/bench/recurrent_models.py OUT_DIR
"""

import argparse
import os

import torch
from onnx import numpy_helper

SEQ, BATCH, SIZE, LAYERS = 100, 1, 256, 2


class Cell(torch.nn.Module):
    def __init__(self, kind):
        super().__init__()
        self.rnn = kind(SIZE, SIZE, num_layers=LAYERS)

    def forward(self, x):
        y, _ = self.rnn(x)
        return y


def write(out_dir, name, kind, seed):
    folder = os.path.join(out_dir, name)
    os.makedirs(os.path.join(folder, "test_data_set_0"), exist_ok=True)
    torch.manual_seed(seed)
    model = Cell(kind).eval()
    x = torch.rand(SEQ, BATCH, SIZE) * 2 - 1
    with torch.no_grad():
        y = model(x)
    torch.onnx.export(model, (x,), os.path.join(folder, "model.onnx"),
                      input_names=["x"], output_names=["y"], opset_version=14)
    for kind_, tensor, nm in [("input", x, "x"), ("output", y, "y")]:
        with open(os.path.join(folder, "test_data_set_0", kind_ + "_0.pb"),
                  "wb") as f:
            f.write(numpy_helper.from_array(tensor.numpy(), nm)
                    .SerializeToString())
    return folder


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir")
    args = parser.parse_args()
    print(write(args.out_dir, "lstm2x256_seq100", torch.nn.LSTM, 1))
    print(write(args.out_dir, "gru2x256_seq100", torch.nn.GRU, 2))


if __name__ == "__main__":
    main()
