"""Inputs of einsum.mlir and its outputs by numpy's einsum (in double),
in the model-zoo layout: python3 einsum_data.py DIR."""
import sys

import numpy as np
import onnx.numpy_helper as h

out = sys.argv[1]
r = np.random.default_rng(8)
q = r.uniform(-1, 1, (2, 4, 8, 16)).astype(np.float32)
k = r.uniform(-1, 1, (2, 4, 10, 16)).astype(np.float32)
p = r.uniform(0, 1, (2, 4, 8, 10)).astype(np.float32)
x = r.uniform(-1, 1, (2, 5, 8)).astype(np.float32)
m = r.uniform(-1, 1, (6, 6)).astype(np.float32)
w = np.array([[0.5, -1.0, 0.25], [1.5, 0.75, -0.5], [-0.25, 2.0, 1.0],
              [0.125, -0.75, 0.5], [1.0, 0.0, -1.5], [-2.0, 0.5, 0.25],
              [0.75, 1.25, -0.125], [-1.0, 0.375, 2.0]])
v = np.array([1.0, -2.0, 0.5, 3.0, -0.25, 1.5])
d = lambda a: a.astype(np.float64)
col = np.einsum("bsd,df->d", d(x), w).astype(np.float32)
outputs = {
    "scores": np.einsum("bhqd,bhkd->bhqk", d(q), d(k)),
    "context": np.einsum("bhqk,bhkd->bhqd", d(p), d(k)),
    "projection": np.einsum("bsd,df->bsf", d(x), w),
    "permuted": np.einsum("bhqd,bhkd->kbhq", d(q), d(k)),
    "outer": np.einsum("i,j->ij", d(col), v),
    "diagonal": np.einsum("ii,i->i", d(m), v),
}
for i, (name, a) in enumerate([("q", q), ("k", k), ("p", p), ("x", x),
                               ("m", m)]):
    with open(f"{out}/input_{i}.pb", "wb") as f:
        f.write(h.from_array(a, name).SerializeToString())
for i, (name, a) in enumerate(outputs.items()):
    with open(f"{out}/output_{i}.pb", "wb") as f:
        f.write(h.from_array(a.astype(np.float32), name).SerializeToString())
