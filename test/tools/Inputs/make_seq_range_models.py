"""Models with a dynamic sequence length for `--dim seq=LO..HI` (a range of
lengths), with model-zoo data sets from torch, and a C program that runs
one compiled object at several lengths.

    make_seq_range_models.py WORKDIR                 the models
    make_seq_range_models.py WORKDIR INCLUDE LIB L.. the C program over
                                                     plain.o, run at
                                                     lengths L..

  encoder.onnx  input_ids [batch, seq], attention_mask [batch, seq] -> a two-layer
                BERT-style encoder (embeddings of words and positions, the
                position ids sliced from a buffer by the length, multi-head
                attention with the mask, GELU feed-forward, layer norms):
                hidden [batch, seq, 32] and the first position's vector
                first [batch, 32]; encoder_data/test_data_set_N at batch 1
                and seq 5, 16, 23, 32 (the last key of 23 masked), and at
                batch 3 and seq 11 (each item's tail masked otherwise)
                trimmed_data: batch 3 at seq 24, the items' masks
                ending at 24, 7 and 13, for --trim-padding attention_mask:
                the references are torch at each item's own length, zeros
                past it; then an item whose mask has a hole (a token after
                padding), which runs at the call's length
  weakmask.onnx the encoder with a mask of -100 on padded keys: their
                softmax terms are not 0, so --trim-padding must refuse it
  plain.onnx    the same at batch 1 without the mask (input_ids -> hidden, first), so
                that nothing but the run's length keeps the attention off
                the padding; plain_data at seq 5, 16, 23, 32
  mean.onnx     x [1, seq, 8] -> the mean over the positions, which a
                range of lengths reduces over the run's positions only;
                mean_data at seq 5, 16, 23, 32
  pooled.onnx   the encoder's hidden states, mean-pooled over the tokens
                the mask keeps (sentence embeddings: sums over the
                positions of [batch, seq, 32] and of the mask [batch, seq,
                1]): pooled [batch, 32]; pooled_data as encoder_data
  flip.onnx     x [1, seq, 8] -> x with its positions reversed: the first
                come from the last, which a range of lengths must refuse

The C program runs the lengths in one context, in the order given, and
prints each run's status; then the outputs are compared with torch's (max
abs error 1e-4) for the runs that succeeded.
"""
import math
import os
import subprocess
import sys

import numpy as np
import onnx.numpy_helper
import torch
from torch import nn

HIDDEN, HEADS, INTER, MAX_POS, VOCAB = 32, 2, 64, 64, 50

MAIN_C = r"""
#include "plain.h"
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  mlcc_plain_context *ctx;
  if (mlcc_plain_create(NULL, &ctx) != MLCC_OK)
    return 1;
  for (int a = 1; a + 2 < argc; a += 3) {
    int64_t seq = atoll(argv[a]);
    int64_t *ids = malloc((size_t)seq * sizeof(int64_t) + 1);
    float *hidden = malloc((size_t)seq * 32 * sizeof(float) + 1);
    float first[32];
    FILE *f = fopen(argv[a + 1], "rb");
    if (!f || fread(ids, sizeof(int64_t), (size_t)seq, f) != (size_t)seq)
      return 2;
    fclose(f);
    int64_t idsDims[2] = {1, seq}, hiddenDims[3] = {1, seq, 32},
            firstDims[2] = {1, 32};
    mlcc_tensor in = {ids, idsDims, 2, MLCC_DTYPE_I64};
    mlcc_tensor out[2] = {{hidden, hiddenDims, 3, MLCC_DTYPE_F32},
                          {first, firstDims, 2, MLCC_DTYPE_F32}};
    mlcc_status s = mlcc_plain_run(ctx, &in, out);
    printf("seq %lld: %s\n", (long long)seq,
           s == MLCC_OK ? "ok" : mlcc_last_error_message());
    f = fopen(argv[a + 2], "wb");
    fwrite(hidden, sizeof(float), (size_t)seq * 32, f);
    fclose(f);
    free(ids);
    free(hidden);
  }
  mlcc_plain_destroy(ctx);
  return 0;
}
"""


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
    def __init__(self, padded_key=-10000.0):
        super().__init__()
        self.padded_key = padded_key
        self.words, self.positions = nn.Embedding(VOCAB, HIDDEN), nn.Embedding(MAX_POS, HIDDEN)
        self.ln = nn.LayerNorm(HIDDEN)
        self.layers = nn.ModuleList(Layer() for _ in range(2))
        self.register_buffer("position_ids", torch.arange(MAX_POS).unsqueeze(0))

    def forward(self, input_ids, attention_mask=None):
        seq = input_ids.shape[1]
        x = self.ln(self.words(input_ids) + self.positions(self.position_ids[:, :seq]))
        mask_bias = None
        if attention_mask is not None:
            mask = attention_mask[:, None, None, :].to(torch.float32)
            mask_bias = (1.0 - mask) * self.padded_key
        for layer in self.layers:
            x = layer(x, mask_bias)
        return x, x[:, 0]


