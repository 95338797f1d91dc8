#!/usr/bin/python3
"""BERT-base compiled once for a batch range and a range of lengths
(`--dim batch=1..8 --dim seq=1..512`), checked against torch at several
lengths and timed against the exact-shape compile. A benchmark, not a test: it fails only when a check fails, never
on speed.

    /usr/bin/python3 tools/bench/seq_range.py [--work DIR] [--rounds 3]

It exports the project's BERT-base (seeded weights, test/models/
export_models.py) with dynamic batch and sequence axes into WORK (kept
between runs), writes data sets of one sequence at lengths 7, 64, 128 and
384 from torch (a padded tail in the mask of 128, as the project's
bert_base has), and then:
  check   mlcc run --dim batch=1..8 --dim seq=1..512 --check on every set
          (one object)
  time    C programs (tools/bench/range_chunks.py's) over the object of
          --dim batch=1 --dim seq=L (exact) and over the ranges' one, on
          the set of length L, interleaved over --rounds, one thread; the
          medians' ratio range/exact per length.
"""

import argparse
import glob
import math
import tempfile
import os
import statistics
import subprocess
import sys

import numpy as np
import onnx.numpy_helper
import torch
from torch import nn

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MLCC = os.path.join(ROOT, "build", "bin", "mlcc")
sys.path.insert(0, os.path.join(ROOT, "test", "models"))
import export_models  # noqa: E402  (BertBase and its initialisation)
sys.path.insert(0, HERE)
import range_chunks  # noqa: E402  (the timing program)

LENGTHS = [7, 64, 128, 384]
RANGES = ["--dim", "batch=1..8", "--dim", "seq=1..512"]


class DynamicBertLayer(export_models.BertLayer):
    """BertLayer with the sequence length read from the input."""

    def forward(self, x, mask_bias):
        b, s = x.shape[0], x.shape[1]
        split = lambda t: t.reshape(b, s, self.heads, self.dh).transpose(1, 2)
        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.dh) + mask_bias
        ctx = torch.matmul(torch.softmax(scores, dim=-1), v)
        ctx = ctx.transpose(1, 2).reshape(b, s, self.heads * self.dh)
        x = self.ln1(x + self.attn_out(ctx))
        return self.ln2(x + self.ffn_out(nn.functional.gelu(self.ffn_in(x))))


class DynamicBert(export_models.BertBase):
    def __init__(self):
        super().__init__(seq=512)
        for i, layer in enumerate(self.layers):
            dynamic = DynamicBertLayer(768, 12, 3072, 512)
            dynamic.load_state_dict(layer.state_dict())
            self.layers[i] = dynamic

    def forward(self, input_ids, attention_mask):
        seq = input_ids.shape[1]
        x = (self.word_emb(input_ids) + self.pos_emb(self.position_ids[:, :seq]) +
             self.type_emb(torch.zeros_like(input_ids)))
        x = self.emb_ln(x)
        mask_bias = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * -10000.0
        for layer in self.layers:
            x = layer(x, mask_bias)
        return x


def export(work):
    model = os.path.join(work, "model.onnx")
    if os.path.exists(model):
        return model
    torch.manual_seed(0)
    net = DynamicBert().eval()
    ids = torch.randint(0, 30522, (1, 16))
    torch.onnx.export(net, (ids, torch.ones_like(ids)), model, opset_version=17,
                      input_names=["input_ids", "attention_mask"],
                      output_names=["last_hidden_state"],
                      dynamic_axes={"input_ids": {0: "batch", 1: "seq"},
                                    "attention_mask": {0: "batch", 1: "seq"},
                                    "last_hidden_state": {0: "batch", 1: "seq"}})
    for n, seq in enumerate(LENGTHS):
        ids = torch.randint(0, 30522, (1, seq))
        mask = torch.ones_like(ids)
        if seq == 128:
            mask[:, 100:] = 0
        with torch.no_grad():
            out = net(ids, mask)
        folder = os.path.join(work, "sets", "test_data_set_%d" % n)
        os.makedirs(folder, exist_ok=True)
        for i, (name, a) in enumerate([("input_ids", ids), ("attention_mask", mask)]):
            with open(os.path.join(folder, "input_%d.pb" % i), "wb") as f:
                f.write(onnx.numpy_helper.from_array(a.numpy(), name).SerializeToString())
        with open(os.path.join(folder, "output_0.pb"), "wb") as f:
            f.write(onnx.numpy_helper.from_array(out.numpy(), "last_hidden_state")
                    .SerializeToString())
    return model


