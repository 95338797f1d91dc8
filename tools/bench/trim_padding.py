#!/usr/bin/python3
"""BERT-base on a batch of 8 sequences of mixed lengths padded to 128, with
and without `--trim-padding attention_mask` (each item run at its mask's
length). A benchmark, not a test: it fails only when a check fails, never
on speed.

    /usr/bin/python3 tools/bench/trim_padding.py [--work DIR] [--rounds 3]

It takes tools/bench/seq_range.py's BERT-base (dynamic batch and sequence,
exported into WORK once) and writes a set of 8 sequences ending at 16, 32,
..., 128 in a mask of 128 positions, whose reference is torch at each
item's own length with zeros past it. Then:
  check   mlcc run --dim batch=1..8 --dim seq=1..512 --trim-padding
          attention_mask --check on that set
  time    mlcc bench on the set, compiled with and without --trim-padding,
          one process each per round, interleaved, one thread; the medians'
          ratio trimmed / padded.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys

import onnx.numpy_helper
import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import seq_range  # noqa: E402  (the model and its export)

ENDS = [16, 32, 48, 64, 80, 96, 112, 128]
TRIM = ["--trim-padding", "attention_mask"]


def write_set(work, folder):
    torch.manual_seed(0)
    net = seq_range.DynamicBert().eval()
    ids = torch.randint(0, 30522, (len(ENDS), ENDS[-1]))
    mask = torch.zeros_like(ids)
    want = torch.zeros(len(ENDS), ENDS[-1], 768)
    for b, end in enumerate(ENDS):
        mask[b, :end] = 1
        with torch.no_grad():
            want[b, :end] = net(ids[b:b + 1, :end], mask[b:b + 1, :end])[0]
    os.makedirs(folder, exist_ok=True)
    for i, (name, a) in enumerate([("input_ids", ids), ("attention_mask", mask),
                                   ("last_hidden_state", want)]):
        kind = "output_0" if i == 2 else "input_%d" % i
        with open(os.path.join(folder, kind + ".pb"), "wb") as f:
            f.write(onnx.numpy_helper.from_array(a.numpy(), name).SerializeToString())


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--work", default=os.path.expanduser("~/.cache/mlcc/seq-range-bert-2"))
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--runs", type=int, default=3)
    a = p.parse_args()
    os.makedirs(a.work, exist_ok=True)
    model = seq_range.export(a.work)
    data = os.path.join(a.work, "mixed", "test_data_set_0")
    if not os.path.exists(os.path.join(data, "output_0.pb")):
        write_set(a.work, data)
    print("CPU: %s; BERT-base, batch 8, lengths %s padded to %d, one thread"
          % (seq_range.range_chunks.cpu_name(), ENDS, ENDS[-1]))
    check = subprocess.run([seq_range.MLCC, "run", model, "--target", "avx512"] +
                           seq_range.RANGES + TRIM + ["--data", data, "--check",
                                                      "--rtol", "1e-3", "--atol", "1e-4"],
                           capture_output=True, text=True)
    for line in check.stdout.splitlines():
        if "max abs error" in line:
            print("  trimmed vs torch: " + line.strip()[:100])
    if check.returncode != 0:
        print(check.stdout[-2000:] + check.stderr[-2000:])
        sys.exit("check failed")
    times = {"padded": [], "trimmed": []}
    for _ in range(a.rounds):
        for kind, extra in (("padded", []), ("trimmed", TRIM)):
            out = subprocess.run([seq_range.MLCC, "bench", model] + seq_range.RANGES + extra +
                                 ["--data", data, "--runs", str(a.runs), "--json"],
                                 check=True, capture_output=True, text=True)
            times[kind] += [json.loads(line)["ms"] for line in out.stdout.splitlines()
                            if line.startswith("{")]
    padded, trimmed = statistics.median(times["padded"]), statistics.median(times["trimmed"])
    print("| padded ms | trimmed ms | trimmed / padded | sum of lengths / padded |")
    print("|---|---|---|---|")
    print("| %.1f | %.1f | %.3f | %.3f |" % (padded, trimmed, trimmed / padded,
                                             sum(ENDS) / (len(ENDS) * ENDS[-1])))


if __name__ == "__main__":
    main()