class Mean(nn.Module):
    def forward(self, x):
        return x.mean(dim=1)


class Pooled(nn.Module):
    def __init__(self, net):
        super().__init__()
        self.net = net

    def forward(self, input_ids, attention_mask):
        hidden, _ = self.net(input_ids, attention_mask)
        keep = attention_mask.to(torch.float32).unsqueeze(-1)
        return (hidden * keep).sum(dim=1) / keep.sum(dim=1)


class Flip(nn.Module):
    def forward(self, x):
        return x.flip(1)


def write_set(folder, inputs, outputs):
    os.makedirs(folder, exist_ok=True)
    for i, (name, a) in enumerate(inputs):
        with open(os.path.join(folder, "input_%d.pb" % i), "wb") as f:
            f.write(onnx.numpy_helper.from_array(a, name).SerializeToString())
    for i, (name, a) in enumerate(outputs):
        with open(os.path.join(folder, "output_%d.pb" % i), "wb") as f:
            f.write(onnx.numpy_helper.from_array(a, name).SerializeToString())


def encoder(padded_key=-10000.0):
    torch.manual_seed(11)
    return Encoder(padded_key).eval()


def write_trimmed_sets(net, folder):
    """--trim-padding: each item at its own length, zeros past it."""
    seq, ends = 24, [24, 7, 13]
    for n, holes in enumerate([False, True]):
        ids = torch.randint(0, VOCAB, (len(ends), seq))
        mask = torch.zeros_like(ids)
        hidden = torch.zeros(len(ends), seq, HIDDEN)
        first = torch.zeros(len(ends), HIDDEN)
        for b, end in enumerate(ends):
            mask[b, :end] = 1
            if holes and b == 1:
                mask[b, 2] = 0  # a token after padding: not trimmed
            with torch.no_grad():
                if holes and b == 1:
                    h, f = net(ids[b:b + 1], mask[b:b + 1])
                else:
                    h, f = net(ids[b:b + 1, :end], mask[b:b + 1, :end])
            hidden[b, :h.shape[1]], first[b] = h[0], f[0]
        write_set(os.path.join(folder, "test_data_set_%d" % n),
                  [("input_ids", ids.numpy()), ("attention_mask", mask.numpy())],
                  [("hidden", hidden.numpy()), ("first", first.numpy())])