def programs(work, model, sets, flags):
    """(length, exact program, range program, input files) per length: the
    range's object compiled once, a program per length linked to it."""
    graph = onnx.load(model, load_external_data=False).graph
    result = []
    for n, seq in enumerate(LENGTHS):
        ins = range_chunks.shapes(graph.input, "batch", 1, {"seq": seq})
        # torch names the output's other dims too: torch's output has them.
        ref = onnx.load_tensor(os.path.join(sets, "test_data_set_%d" % n, "output_0.pb"))
        outs = [(list(ref.dims), ref.data_type)]
        files = []
        for i, v in enumerate(graph.input):
            t = onnx.load_tensor(os.path.join(sets, "test_data_set_%d" % n,
                                              "input_%d.pb" % i))
            path = os.path.join(work, "%s_%d.bin" % (v.name, seq))
            onnx.numpy_helper.to_array(t).tofile(path)
            files.append(path)
        exact = range_chunks.build(work, "exact_%d" % seq, model,
                                   ["--dim", "batch=1", "--dim", "seq=%d" % seq] + flags,
                                   ins, outs)
        ranged = range_chunks.build(work, "ranged", model, RANGES + flags, ins, outs,
                                    None if n == 0 else "ranged_%d" % seq)
        if n == 0:  # the object's own program, kept under its length's name
            os.rename(ranged, ranged + "_%d" % seq)
            ranged += "_%d" % seq
        result.append((seq, exact, ranged, files))
    return result


def check_int8(model, sets, flags):
    """The range's int8 outputs against torch's: cosine >= 0.999 per set."""
    with tempfile.TemporaryDirectory() as saved:
        run = subprocess.run([MLCC, "run", model, "--target", "avx512"] + RANGES + flags +
                             ["--data", sets, "--save", saved], capture_output=True, text=True)
        if run.returncode != 0:
            print(run.stdout[-2000:] + run.stderr[-2000:])
            sys.exit("the int8 run failed")
        worst = 1.0
        for folder in sorted(glob.glob(os.path.join(sets, "test_data_set_*"))):
            name = os.path.basename(folder)
            want = onnx.numpy_helper.to_array(onnx.load_tensor(
                os.path.join(folder, "output_0.pb"))).ravel().astype(np.float64)
            got = onnx.numpy_helper.to_array(onnx.load_tensor(
                os.path.join(saved, name, "output_0.pb"))).ravel().astype(np.float64)
            cosine = got @ want / (np.linalg.norm(got) * np.linalg.norm(want))
            print("  %s: %d values, cosine with torch %.5f, max abs error %.3g"
                  % (name, want.size, cosine, np.abs(got - want).max()))
            worst = min(worst, cosine)
    if worst < 0.999:
        sys.exit("check failed: a cosine below 0.999")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--work", default=os.path.expanduser("~/.cache/mlcc/seq-range-bert-2"))
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--quantize", action="store_true")
    a = p.parse_args()
    os.makedirs(a.work, exist_ok=True)
    model = export(a.work)
    sets = os.path.join(a.work, "sets")
    print("CPU: %s; BERT-base%s, one thread" % (range_chunks.cpu_name(),
                                                 " int8" if a.quantize else ""))
    flags = (["--cpu", "native", "--quantize", "int8", "--calibrate", sets]
             if a.quantize else [])
    if a.quantize:
        check_int8(model, sets, flags)
    else:
        check = subprocess.run([MLCC, "run", model, "--target", "avx512"] + RANGES + [
                                "--data", sets, "--check", "--rtol", "1e-3", "--atol", "1e-4"],
                               capture_output=True, text=True)
        for line in check.stdout.splitlines():
            if "max abs error" in line or line.startswith("output"):
                print("  " + line.strip()[:110])
        if check.returncode != 0:
            print(check.stdout[-2000:] + check.stderr[-2000:])
            sys.exit("check failed")
    work = os.path.join(a.work, "programs-int8" if a.quantize else "programs")
    os.makedirs(work, exist_ok=True)
    progs = programs(work, model, sets, flags)
    times = {(seq, kind): [] for seq, *_ in progs for kind in ("exact", "range")}
    env = dict(os.environ, OMP_NUM_THREADS="1")
    for _ in range(a.rounds):
        for seq, exact, ranged, files in progs:
            for kind, exe in (("exact", exact), ("range", ranged)):
                out = subprocess.run([exe, str(a.runs)] + files, env=env, check=True,
                                     capture_output=True, text=True)
                times[(seq, kind)].append(float(out.stdout.strip()))
    print("| length | exact ms | range ms | range / exact |")
    print("|---|---|---|---|")
    for seq, *_ in progs:
        e = statistics.median(times[(seq, "exact")])
        r = statistics.median(times[(seq, "range")])
        print("| %d | %.2f | %.2f | %.3f |" % (seq, e, r, r / e))


if __name__ == "__main__":
    main()
