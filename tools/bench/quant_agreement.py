#!/usr/bin/python3
"""How close mlcc's int8 model is to its fp32 model, on many inputs.

    /usr/bin/python3 tools/bench/quant_agreement.py MODEL_DIR [--sets 200]
        [--calibration-sets 16] [--calibration minmax] [--dim batch=1]
        [--cpu native]

MODEL_DIR holds model.onnx and test_data_set_0/ (the project's exports).
Inputs are drawn like test_data_set_0's (floats: normal with its mean and
standard deviation; integers: uniform below its largest value, or copied
when it is a mask of 0/1), seeded; calibration sets are drawn apart from
the test sets. One `mlcc run` over all sets per precision (one compile each).
Prints the cosine similarity of the outputs (mean and minimum over sets)
and, for an output with one row of scores per set, the top-1 agreement.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
parser = argparse.ArgumentParser()
parser.add_argument("model_dir")
parser.add_argument("--sets", type=int, default=200)
parser.add_argument("--calibration-sets", type=int, default=16)
parser.add_argument("--calibration", default="minmax")
parser.add_argument("--dim", action="append", default=[])
parser.add_argument("--cpu", default="native")
parser.add_argument("--mlcc", default=os.path.join(ROOT, "build", "bin", "mlcc"))
args = parser.parse_args()

def read(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t), t.name

sample_dir = os.path.join(args.model_dir, "test_data_set_0")
samples = []
i = 0
while os.path.exists(os.path.join(sample_dir, "input_%d.pb" % i)):
    samples.append(read(os.path.join(sample_dir, "input_%d.pb" % i)))
    i += 1
rng = np.random.default_rng(2026)

def draw(array):
    if np.issubdtype(array.dtype, np.floating):
        return rng.normal(array.mean(), array.std() + 1e-6, array.shape).astype(array.dtype)
    if set(np.unique(array)) <= {0, 1}:
        return array.copy()
    return rng.integers(0, int(array.max()) + 1, array.shape).astype(array.dtype)

def write_sets(root, count):
    for s in range(count):
        d = os.path.join(root, "test_data_set_%03d" % s)
        os.makedirs(d)
        for k, (array, name) in enumerate(samples):
            with open(os.path.join(d, "input_%d.pb" % k), "wb") as f:
                f.write(numpy_helper.from_array(draw(array), name).SerializeToString())

def run(data, save, extra):
    dims = sum((["--dim", d] for d in args.dim), [])
    subprocess.run([args.mlcc, "run", os.path.join(args.model_dir, "model.onnx"),
                    "--target", "avx512", "--cpu", args.cpu, "--data", data,
                    "--save", save] + dims + extra,
                   check=True, stdout=subprocess.DEVNULL)

with tempfile.TemporaryDirectory() as tmp:
    test, cal = os.path.join(tmp, "test"), os.path.join(tmp, "cal")
    write_sets(test, args.sets)
    write_sets(cal, args.calibration_sets)
    run(test, os.path.join(tmp, "fp32"), [])
    run(test, os.path.join(tmp, "int8"),
        ["--quantize", "int8", "--calibrate", cal, "--calibration", args.calibration])
    cosines, agree, rows = [], 0, 0
    for s in sorted(os.listdir(test)):
        a, _ = read(os.path.join(tmp, "fp32", s, "output_0.pb"))
        b, _ = read(os.path.join(tmp, "int8", s, "output_0.pb"))
        a64, b64 = a.astype(np.float64).ravel(), b.astype(np.float64).ravel()
        cosines.append(a64 @ b64 / (np.linalg.norm(a64) * np.linalg.norm(b64)))
        if a.ndim == 2:
            agree += int((a.argmax(1) == b.argmax(1)).sum())
            rows += a.shape[0]
name = os.path.basename(os.path.normpath(args.model_dir))
print("%s int8 (%s, %d calibration sets) vs fp32 over %d inputs: cosine mean %.5f, min %.5f"
      % (name, args.calibration, args.calibration_sets, args.sets,
         np.mean(cosines), np.min(cosines)))
if rows:
    print("  top-1 agreement %.1f%% (%d of %d)" % (100.0 * agree / rows, agree, rows))
