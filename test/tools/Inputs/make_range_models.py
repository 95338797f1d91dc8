"""Models with a dynamic batch for `--dim batch=LO..HI`, and a C program that
runs one compiled object on several batches.

    make_range_models.py WORKDIR                 the models
    make_range_models.py WORKDIR INCLUDE LIB B.. the C program over cnn.o,
                                                 run for batches B..

The models (torch exports with dynamic_axes):
  cnn.onnx   x [batch, 1, 12, 12] -> conv, batch norm, relu, max pool, conv,
             relu, global average pool, linear, softmax -> y [batch, 10]
  attn.onnx  x [batch, 6, 16] -> attention over each item's 6 rows and a
             residual -> h [batch, 6, 16]; with seq dynamic too (attn_seq)
  mix.onnx   x [batch, 8] -> x - mean over the batch: items depend on each
             other, which a range must refuse
and cnn_data/test_data_set_N, model-zoo sets of cnn at batches 3 and 13
with torch's outputs.

The C program runs the batches in one context, in the order given, and
prints each run's status; then the outputs are compared with torch's (max
abs error 1e-4) for the runs that succeeded.
"""
import os
import subprocess
import sys

import numpy as np
import onnx
import onnx.numpy_helper
import torch

MAIN_C = r"""
#include "cnn.h"
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
  mlcc_cnn_context *ctx;
  if (mlcc_cnn_create(NULL, &ctx) != MLCC_OK)
    return 1;
  for (int a = 1; a + 2 < argc; a += 3) {
    int64_t batch = atoll(argv[a]);
    size_t inCount = (size_t)batch * 144, outCount = (size_t)batch * 10;
    float *x = malloc(inCount * sizeof(float) + 1);
    float *y = malloc(outCount * sizeof(float) + 1);
    FILE *f = fopen(argv[a + 1], "rb");
    if (!f || fread(x, sizeof(float), inCount, f) != inCount)
      return 2;
    fclose(f);
    int64_t xDims[4] = {batch, 1, 12, 12}, yDims[2] = {batch, 10};
    mlcc_tensor in = {x, xDims, 4, MLCC_DTYPE_F32};
    mlcc_tensor out = {y, yDims, 2, MLCC_DTYPE_F32};
    mlcc_status s = mlcc_cnn_run(ctx, &in, &out);
    printf("batch %lld: %s\n", (long long)batch,
           s == MLCC_OK ? "ok" : mlcc_last_error_message());
    f = fopen(argv[a + 2], "wb");
    fwrite(y, sizeof(float), outCount, f);
    fclose(f);
    free(x);
    free(y);
  }
  /* An output whose batch is not the input's. */
  int64_t xDims[4] = {3, 1, 12, 12}, yDims[2] = {2, 10};
  float x[3 * 144] = {0}, y[3 * 10];
  mlcc_tensor in = {x, xDims, 4, MLCC_DTYPE_F32};
  mlcc_tensor out = {y, yDims, 2, MLCC_DTYPE_F32};
  if (mlcc_cnn_run(ctx, &in, &out) != MLCC_OK)
    printf("mismatch: %s\n", mlcc_last_error_message());
  mlcc_cnn_destroy(ctx);
  return 0;
}
"""


class Cnn(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(1, 8, 3, padding=1)
        self.bn = torch.nn.BatchNorm2d(8)
        self.conv2 = torch.nn.Conv2d(8, 16, 3)
        self.fc = torch.nn.Linear(16, 10)

    def forward(self, x):
        h = torch.max_pool2d(torch.relu(self.bn(self.conv1(x))), 2)
        h = torch.relu(self.conv2(h)).mean(dim=(2, 3))
        return torch.softmax(self.fc(h), dim=-1)


class Attention(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.qkv = torch.nn.Linear(16, 48)

    def forward(self, x):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        scores = torch.matmul(q, k.transpose(1, 2)) / 4.0
        return torch.matmul(torch.softmax(scores, dim=-1), v) + x


class Mix(torch.nn.Module):
    def forward(self, x):
        return x - x.mean(dim=0, keepdim=True)


def export(model, example, path, axes):
    torch.onnx.export(model, (example,), path, opset_version=13,
                      input_names=["x"], output_names=["y"],
                      dynamic_axes={"x": axes, "y": axes})


def cnn_model():
    torch.manual_seed(5)
    model = Cnn().eval()
    with torch.no_grad():  # batch norm statistics that are not the identity
        model.bn.running_mean.uniform_(-0.5, 0.5)
        model.bn.running_var.uniform_(0.5, 2.0)
    return model


def write_models(work):
    export(cnn_model(), torch.zeros(2, 1, 12, 12),
           os.path.join(work, "cnn.onnx"), {0: "batch"})
    torch.manual_seed(6)
    attn = Attention().eval()
    export(attn, torch.zeros(2, 6, 16), os.path.join(work, "attn.onnx"),
           {0: "batch"})
    export(attn, torch.zeros(2, 6, 16), os.path.join(work, "attn_seq.onnx"),
           {0: "batch", 1: "seq"})
    export(Mix(), torch.zeros(2, 8), os.path.join(work, "mix.onnx"),
           {0: "batch"})
    rng = np.random.default_rng(8)
    for i, batch in enumerate([3, 13]):
        folder = os.path.join(work, "cnn_data", f"test_data_set_{i}")
        os.makedirs(folder, exist_ok=True)
        x = rng.standard_normal((batch, 1, 12, 12)).astype(np.float32)
        with torch.no_grad():
            y = cnn_model()(torch.from_numpy(x)).numpy()
        for name, array in [("input_0", x), ("output_0", y)]:
            with open(os.path.join(folder, name + ".pb"), "wb") as f:
                f.write(onnx.numpy_helper.from_array(array).SerializeToString())


def run_app(work, include, lib, batches):
    with open(os.path.join(work, "main.c"), "w") as f:
        f.write(MAIN_C)
    exe = os.path.join(work, "app")
    subprocess.run(["cc", "-std=c11", "-Wall", "-Werror", "-I", include,
                    "-I", work, os.path.join(work, "main.c"),
                    os.path.join(work, "cnn.o"), lib, "-lm", "-lpthread",
                    "-o", exe], check=True)
    model = cnn_model()
    rng = np.random.default_rng(7)
    args, wants = [], []
    for i, batch in enumerate(batches):
        x = rng.standard_normal((max(batch, 0), 1, 12, 12)).astype(np.float32)
        x.tofile(os.path.join(work, f"x{i}.bin"))
        with torch.no_grad():
            wants.append(model(torch.from_numpy(x)).numpy())
        args += [str(batch), os.path.join(work, f"x{i}.bin"),
                 os.path.join(work, f"y{i}.bin")]
    out = subprocess.run([exe] + args, check=True, capture_output=True,
                         text=True)
    print(out.stdout, end="")
    lines = out.stdout.splitlines()
    for i, (batch, want) in enumerate(zip(batches, wants)):
        if not lines[i].endswith(": ok"):
            continue
        got = np.fromfile(os.path.join(work, f"y{i}.bin"), np.float32)
        err = np.abs(got.reshape(want.shape) - want).max()
        print(f"batch {batch}: max abs error vs torch "
              f"{'below' if err <= 1e-4 else 'ABOVE'} 1e-4 ({err:.2g})")


def main():
    work = sys.argv[1]
    if len(sys.argv) == 2:
        write_models(work)
    else:
        run_app(work, sys.argv[2], sys.argv[3],
                [int(b) for b in sys.argv[4:]])
    return 0


if __name__ == "__main__":
    sys.exit(main())
