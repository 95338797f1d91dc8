"""A model with a dynamic batch compiled for several batches, run from C.

    dynamic_batch.py WORKDIR RUNTIME_INCLUDE RUNTIME_LIB

Writes dyn.onnx (x [batch, 8] -> MatMul, Add, Relu, MatMul, Softmax ->
y [batch, 4]) and a C program that runs the model compiled in WORKDIR/dyn.o
(by the lit test, with --dim batch=1,3,8) for each batch given on its
command line, reading x from and writing y to raw files. Then, for batches 3,
8 and 1 (in that order, one context), compares y with NumPy, and checks that
batch 2 is refused. Prints one line per run.
"""
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

MAIN_C = r"""
#include "dyn.h"
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  mlcc_dyn_context *ctx;
  if (mlcc_dyn_create(NULL, &ctx) != MLCC_OK)
    return 1;
  for (int a = 1; a + 2 < argc; a += 3) {
    int64_t batch = atoll(argv[a]);
    float *x = malloc(batch * 8 * sizeof(float));
    float *y = malloc(batch * 4 * sizeof(float));
    FILE *f = fopen(argv[a + 1], "rb");
    if (!f || fread(x, sizeof(float), batch * 8, f) != (size_t)(batch * 8))
      return 2;
    fclose(f);
    int64_t xDims[2] = {batch, 8}, yDims[2] = {batch, 4};
    mlcc_tensor in = {x, xDims, 2, MLCC_DTYPE_F32};
    mlcc_tensor out = {y, yDims, 2, MLCC_DTYPE_F32};
    mlcc_status s = mlcc_dyn_run(ctx, &in, &out);
    printf("batch %lld: %s\n", (long long)batch,
           s == MLCC_OK ? "ok" : mlcc_last_error_message());
    f = fopen(argv[a + 2], "wb");
    fwrite(y, sizeof(float), batch * 4, f);
    fclose(f);
    free(x);
    free(y);
  }
  mlcc_dyn_destroy(ctx);
  return 0;
}
"""


def write_model(path):
    rng = np.random.default_rng(0)
    w = rng.standard_normal((8, 16)).astype(np.float32)
    b = rng.standard_normal(16).astype(np.float32)
    w2 = rng.standard_normal((16, 4)).astype(np.float32)
    nodes = [helper.make_node("MatMul", ["x", "W"], ["h"]),
             helper.make_node("Add", ["h", "B"], ["hb"]),
             helper.make_node("Relu", ["hb"], ["r"]),
             helper.make_node("MatMul", ["r", "W2"], ["l"]),
             helper.make_node("Softmax", ["l"], ["y"], axis=-1)]
    graph = helper.make_graph(
        nodes, "dyn",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", 4])],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(b, "B"),
         numpy_helper.from_array(w2, "W2")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.save(model, path)
    return w, b, w2


def main():
    work, include, lib = sys.argv[1:4]
    w, b, w2 = write_model(os.path.join(work, "dyn.onnx"))
    if len(sys.argv) > 4 and sys.argv[4] == "--model-only":
        return 0
    with open(os.path.join(work, "main.c"), "w") as f:
        f.write(MAIN_C)
    exe = os.path.join(work, "app")
    subprocess.run(["cc", "-std=c11", "-Wall", "-Werror", "-I", include, "-I", work,
                    os.path.join(work, "main.c"), os.path.join(work, "dyn.o"), lib,
                    "-lm", "-lpthread", "-o", exe], check=True)
    rng = np.random.default_rng(1)
    args, wants = [], []
    for batch in (3, 8, 2, 1):
        x = rng.standard_normal((batch, 8)).astype(np.float32)
        x.tofile(os.path.join(work, f"x{batch}.bin"))
        logits = np.maximum(x @ w + b, 0) @ w2
        e = np.exp(logits - logits.max(axis=1, keepdims=True))
        wants.append((batch, e / e.sum(axis=1, keepdims=True)))
        args += [str(batch), os.path.join(work, f"x{batch}.bin"),
                 os.path.join(work, f"y{batch}.bin")]
    out = subprocess.run([exe] + args, check=True, capture_output=True, text=True)
    print(out.stdout, end="")
    for batch, want in wants:
        if batch == 2:
            continue
        got = np.fromfile(os.path.join(work, f"y{batch}.bin"), np.float32)
        err = np.abs(got.reshape(want.shape) - want).max()
        print(f"batch {batch}: max abs error vs numpy "
              f"{'below' if err <= 1e-5 else 'ABOVE'} 1e-5 ({err:.2g})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
