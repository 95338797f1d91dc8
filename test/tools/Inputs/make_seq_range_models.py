"""Models with a dynamic sequence length for `--dim seq=LO..HI` (a range of
lengths), with model-zoo data sets from torch.

    make_seq_range_models.py WORKDIR

  encoder.onnx  input_ids [batch, seq], attention_mask [batch, seq] -> a two-layer
                BERT-style encoder (embeddings of words and positions, the
                position ids sliced from a buffer by the length, multi-head
                attention with the mask, GELU feed-forward, layer norms):
                hidden [batch, seq, 32] and the first position's vector
                first [batch, 32]; encoder_data/test_data_set_N at batch 1
                and seq 5, 16, 23, 32 (the last key of 23 masked), and at
                batch 3 and seq 11 (each item's tail masked otherwise)
  plain.onnx    the same at batch 1 without the mask (input_ids -> hidden, first), so
                that nothing but the run's length keeps the attention off
                the padding; plain_data at seq 5, 16, 23, 32
  mean.onnx     x [1, seq, 8] -> the mean over the positions: every output
                reads the padding, which a range of lengths must refuse
"""
import math
import os
import sys

import numpy as np
import onnx.numpy_helper
import torch
from torch import nn

HIDDEN, HEADS, INTER, MAX_POS, VOCAB = 32, 2, 64, 64, 50


class Layer(nn.Module):
    def __init__(self):
        super().__init__()
        self.q, self.k, self.v, self.o = (nn.Linear(HIDDEN, HIDDEN) for _ in range(4))
        self.ln1, self.ln2 = nn.LayerNorm(HIDDEN), nn.LayerNorm(HIDDEN)
        self.ffn_in, self.ffn_out = nn.Linear(HIDDEN, INTER), nn.Linear(INTER, HIDDEN)

    def split(self, t):  # [B, S, H] -> [B, heads, S, dh]
        return t.reshape(t.shape[0], t.shape[1], HEADS, HIDDEN // HEADS).transpose(1, 2)

    def forward(self, x, mask_bias):
        q, k, v = self.split(self.q(x)), self.split(self.k(x)), self.split(self.v(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(HIDDEN // HEADS)
        if mask_bias is not None:
            scores = scores + mask_bias
        ctx = torch.matmul(torch.softmax(scores, dim=-1), v).transpose(1, 2)
        ctx = ctx.reshape(x.shape[0], x.shape[1], HIDDEN)
        x = self.ln1(x + self.o(ctx))
        return self.ln2(x + self.ffn_out(nn.functional.gelu(self.ffn_in(x))))


class Encoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.words, self.positions = nn.Embedding(VOCAB, HIDDEN), nn.Embedding(MAX_POS, HIDDEN)
        self.ln = nn.LayerNorm(HIDDEN)
        self.layers = nn.ModuleList(Layer() for _ in range(2))
        self.register_buffer("position_ids", torch.arange(MAX_POS).unsqueeze(0))

    def forward(self, input_ids, attention_mask=None):
        seq = input_ids.shape[1]
        x = self.ln(self.words(input_ids) + self.positions(self.position_ids[:, :seq]))
        mask_bias = None
        if attention_mask is not None:
            mask_bias = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * -10000.0
        for layer in self.layers:
            x = layer(x, mask_bias)
        return x, x[:, 0]


class Mean(nn.Module):
    def forward(self, x):
        return x.mean(dim=1)


def write_set(folder, inputs, outputs):
    os.makedirs(folder, exist_ok=True)
    for i, (name, a) in enumerate(inputs):
        with open(os.path.join(folder, "input_%d.pb" % i), "wb") as f:
            f.write(onnx.numpy_helper.from_array(a, name).SerializeToString())
    for i, (name, a) in enumerate(outputs):
        with open(os.path.join(folder, "output_%d.pb" % i), "wb") as f:
            f.write(onnx.numpy_helper.from_array(a, name).SerializeToString())


def main():
    work = sys.argv[1]
    torch.manual_seed(11)
    net = Encoder().eval()
    ids = torch.randint(0, VOCAB, (1, 7))
    torch.onnx.export(net, (ids, torch.ones_like(ids)), os.path.join(work, "encoder.onnx"),
                      input_names=["input_ids", "attention_mask"],
                      output_names=["hidden", "first"], opset_version=17,
                      dynamic_axes={"input_ids": {0: "batch", 1: "seq"},
                                    "attention_mask": {0: "batch", 1: "seq"},
                                    "hidden": {0: "batch", 1: "seq"}, "first": {0: "batch"}})
    for n, (batch, seq) in enumerate([(1, 5), (1, 16), (1, 23), (1, 32), (3, 11)]):
        ids = torch.randint(0, VOCAB, (batch, seq))
        mask = torch.ones_like(ids)
        if seq == 23:
            mask[:, -1] = 0
        if batch == 3:
            mask[1, 6:] = 0
            mask[2, 9:] = 0
        with torch.no_grad():
            hidden, first = net(ids, mask)
        write_set(os.path.join(work, "encoder_data", "test_data_set_%d" % n),
                  [("input_ids", ids.numpy()), ("attention_mask", mask.numpy())],
                  [("hidden", hidden.numpy()), ("first", first.numpy())])
    torch.onnx.export(net, (torch.randint(0, VOCAB, (1, 7)),), os.path.join(work, "plain.onnx"),
                      input_names=["input_ids"], output_names=["hidden", "first"],
                      opset_version=17,
                      dynamic_axes={"input_ids": {1: "seq"}, "hidden": {1: "seq"}})
    for n, seq in enumerate([5, 16, 23, 32]):
        ids = torch.randint(0, VOCAB, (1, seq))
        with torch.no_grad():
            hidden, first = net(ids)
        write_set(os.path.join(work, "plain_data", "test_data_set_%d" % n),
                  [("input_ids", ids.numpy())],
                  [("hidden", hidden.numpy()), ("first", first.numpy())])
    torch.onnx.export(Mean(), (torch.randn(1, 4, 8),), os.path.join(work, "mean.onnx"),
                      input_names=["x"], output_names=["y"], opset_version=17,
                      dynamic_axes={"x": {1: "seq"}})


if __name__ == "__main__":
    main()
