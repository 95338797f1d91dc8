#!/usr/bin/python3
"""What a range of a batch dim costs: one model with a symbolic batch,
compiled as the exact batch and as ranges, linked into C programs that time
a call of that batch. A benchmark, not a test: it never fails on speed.

    /usr/bin/python3 tools/bench/range_chunks.py MODEL.onnx --batch 8 [--dim NAME=V ...]

Objects (the batch dim is the model's dim 0 named --batch-name, "batch"):
  exact      --dim batch=B
  chunk      --dim batch=1..64,C   (C = --chunk, default B)
  ones       --dim batch=1..64     (B calls of one item)
Each round runs every program once (interleaved, one thread), each program
timing --runs calls after one warm-up; the figure is the median over rounds
of the programs' medians, reported as ratios to exact.
"""

import argparse
import os
import platform
import statistics
import subprocess
import sys
import tempfile

import numpy as np
import onnx

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
MLCC = os.path.join(ROOT, "build", "bin", "mlcc")
RUNTIME_INCLUDE = os.path.join(ROOT, "runtime", "include")
RUNTIME_LIB = os.path.join(ROOT, "build", "runtime", "libmlcc_runtime.a")

DTYPES = {onnx.TensorProto.FLOAT: ("MLCC_DTYPE_F32", np.float32),
          onnx.TensorProto.INT64: ("MLCC_DTYPE_I64", np.int64),
          onnx.TensorProto.INT32: ("MLCC_DTYPE_I32", np.int32)}

MAIN_C = r"""
#define _POSIX_C_SOURCE 199309L
#include "NAME.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
  int runs = atoi(argv[1]);
  mlcc_tensor in[NUM_IN], out[NUM_OUT];
  int64_t inDims[NUM_IN][8] = {IN_DIMS}, outDims[NUM_OUT][8] = {OUT_DIMS};
  int inRank[NUM_IN] = {IN_RANKS}, outRank[NUM_OUT] = {OUT_RANKS};
  mlcc_dtype inType[NUM_IN] = {IN_TYPES}, outType[NUM_OUT] = {OUT_TYPES};
  size_t inBytes[NUM_IN] = {IN_BYTES}, outBytes[NUM_OUT] = {OUT_BYTES};
  for (int i = 0; i < NUM_IN; ++i) {
    in[i] = (mlcc_tensor){malloc(inBytes[i]), inDims[i], inRank[i], inType[i]};
    FILE *f = fopen(argv[2 + i], "rb");
    if (!f || fread((void *)in[i].data, 1, inBytes[i], f) != inBytes[i])
      return 2;
    fclose(f);
  }
  for (int i = 0; i < NUM_OUT; ++i)
    out[i] = (mlcc_tensor){malloc(outBytes[i]), outDims[i], outRank[i],
                           outType[i]};
  mlcc_NAME_context *ctx;
  if (mlcc_NAME_create(NULL, &ctx) != MLCC_OK ||
      mlcc_NAME_run(ctx, in, out) != MLCC_OK) {
    puts(mlcc_last_error_message());
    return 1;
  }
  double *ms = malloc(runs * sizeof(double));
  for (int r = 0; r < runs; ++r) {
    double t0 = now();
    mlcc_NAME_run(ctx, in, out);
    ms[r] = now() - t0;
  }
  qsort(ms, runs, sizeof(double), cmp);
  printf("%.4f\n", ms[runs / 2]);
  mlcc_NAME_destroy(ctx);
  return 0;
}
"""


def cpu_name():
    """The model name with its family and model (names alone can be vague:
    "AMD EPYC")."""
    fields = {}
    with open("/proc/cpuinfo") as f:
        for line in f:
            key, _, value = line.partition(":")
            fields.setdefault(key.strip(), value.strip())
            if not line.strip():
                break
    return "%s (family %s, model %s)" % (
        fields.get("model name", platform.processor() or "unknown"),
        fields.get("cpu family", "?"), fields.get("model", "?"))


def shapes(values, batch_name, batch, dims):
    """(dims, dtype) per value, the batch and --dim values put in."""
    result = []
    for v in values:
        t = v.type.tensor_type
        shape = []
        for d in t.shape.dim:
            if d.dim_param == batch_name:
                shape.append(batch)
            elif d.dim_param:
                shape.append(dims[d.dim_param])
            else:
                shape.append(d.dim_value)
        result.append((shape, t.elem_type))
    return result