def run_app(work, include, lib, lengths):
    with open(os.path.join(work, "main.c"), "w") as f:
        f.write(MAIN_C)
    exe = os.path.join(work, "app")
    subprocess.run(["cc", "-std=c11", "-Wall", "-Werror", "-I", include, "-I", work,
                    os.path.join(work, "main.c"), os.path.join(work, "plain.o"), lib,
                    "-lm", "-lpthread", "-o", exe], check=True)
    net = encoder()
    rng = np.random.default_rng(3)
    args, wants = [], []
    for i, seq in enumerate(lengths):
        ids = rng.integers(0, VOCAB, (1, seq)).astype(np.int64)
        ids.tofile(os.path.join(work, "ids%d.bin" % i))
        with torch.no_grad():  # (no reference for an empty sequence)
            wants.append(net(torch.from_numpy(ids))[0].numpy() if seq > 0 else None)
        args += [str(seq), os.path.join(work, "ids%d.bin" % i),
                 os.path.join(work, "hidden%d.bin" % i)]
    out = subprocess.run([exe] + args, check=True, capture_output=True, text=True)
    print(out.stdout, end="")
    lines = out.stdout.splitlines()
    for i, (seq, want) in enumerate(zip(lengths, wants)):
        if not lines[i].endswith(": ok"):
            continue
        got = np.fromfile(os.path.join(work, "hidden%d.bin" % i), np.float32)
        err = np.abs(got.reshape(want.shape) - want).max()
        print("seq %d: max abs error vs torch %s 1e-4 (%.2g)"
              % (seq, "below" if err <= 1e-4 else "ABOVE", err))


def main():
    work = sys.argv[1]
    if len(sys.argv) > 2:
        run_app(work, sys.argv[2], sys.argv[3], [int(a) for a in sys.argv[4:]])
        return
    net = encoder()
    ids = torch.randint(0, VOCAB, (1, 7))
    torch.onnx.export(net, (ids, torch.ones_like(ids)), os.path.join(work, "encoder.onnx"),
                      input_names=["input_ids", "attention_mask"],
                      output_names=["hidden", "first"], opset_version=17,
                      dynamic_axes={"input_ids": {0: "batch", 1: "seq"},
                                    "attention_mask": {0: "batch", 1: "seq"},
                                    "hidden": {0: "batch", 1: "seq"}, "first": {0: "batch"}})
    pooled = Pooled(net).eval()
    torch.onnx.export(pooled, (ids, torch.ones_like(ids)), os.path.join(work, "pooled.onnx"),
                      input_names=["input_ids", "attention_mask"],
                      output_names=["pooled"], opset_version=17,
                      dynamic_axes={"input_ids": {0: "batch", 1: "seq"},
                                    "attention_mask": {0: "batch", 1: "seq"},
                                    "pooled": {0: "batch"}})
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
            vector = pooled(ids, mask)
        inputs = [("input_ids", ids.numpy()), ("attention_mask", mask.numpy())]
        write_set(os.path.join(work, "encoder_data", "test_data_set_%d" % n), inputs,
                  [("hidden", hidden.numpy()), ("first", first.numpy())])
        write_set(os.path.join(work, "pooled_data", "test_data_set_%d" % n), inputs,
                  [("pooled", vector.numpy())])
    write_trimmed_sets(net, os.path.join(work, "trimmed_data"))
    torch.onnx.export(encoder(-100.0), (ids, torch.ones_like(ids)),
                      os.path.join(work, "weakmask.onnx"),
                      input_names=["input_ids", "attention_mask"],
                      output_names=["hidden", "first"], opset_version=17,
                      dynamic_axes={"input_ids": {0: "batch", 1: "seq"},
                                    "attention_mask": {0: "batch", 1: "seq"},
                                    "hidden": {0: "batch", 1: "seq"}, "first": {0: "batch"}})
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
    for n, seq in enumerate([5, 16, 23, 32]):
        x = torch.randn(1, seq, 8)
        write_set(os.path.join(work, "mean_data", "test_data_set_%d" % n),
                  [("x", x.numpy())], [("y", Mean()(x).numpy())])
    torch.onnx.export(Flip(), (torch.randn(1, 4, 8),), os.path.join(work, "flip.onnx"),
                      input_names=["x"], output_names=["y"], opset_version=17,
                      dynamic_axes={"x": {1: "seq"}, "y": {1: "seq"}})


if __name__ == "__main__":
    main()
