#!/usr/bin/python3
"""How close mlcc's int8 (or bf16) model is to its fp32 model, on many inputs.

    /usr/bin/python3 tools/bench/quant_agreement.py MODEL_DIR [--sets 200]
        [--calibration-sets 16] [--calibration minmax] [--dim batch=1]
        [--cpu native] [--noise-floor 0.01] [--precision bf16]

MODEL_DIR holds model.onnx and test_data_set_0/ (the project's exports).
Inputs are drawn like test_data_set_0's (floats: normal with its mean and
standard deviation; integers: uniform below its largest value, or copied
when it is a mask of 0/1), seeded; calibration sets are drawn apart from
the test sets. One `mlcc run` over all sets per precision (one compile each).
Prints the cosine similarity of the outputs (mean and minimum over sets)
and, for an output with one row of scores per set, the top-1 agreement.

--precision bf16 compares `--precision bf16` instead of int8.
--noise-floor F also runs fp32 on each test set with its float inputs
perturbed by Gaussian noise of F times their standard deviation, and prints
the same figures for that: how far the model's outputs move under a change
far smaller than quantisation's, the floor to judge int8's figures by (a
model with seeded weights can have top-1 margins this small).
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
parser.add_argument("--noise-floor", type=float, default=0.0)
parser.add_argument("--precision", choices=["int8", "bf16"], default="int8")
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
noise_rng = np.random.default_rng(7)  # apart: the sets do not depend on it

def draw(array):
    if np.issubdtype(array.dtype, np.floating):
        return rng.normal(array.mean(), array.std() + 1e-6, array.shape).astype(array.dtype)
    if set(np.unique(array)) <= {0, 1}:
        return array.copy()
    return rng.integers(0, int(array.max()) + 1, array.shape).astype(array.dtype)

def write_sets(root, count, noisy_root=None):
    for s in range(count):
        for r in (root, noisy_root):
            if r:
                os.makedirs(os.path.join(r, "test_data_set_%03d" % s))
        for k, (array, name) in enumerate(samples):
            x = draw(array)
            with open(os.path.join(root, "test_data_set_%03d" % s, "input_%d.pb" % k), "wb") as f:
                f.write(numpy_helper.from_array(x, name).SerializeToString())
            if noisy_root:
                if np.issubdtype(x.dtype, np.floating):
                    x = x + noise_rng.normal(0, args.noise_floor * (array.std() + 1e-6),
                                       x.shape).astype(x.dtype)
                with open(os.path.join(noisy_root, "test_data_set_%03d" % s,
                                       "input_%d.pb" % k), "wb") as f:
                    f.write(numpy_helper.from_array(x, name).SerializeToString())

def compare(tmp, test, a_dir, b_dir):
    cosines, agree, rows = [], 0, 0
    for s in sorted(os.listdir(test)):
        a, _ = read(os.path.join(tmp, a_dir, s, "output_0.pb"))
        b, _ = read(os.path.join(tmp, b_dir, s, "output_0.pb"))
        a64, b64 = a.astype(np.float64).ravel(), b.astype(np.float64).ravel()
        cosines.append(a64 @ b64 / (np.linalg.norm(a64) * np.linalg.norm(b64)))
        if a.ndim == 2:
            agree += int((a.argmax(1) == b.argmax(1)).sum())
            rows += a.shape[0]
    return cosines, agree, rows

def report(what, cosines, agree, rows):
    print("%s over %d inputs: cosine mean %.5f, min %.5f"
          % (what, args.sets, np.mean(cosines), np.min(cosines)))
    if rows:
        print("  top-1 agreement %.1f%% (%d of %d)" % (100.0 * agree / rows, agree, rows))

def run(data, save, extra):
    dims = sum((["--dim", d] for d in args.dim), [])
    subprocess.run([args.mlcc, "run", os.path.join(args.model_dir, "model.onnx"),
                    "--target", "avx512", "--cpu", args.cpu, "--data", data,
                    "--save", save] + dims + extra,
                   check=True, stdout=subprocess.DEVNULL)

name = os.path.basename(os.path.normpath(args.model_dir))
with tempfile.TemporaryDirectory() as tmp:
    test, cal = os.path.join(tmp, "test"), os.path.join(tmp, "cal")
    noisy = os.path.join(tmp, "noisy") if args.noise_floor > 0 else None
    write_sets(test, args.sets, noisy)
    write_sets(cal, args.calibration_sets)
    run(test, os.path.join(tmp, "fp32"), [])
    if args.precision == "bf16":
        run(test, os.path.join(tmp, "low"), ["--precision", "bf16"])
        what = "%s bf16 vs fp32" % name
    else:
        run(test, os.path.join(tmp, "low"),
            ["--quantize", "int8", "--calibrate", cal, "--calibration", args.calibration])
        what = "%s int8 (%s, %d calibration sets) vs fp32" % (
            name, args.calibration, args.calibration_sets)
    report(what, *compare(tmp, test, "fp32", "low"))
    if noisy:
        run(noisy, os.path.join(tmp, "fp32_noisy"), [])
        report("%s fp32 with %g noise on its inputs vs fp32" % (name, args.noise_floor),
               *compare(tmp, test, "fp32", "fp32_noisy"))
