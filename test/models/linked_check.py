#!/usr/bin/python3
"""Compiles a model folder's model.onnx with `mlcc compile --target avx512`,
links the object and the generated header into a small C program with the
static runtime (as an application would), runs it on test_data_set_0's
inputs and compares its outputs with the folder's torch/NumPy references.

    linked_check.py MLCC RUNTIME_INCLUDE RUNTIME_LIB MODEL_DIR RTOL ATOL [DIM]
                    [--weights-external] [--target NAME]

The C program is written from the header's constants: it reads each input
from a raw file of MLCC_NET_INPUT_<i>_BYTES bytes, calls mlcc_net_run_static
and writes each output raw. Exit status 0 when every output is within
|got - want| <= atol + rtol * |want|.

With --weights-external the model is compiled with `--weights external`:
the program creates its context from the weights file, and a copy of that
file with another fingerprint must be refused.

--target chooses the backend (default avx512); a device target (vulkan)
runs on the device the runtime opens (MLCC_DEVICE and VK_ICD_FILENAMES
choose: lavapipe in the tests).
"""
import glob
import os
import re
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

MAIN_C = r"""
#include "net.h"
#include <stdio.h>
#include <stdlib.h>

static void *read_file(const char *path, size_t bytes) {
  void *p = malloc(bytes ? bytes : 1);
  FILE *f = fopen(path, "rb");
  if (!p || !f || fread(p, 1, bytes, f) != bytes) {
    fprintf(stderr, "cannot read %zu bytes from %s\n", bytes, path);
    exit(2);
  }
  fclose(f);
  return p;
}

int main(int argc, char **argv) {
  if (argc != 1 + MLCC_NET_NUM_INPUTS + MLCC_NET_NUM_OUTPUTS) {
    fprintf(stderr, "usage: inputs... outputs...\n");
    return 2;
  }
  mlcc_net_context *ctx;
#ifdef MLCC_NET_WEIGHTS_BYTES
  const char *weights = getenv("NET_WEIGHTS");
  if (mlcc_net_create(NULL, weights ? weights : "", &ctx) != MLCC_OK) {
#else
  if (mlcc_net_create(NULL, &ctx) != MLCC_OK) {
#endif
    fprintf(stderr, "create: %s\n", mlcc_last_error_message());
    return 1;
  }
@BODY@
  mlcc_net_destroy(ctx);
  return 0;
}
"""


def main():
    argv = sys.argv[1:]
    target = "avx512"
    if "--target" in argv:
        at = argv.index("--target")
        target = argv[at + 1]
        del argv[at:at + 2]
    args = [a for a in argv if a != "--weights-external"]
    external = len(args) < len(argv)
    mlcc, include, lib, model_dir, rtol, atol = args[0:6]
    dims = args[6:7]
    rtol, atol = float(rtol), float(atol)
    with tempfile.TemporaryDirectory() as tmp:
        obj, header = os.path.join(tmp, "net.o"), os.path.join(tmp, "net.h")
        cmd = [mlcc, "compile", os.path.join(model_dir, "model.onnx"), "--target",
               target, "--name", "net", "-o", obj, "--header", header]
        for d in dims:
            cmd += ["--dim", d]
        weights = os.path.join(tmp, "net.weights")
        if external:
            cmd += ["--weights", "external", "--weights-file", weights]
        subprocess.run(cmd, check=True)
        text = open(header).read()
        n_in = int(re.search(r"#define MLCC_NET_NUM_INPUTS (\d+)", text).group(1))
        n_out = int(re.search(r"#define MLCC_NET_NUM_OUTPUTS (\d+)", text).group(1))
        body = []
        for i in range(n_in):
            body.append(f"  void *in{i} = read_file(argv[{1 + i}], MLCC_NET_INPUT_{i}_BYTES);")
        for i in range(n_out):
            body.append(f"  void *out{i} = malloc(MLCC_NET_OUTPUT_{i}_BYTES + 1);")
        args = ", ".join(["ctx"] + [f"in{i}" for i in range(n_in)] +
                         [f"out{i}" for i in range(n_out)])
        body.append(f"  if (mlcc_net_run_static({args}) != MLCC_OK) {{")
        body.append('    fprintf(stderr, "run: %s\\n", mlcc_last_error_message());')
        body.append("    return 1;\n  }")
        for i in range(n_out):
            body.append(f'  {{ FILE *f = fopen(argv[{1 + n_in + i}], "wb");')
            body.append(f"    fwrite(out{i}, 1, MLCC_NET_OUTPUT_{i}_BYTES, f); fclose(f); }}")
        with open(os.path.join(tmp, "main.c"), "w") as f:
            f.write(MAIN_C.replace("@BODY@", "\n".join(body)))
        exe = os.path.join(tmp, "app")
        subprocess.run(["cc", "-std=c11", "-Wall", "-Werror", "-I", include, "-I", tmp,
                        os.path.join(tmp, "main.c"), obj, lib, "-lm", "-lpthread", "-ldl",
                        "-o", exe], check=True)

        data = os.path.join(model_dir, "test_data_set_0")
        inputs, outputs, wants = [], [], []
        for i in range(n_in):
            t = onnx.TensorProto()
            t.ParseFromString(open(os.path.join(data, f"input_{i}.pb"), "rb").read())
            path = os.path.join(tmp, f"in{i}.bin")
            numpy_helper.to_array(t).tofile(path)
            inputs.append(path)
        for i in range(n_out):
            t = onnx.TensorProto()
            t.ParseFromString(open(os.path.join(data, f"output_{i}.pb"), "rb").read())
            wants.append(numpy_helper.to_array(t))
            outputs.append(os.path.join(tmp, f"out{i}.bin"))
        env = dict(os.environ, NET_WEIGHTS=weights)
        subprocess.run([exe] + inputs + outputs, check=True, env=env)
        ok = True
        if external:
            # Another compile's file: same name, another fingerprint.
            image = bytearray(open(weights, "rb").read())
            image[24] ^= 1
            stale = os.path.join(tmp, "stale.weights")
            open(stale, "wb").write(image)
            r = subprocess.run([exe] + inputs + outputs, capture_output=True,
                               text=True, env=dict(env, NET_WEIGHTS=stale))
            refused = r.returncode == 1 and "another compile" in r.stderr
            print("stale weights file " + ("refused" if refused else
                                           f"NOT refused: {r.stderr!r}"))
            ok &= refused
            size = os.path.getsize(obj)
            print(f"object {size} bytes, weights file {len(image)} bytes")
        for i, want in enumerate(wants):
            got = np.fromfile(outputs[i], dtype=want.dtype).reshape(want.shape)
            err = np.abs(got.astype(np.float64) - want)
            bad = int(np.sum(err > atol + rtol * np.abs(want)))
            print(f"output {i} {list(want.shape)}: max abs error {err.max():.3g}, "
                  f"{bad} of {want.size} outside atol {atol} + rtol {rtol}")
            ok &= bad == 0
        print("linked check " + ("passed" if ok else "FAILED"))
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
