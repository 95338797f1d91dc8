#!/usr/bin/python3
"""Batch-N copies of batch-1 model folders, for throughput benchmarks.

    /usr/bin/python3 tools/bench/batched.py --batch 32 OUT MODEL_DIR [MODEL_DIR ...]
    /usr/bin/python3 tools/bench/bench.py --models OUT --threads 1,2

Each MODEL_DIR (model.onnx + test_data_set_0/, as export_models.py writes)
becomes OUT/<name>_b<N>/: the model with dim 0 of every input and output
set to N, and a test set whose inputs are the batch-1 inputs repeated N
times and whose outputs are the batch-1 references repeated N times. That
reference is exact for any model whose items do not mix (inference-mode
batch norm, no reduction over the batch), so bench.py's check still holds
both contenders to the torch/NumPy outputs; it cannot catch items swapped
with each other, which the conformance and range tests do. A model whose
graph fixes the batch elsewhere (a Reshape to 1 x ...) fails that check or
ONNX Runtime's session, and says so.
"""

import argparse
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper


def repeat_tensor_file(src, dst, batch):
    t = onnx.TensorProto()
    with open(src, "rb") as f:
        t.ParseFromString(f.read())
    a = numpy_helper.to_array(t)
    if a.ndim == 0 or a.shape[0] != 1:
        sys.exit(f"{src}: dim 0 is {a.shape[:1]}, not a batch of 1")
    with open(dst, "wb") as f:
        f.write(numpy_helper.from_array(np.repeat(a, batch, axis=0), t.name).SerializeToString())


def batched_copy(model_dir, out, batch):
    name = os.path.basename(os.path.normpath(model_dir))
    dst = os.path.join(out, f"{name}_b{batch}")
    model = onnx.load(os.path.join(model_dir, "model.onnx"))
    for value in list(model.graph.input) + list(model.graph.output):
        dims = value.type.tensor_type.shape.dim
        if not dims:
            sys.exit(f"{name}: '{value.name}' has no dims to batch")
        dims[0].Clear()
        dims[0].dim_value = batch
    # Shapes inferred for batch 1 would contradict the new inputs.
    del model.graph.value_info[:]
    os.makedirs(os.path.join(dst, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(dst, "model.onnx"))
    src_set = os.path.join(model_dir, "test_data_set_0")
    for f in sorted(os.listdir(src_set)):
        if f.endswith(".pb"):
            repeat_tensor_file(os.path.join(src_set, f),
                               os.path.join(dst, "test_data_set_0", f), batch)
    print(dst)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("out")
    ap.add_argument("models", nargs="+")
    args = ap.parse_args()
    for m in args.models:
        batched_copy(m, args.out, args.batch)


if __name__ == "__main__":
    main()