def build(work, name, model, flags, ins, outs, exe_name=None):
    """A program timing `model` compiled with `flags` as `name` on inputs of
    the shapes `ins`; with `exe_name`, another program over the object a
    call with that `name` compiled (one compile, several shapes)."""
    obj = os.path.join(work, name + ".o")
    if exe_name is None:
        subprocess.run([MLCC, "compile", model, "--name", name, "-o", obj] + flags,
                       check=True, stderr=subprocess.DEVNULL)
    c = MAIN_C.replace("NAME", name)
    def arr(items):
        return ", ".join(items)
    sub = {
        "NUM_IN": str(len(ins)), "NUM_OUT": str(len(outs)),
        "IN_DIMS": arr("{%s}" % arr(map(str, s)) for s, _ in ins),
        "OUT_DIMS": arr("{%s}" % arr(map(str, s)) for s, _ in outs),
        "IN_RANKS": arr(str(len(s)) for s, _ in ins),
        "OUT_RANKS": arr(str(len(s)) for s, _ in outs),
        "IN_TYPES": arr(DTYPES[t][0] for _, t in ins),
        "OUT_TYPES": arr(DTYPES[t][0] for _, t in outs),
        "IN_BYTES": arr(str(int(np.prod(s)) * np.dtype(DTYPES[t][1]).itemsize)
                        for s, t in ins),
        "OUT_BYTES": arr(str(int(np.prod(s)) * np.dtype(DTYPES[t][1]).itemsize)
                         for s, t in outs),
    }
    for key in sorted(sub, key=len, reverse=True):
        c = c.replace(key, sub[key])
    exe = os.path.join(work, exe_name or name)
    src = exe + ".c"
    with open(src, "w") as f:
        f.write(c)
    subprocess.run(["cc", "-O2", "-std=c11", "-I", RUNTIME_INCLUDE, "-I", work,
                    src, obj, RUNTIME_LIB, "-lm", "-lpthread", "-o", exe],
                   check=True)
    return exe


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("model")
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--chunk", type=int, default=0)
    p.add_argument("--batch-name", default="batch")
    p.add_argument("--dim", action="append", default=[],
                   help="NAME=V for the model's other symbolic dims")
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args()
    dims = dict((d.split("=")[0], int(d.split("=")[1])) for d in args.dim)
    chunk = args.chunk or args.batch
    graph = onnx.load(args.model, load_external_data=False).graph
    inits = {i.name for i in graph.initializer}
    inputs = [v for v in graph.input if v.name not in inits]
    ins = shapes(inputs, args.batch_name, args.batch, dims)
    outs = shapes(graph.output, args.batch_name, args.batch, dims)
    other = [x for kv in dims.items() for x in ("--dim", "%s=%d" % kv)]
    b = args.batch_name
    configs = [("exact", ["--dim", "%s=%d" % (b, args.batch)]),
               ("chunk", ["--dim", "%s=1..64,%d" % (b, chunk)]),
               ("ones", ["--dim", "%s=1..64" % b])]
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as work:
        files = []
        for v, (shape, t) in zip(inputs, ins):
            path = os.path.join(work, v.name.replace("/", "_") + ".bin")
            if t == onnx.TensorProto.FLOAT:
                data = rng.standard_normal(shape).astype(np.float32)
            elif "mask" in v.name:
                data = np.ones(shape, DTYPES[t][1])
            else:
                data = rng.integers(0, 100, shape).astype(DTYPES[t][1])
            data.tofile(path)
            files.append(path)
        exes = [(n, build(work, "m_" + n, args.model, f + other, ins, outs))
                for n, f in configs]
        times = {n: [] for n, _ in exes}
        env = dict(os.environ, OMP_NUM_THREADS="1")
        for _ in range(args.rounds):
            for n, exe in exes:
                out = subprocess.run([exe, str(args.runs)] + files, env=env,
                                     check=True, capture_output=True,
                                     text=True)
                times[n].append(float(out.stdout.strip()))
    med = {n: statistics.median(t) for n, t in times.items()}
    print("%s, batch %d (chunk %d), 1 thread, %s" %
          (os.path.basename(os.path.dirname(os.path.abspath(args.model)))
           if os.path.basename(args.model) == "model.onnx"
           else os.path.basename(args.model), args.batch, chunk, cpu_name()))
    for n, _ in configs:
        print("  %-6s %9.3f ms  %.3f x exact" % (n, med[n],
                                                  med[n] / med["exact"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
