#!/usr/bin/python3
"""Writes the per-iteration overhead benchmark of issue 5: a Jacobi solver
for the 2-D Poisson equation on a 64x64 grid as an ONNX Loop whose body is

    x_new = (Conv3x3(x, 4-neighbour kernel, zero padding) + b) / 4
    delta = ReduceMax(Abs(x_new - x));  cond = Greater(delta, tol)

Two model folders (model.onnx + test_data_set_0 with a NumPy reference):
jacobi64_iters<N> and jacobi64_iters1. The tolerance is 0, so every run
makes all N trips (the slow Jacobi contraction on 64x64 never reaches a
zero change in N <= 1000 trips). Time both with tools/bench/bench.py; the
per-iteration cost is (t_N - t_1) / (N - 1), which removes the fixed cost
of a run (inputs, outputs, session) from the figure.

    /usr/bin/python3 tools/bench/jacobi_loop.py OUT_DIR [--iters 200]
"""

import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SIZE = 64


def reference(b, iters):
    x = np.zeros_like(b)
    for _ in range(iters):
        p = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
        s = p[:, :, :-2, 1:-1] + p[:, :, 2:, 1:-1] + p[:, :, 1:-1, :-2] + p[:, :, 1:-1, 2:]
        x_new = ((s + b) / np.float32(4)).astype(np.float32)
        assert np.abs(x_new - x).max() > 0, "converged: the run would stop early"
        x = x_new
    return x


def write(out_dir, iters):
    folder = os.path.join(out_dir, "jacobi64_iters%d" % iters)
    os.makedirs(os.path.join(folder, "test_data_set_0"), exist_ok=True)
    grid = lambda nm: helper.make_tensor_value_info(
        nm, TensorProto.FLOAT, [1, 1, SIZE, SIZE])
    scalar = lambda nm, t: helper.make_tensor_value_info(nm, t, [])
    kernel = np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]], np.float32)
    body = helper.make_graph(
        [helper.make_node("Conv", ["x_in", "K"], ["s"], pads=[1, 1, 1, 1]),
         helper.make_node("Add", ["s", "b"], ["sb"]),
         helper.make_node("Div", ["sb", "four"], ["x_out"]),
         helper.make_node("Sub", ["x_out", "x_in"], ["delta"]),
         helper.make_node("Abs", ["delta"], ["abs_delta"]),
         helper.make_node("ReduceMax", ["abs_delta"], ["max_delta"], keepdims=0),
         helper.make_node("Greater", ["max_delta", "tol"], ["cond_out"])],
        "jacobi_body",
        [scalar("iter_num", TensorProto.INT64),
         scalar("cond_in", TensorProto.BOOL), grid("x_in")],
        [scalar("cond_out", TensorProto.BOOL), grid("x_out")])
    inits = [numpy_helper.from_array(a, nm) for nm, a in [
        ("K", kernel.reshape(1, 1, 3, 3)), ("four", np.float32(4)),
        ("tol", np.float32(0)), ("max_iters", np.int64(iters)),
        ("cond_init", np.array(True)),
        ("x0", np.zeros((1, 1, SIZE, SIZE), np.float32))]]
    graph = helper.make_graph(
        [helper.make_node("Loop", ["max_iters", "cond_init", "x0"], ["x"],
                          body=body)],
        "jacobi64", [grid("b")], [grid("x")], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(folder, "model.onnx"))
    b = np.random.RandomState(5).uniform(-1, 1, (1, 1, SIZE, SIZE)).astype(np.float32)
    for name, kind, array in [("b", "input", b), ("x", "output", reference(b, iters))]:
        with open(os.path.join(folder, "test_data_set_0", "%s_0.pb" % kind), "wb") as f:
            f.write(numpy_helper.from_array(array, name).SerializeToString())
    return folder


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out_dir")
    parser.add_argument("--iters", type=int, default=200)
    args = parser.parse_args()
    for iters in (args.iters, 1):
        print(write(args.out_dir, iters))


if __name__ == "__main__":
    main()
