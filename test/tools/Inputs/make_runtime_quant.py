"""Writes runtime_quant.onnx, its inputs and NumPy's outputs into argv[1].

Integer matmuls and convs whose weights, zero points and scales are graph
inputs, as in ONNX's node tests, so the model packs them when it runs:
MatMulInteger (u8 x u8, per-column B zero points: the row-sum path), a
batched QLinearMatMul (s8 A, B and out, one B per batch), QLinearConv on a
20-channel input (s8 weight per output channel, int32 bias, stride 2, pads)
and ConvInteger (u8 x u8, dilation 2). The sizes cross the kernels' tails
(K = 37, N = 70; 35 output channels).

The outputs are computed here with NumPy in the ONNX order: int32
accumulators, then round(acc * (sa * sb / sy)) in f32, to nearest even,
plus the zero point, saturated.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(5)
f32 = np.float32

inputs = {
    # MatMulInteger
    "a": rng.integers(0, 256, (2, 6, 37), dtype=np.uint8),
    "b": rng.integers(0, 256, (37, 70), dtype=np.uint8),
    "az": np.uint8(121),
    "bz": rng.integers(0, 256, 70, dtype=np.uint8),
    # QLinearMatMul, batched
    "qa": rng.integers(-128, 128, (3, 5, 29), dtype=np.int8),
    "qa_s": f32(0.03), "qa_z": np.int8(-3),
    "qb": rng.integers(-127, 128, (3, 29, 40), dtype=np.int8),
    "qb_s": f32(0.007), "qb_z": np.int8(2),
    "qy_s": f32(0.08), "qy_z": np.int8(4),
    # QLinearConv
    "x": rng.integers(0, 256, (2, 20, 9, 11), dtype=np.uint8),
    "xs": f32(0.03), "xz": np.uint8(118),
    "w": rng.integers(-127, 128, (35, 20, 3, 3), dtype=np.int8),
    "ws": rng.uniform(0.0005, 0.002, 35).astype(f32),
    "wz": np.zeros(35, np.int8),
    "ys": f32(0.04), "yz": np.uint8(131),
    "bias": rng.integers(-300, 300, 35).astype(np.int32),
    # ConvInteger
    "cx": rng.integers(0, 256, (2, 5, 9, 11), dtype=np.uint8),
    "cw": rng.integers(0, 256, (20, 5, 3, 3), dtype=np.uint8),
    "cxz": np.uint8(7), "cwz": np.uint8(133),
}
types = {np.dtype(np.uint8): TensorProto.UINT8,
         np.dtype(np.int8): TensorProto.INT8,
         np.dtype(np.int32): TensorProto.INT32,
         np.dtype(f32): TensorProto.FLOAT}

nodes = [
    helper.make_node("MatMulInteger", ["a", "b", "az", "bz"], ["y_mmi"],
                     name="mmi"),
    helper.make_node("QLinearMatMul", ["qa", "qa_s", "qa_z", "qb", "qb_s",
                                       "qb_z", "qy_s", "qy_z"], ["y_qmm"],
                     name="qmm"),
    helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys",
                                     "yz", "bias"], ["y_qconv"],
                     strides=[2, 2], pads=[1, 0, 1, 2], name="qconv"),
    helper.make_node("ConvInteger", ["cx", "cw", "cxz", "cwz"], ["y_iconv"],
                     dilations=[2, 2], pads=[2, 2, 2, 2], name="iconv"),
]


def conv_acc(x, w, xz, wz, strides=(1, 1), pads=(0, 0, 0, 0),
             dilations=(1, 1)):
    """int32 sum of (x - xz) * (w - wz[o]) over each patch, NCHW."""
    n, c, h, wd = x.shape
    oc, _, kh, kw = w.shape
    xp = np.pad(x.astype(np.int64) - int(xz),
                ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    wq = w.astype(np.int64) - np.asarray(wz, np.int64).reshape(-1, 1, 1, 1)
    oh = (h + pads[0] + pads[2] - dilations[0] * (kh - 1) - 1) // strides[0]
    ow = (wd + pads[1] + pads[3] - dilations[1] * (kw - 1) - 1) // strides[1]
    oh, ow = oh + 1, ow + 1
    y = np.zeros((n, oc, oh, ow), np.int64)
    for i in range(kh):
        for j in range(kw):
            r0, c0 = i * dilations[0], j * dilations[1]
            patch = xp[:, :, r0:r0 + strides[0] * oh:strides[0],
                       c0:c0 + strides[1] * ow:strides[1]]
            y += np.einsum("nchw,oc->nohw", patch, wq[:, :, i, j])
    return y.astype(np.int32)


def requantize(acc, scale, zero, dtype):
    info = np.iinfo(dtype)
    q = np.rint(acc.astype(f32) * scale.astype(f32)) + int(zero)
    return np.clip(q, info.min, info.max).astype(dtype)


v = inputs
mmi = np.matmul(v["a"].astype(np.int32) - int(v["az"]),
                v["b"].astype(np.int32) - v["bz"].astype(np.int32))
qacc = np.matmul(v["qa"].astype(np.int32) - int(v["qa_z"]),
                 v["qb"].astype(np.int32) - int(v["qb_z"]))
qmm = requantize(qacc, f32(v["qa_s"] * v["qb_s"]) / v["qy_s"], v["qy_z"],
                 np.int8)
cacc = conv_acc(v["x"], v["w"], v["xz"], v["wz"], strides=(2, 2),
                pads=(1, 0, 1, 2)) + v["bias"].reshape(1, -1, 1, 1)
qconv = requantize(cacc, (v["xs"] * v["ws"] / v["ys"]).reshape(1, -1, 1, 1),
                   v["yz"], np.uint8)
iconv = conv_acc(v["cx"], v["cw"], v["cxz"], np.full(20, v["cwz"]),
                 pads=(2, 2, 2, 2), dilations=(2, 2))
outputs = {"y_mmi": mmi, "y_qmm": qmm, "y_qconv": qconv, "y_iconv": iconv}

graph = helper.make_graph(
    nodes, "runtime_quant",
    [helper.make_tensor_value_info(n, types[np.asarray(a).dtype],
                                   list(np.shape(a)))
     for n, a in inputs.items()],
    [helper.make_tensor_value_info(n, types[a.dtype], list(a.shape))
     for n, a in outputs.items()])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
onnx.save(model, os.path.join(out, "runtime_quant.onnx"))
for kind, tensors in (("input", inputs), ("output", outputs)):
    for i, (name, array) in enumerate(tensors.items()):
        with open(os.path.join(out, "%s_%d.pb" % (kind, i)), "wb") as f:
            f.write(numpy_helper.from_array(np.asarray(array), name)
                    .SerializeToString())
