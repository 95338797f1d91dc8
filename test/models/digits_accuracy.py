"""Top-1 accuracy of a network trained on the digits (export_digits.py,
export_digits_resnet50.py) compiled by mlcc, in fp32, in int8 with each
calibration method and in bf16, on its 500 test images; and how close each
is to mlcc's fp32: top-1 agreement and the cosine similarity of the logits
(mean and minimum over the images).

  digits_accuracy.py MLCC DIR [--cpu CPU] [--min-cosine C]
                     [--min-agreement PERCENT]

Prints one line per precision. Fails (exit 1) when mlcc's fp32 accuracy is
not torch's (within 0.2 points: the same logits up to rounding), when the
best int8 calibration is more than 0.5 points below fp32, when the QDQ
model `mlcc quantize` writes (minmax) does not score what the int8 object
compiled from the original does (it is the same decision), or when the
best int8's mean cosine or top-1 agreement is below the given minimum.
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
parser.add_argument("--min-cosine", type=float, default=0.0)
parser.add_argument("--min-agreement", type=float, default=0.0)
args = parser.parse_args()

def read(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)

test_root = os.path.join(args.dir, "test")
sets = sorted(os.listdir(test_root))

def accuracy(extra, model=os.path.join(args.dir, "model.onnx")):
    """Top-1 in percent and the logits of every image: one compile, every
    test set (mlcc run over a folder of sets)."""
    correct = total = 0
    all_logits = []
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
            all_logits.append(logits)
    return 100.0 * correct / total, np.concatenate(all_logits)

def closeness(logits, reference):
    """Top-1 agreement in percent, mean and minimum cosine, per image."""
    agree = 100.0 * np.mean(logits.argmax(1) == reference.argmax(1))
    cos = (logits * reference).sum(1) / (np.linalg.norm(logits, axis=1) *
                                         np.linalg.norm(reference, axis=1))
    return agree, float(cos.mean()), float(cos.min())

def report(label, acc, logits):
    agree, cos_mean, cos_min = closeness(logits, fp32_logits)
    print("  %-15s %.1f%%   agreement %5.1f%%, cosine mean %.5f, min %.5f"
          % (label, acc, agree, cos_mean, cos_min))
    return agree, cos_mean

with open(os.path.join(args.dir, "torch_accuracy.txt")) as f:
    torch_acc = float(f.read())
fp32, fp32_logits = accuracy([])
print("digits top-1 on 500 test images (--cpu %s), and against mlcc fp32:"
      % args.cpu)
print("  torch fp32      %.1f%%" % torch_acc)
print("  mlcc fp32       %.1f%%" % fp32)
int8 = {}
int8_closeness = {}
for method in ["minmax", "entropy", "percentile", "mse"]:
    int8[method], logits = accuracy(["--quantize", "int8", "--calibrate",
                                     os.path.join(args.dir, "calibration"),
                                     "--calibration", method])
    int8_closeness[method] = report("int8 " + method, int8[method], logits)
with tempfile.TemporaryDirectory() as tmp:
    qdq = os.path.join(tmp, "model.qdq.onnx")
    subprocess.run([args.mlcc, "quantize", os.path.join(args.dir, "model.onnx"),
                    "--dim", "batch=100", "--calibrate",
                    os.path.join(args.dir, "calibration"), "-o", qdq],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    from_qdq, logits = accuracy([], model=qdq)
report("QDQ model", from_qdq, logits)
print("  (QDQ model: what mlcc quantize writes, minmax, compiled by mlcc)")
# bf16 needs AVX512_BF16 on the machine that runs it.
with open("/proc/cpuinfo") as f:
    has_bf16 = " avx512_bf16" in f.read()
bf16 = None
if has_bf16:
    bf16, logits = accuracy(["--precision", "bf16"])
    report("bf16", bf16, logits)
else:
    print("  bf16            skipped: this CPU lacks avx512_bf16")
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
agree, cos_mean = int8_closeness[best]
if cos_mean < args.min_cosine:
    print("FAIL: the best int8's mean cosine %.5f is below %.5f"
          % (cos_mean, args.min_cosine))
    ok = False
if agree < args.min_agreement:
    print("FAIL: the best int8's top-1 agreement %.1f%% is below %.1f%%"
          % (agree, args.min_agreement))
    ok = False
print("best int8 calibration: %s (%+.1f points vs fp32)" % (best, int8[best] - fp32))
sys.exit(0 if ok else 1)
