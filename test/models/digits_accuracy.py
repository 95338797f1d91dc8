"""Top-1 accuracy of the digits CNN (export_digits.py) compiled by mlcc, in
fp32, in int8 with each calibration method and in bf16, on its 500 test
images.

  digits_accuracy.py MLCC DIGITS_DIR [--cpu CPU]

Prints one line per precision. Fails (exit 1) when mlcc's fp32 accuracy is
not torch's (within 0.2 points: the same logits up to rounding), when the
best int8 calibration is more than 0.5 points below fp32, or when the QDQ
model `mlcc quantize` writes (minmax) does not score what the int8 object
compiled from the original does: it is the same decision.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

parser = argparse.ArgumentParser()
parser.add_argument("mlcc")
parser.add_argument("dir")
parser.add_argument("--cpu", default="native")
args = parser.parse_args()

def read(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)

test_root = os.path.join(args.dir, "test")
sets = sorted(os.listdir(test_root))

def accuracy(extra, model=os.path.join(args.dir, "model.onnx")):
    """One compile, every test set (mlcc run over a folder of sets)."""
    correct = total = 0
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([args.mlcc, "run", model,
                        "--target", "avx512", "--cpu", args.cpu,
                        "--dim", "batch=100", "--data", test_root,
                        "--save", tmp] + extra,
                       check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        for s in sets:
            logits = read(os.path.join(tmp, s, "output_0.pb"))
            labels = read(os.path.join(test_root, s, "labels.pb"))
            correct += int((logits.argmax(1) == labels).sum())
            total += len(labels)
    return 100.0 * correct / total

with open(os.path.join(args.dir, "torch_accuracy.txt")) as f:
    torch_acc = float(f.read())
fp32 = accuracy([])
print("digits top-1 on 500 test images (--cpu %s):" % args.cpu)
print("  torch fp32     %.1f%%" % torch_acc)
print("  mlcc fp32      %.1f%%" % fp32)
int8 = {}
for method in ["minmax", "entropy", "percentile", "mse"]:
    int8[method] = accuracy(["--quantize", "int8", "--calibrate",
                             os.path.join(args.dir, "calibration"),
                             "--calibration", method])
    print("  mlcc int8 %-10s %.1f%%" % (method, int8[method]))
with tempfile.TemporaryDirectory() as tmp:
    qdq = os.path.join(tmp, "model.qdq.onnx")
    subprocess.run([args.mlcc, "quantize", os.path.join(args.dir, "model.onnx"),
                    "--dim", "batch=100", "--calibrate",
                    os.path.join(args.dir, "calibration"), "-o", qdq],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    from_qdq = accuracy([], model=qdq)
print("  mlcc on its QDQ model (mlcc quantize, minmax) %.1f%%" % from_qdq)
# bf16 needs AVX512_BF16 on the machine that runs it.
with open("/proc/cpuinfo") as f:
    has_bf16 = " avx512_bf16" in f.read()
bf16 = accuracy(["--precision", "bf16"]) if has_bf16 else None
print("  mlcc bf16      " + ("%.1f%%" % bf16 if has_bf16 else
                             "skipped: this CPU lacks avx512_bf16"))
best = max(int8, key=int8.get)
ok = True
if bf16 is not None and bf16 < fp32 - 0.5:
    print("FAIL: bf16 is more than 0.5 points below fp32")
    ok = False
if from_qdq != int8["minmax"]:
    print("FAIL: the QDQ model scores %.1f%%, the int8 object %.1f%%"
          % (from_qdq, int8["minmax"]))
    ok = False
if abs(fp32 - torch_acc) > 0.2:
    print("FAIL: mlcc fp32 differs from torch by more than 0.2 points")
    ok = False
if int8[best] < fp32 - 0.5:
    print("FAIL: the best int8 (%s) is more than 0.5 points below fp32" % best)
    ok = False
print("best int8 calibration: %s (%+.1f points vs fp32)" % (best, int8[best] - fp32))
sys.exit(0 if ok else 1)
