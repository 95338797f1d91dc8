"""Writes expand_dw.onnx for test/tools/expand-depthwise-bands.test into
argv[1], with its inputs and the outputs PyTorch computes (input_*.pb,
output_*.pb). Seeded random weights and biases, constant in the model.

Each output is a 1x1 conv whose result only a depthwise conv reads, with an
expanded tensor over 512 KiB: the pair runs in bands of the depthwise
conv's output rows (lowering/AVX512/ExpandDepthwiseBands.cpp), and so does
a 1x1 projection that alone reads the depthwise result.

  s2   x [1, 16, 56, 56]  16 -> 96, bias, Clip(0, 6); dw 3x3 s2 p1, bias,
                          Clip(0, 6)         (MobileNetV2's; 1 row carried)
  s1   y [1, 24, 40, 40]  24 -> 150, Relu; dw 3x3 p1, bias; project
                          150 -> 24, bias, + y (2 rows carried, a channel
                          tail, a residual)
  k5   z [1, 32, 33, 40]  32 -> 120, bias; dw 5x5 s2 pads (2, 2, 1, 1),
                          Relu; project 120 -> 40, Relu (odd rows, uneven
                          pads)
  dil  u [1, 16, 48, 48]  16 -> 64; dw 3x3 dilation 2 p2, bias; project
                          64 -> 16 + Relu(v), whose Relu comes after the
                          dw conv: not in the bands
  two  x                  16 -> 96, bias; read by a dw 3x3 and by an
                          output of its own: not in bands

and a depthwise conv without an expansion, over 1 MiB, with the 1x1
projection that alone reads it (MobileNetV2's first block) runs in bands
the same way, reading its windows from its input:

  solo  w [1, 40, 80, 80]   dw 3x3 p1, bias, Clip(0, 6); project 40 -> 16,
                            bias (a channel tail)
  solo2 q [1, 32, 200, 198] dw 5x5 s2 pads (2, 2, 1, 1); project 32 -> 24,
                            bias, + r [1, 24, 100, 99], Relu
  small s [1, 16, 80, 80]   dw 3x3 p1 (800 KiB, in L2 anyway); project
                            16 -> 8: not in bands
"""
import sys

import numpy as np
import torch
import torch.nn.functional as F
from model_files import save_model_with_data
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(29)
inputs = {
    "x": rng.standard_normal((1, 16, 56, 56)).astype(np.float32),
    "y": rng.standard_normal((1, 24, 40, 40)).astype(np.float32),
    "z": rng.standard_normal((1, 32, 33, 40)).astype(np.float32),
    "u": rng.standard_normal((1, 16, 48, 48)).astype(np.float32),
    "v": rng.standard_normal((1, 16, 48, 48)).astype(np.float32),
    "w": rng.standard_normal((1, 40, 80, 80)).astype(np.float32),
    "q": rng.standard_normal((1, 32, 200, 198)).astype(np.float32),
    "r": rng.standard_normal((1, 24, 100, 99)).astype(np.float32),
    "s": rng.standard_normal((1, 16, 80, 80)).astype(np.float32),
}
inits, nodes, outputs, expected = [], [], [], []


def activation(name, y, y_ref, act):
    if act == "relu":
        nodes.append(helper.make_node("Relu", [y], [name + "_relu"]))
        return name + "_relu", np.maximum(y_ref, 0)
    if act == "clip":
        inits.append(numpy_helper.from_array(np.float32(0), name + "_lo"))
        inits.append(numpy_helper.from_array(np.float32(6), name + "_hi"))
        nodes.append(helper.make_node("Clip", [y, name + "_lo", name + "_hi"],
                                      [name + "_clip"]))
        return name + "_clip", np.clip(y_ref, 0, 6)
    return y, y_ref


def conv(name, src, src_ref, m, k, group=1, s=1, pads=(0, 0, 0, 0), d=1,
         bias=False, act=None):
    c = src_ref.shape[1]
    w = (rng.standard_normal((m, c // group, k, k)) * 0.2).astype(np.float32)
    b = (rng.standard_normal(m) * 0.3).astype(np.float32)
    inits.append(numpy_helper.from_array(w, name + "_w"))
    node_inputs = [src, name + "_w"]
    if bias:
        inits.append(numpy_helper.from_array(b, name + "_b"))
        node_inputs.append(name + "_b")
    y = name + "_conv"
    nodes.append(helper.make_node("Conv", node_inputs, [y], name=name,
                                  kernel_shape=[k, k], strides=[s, s],
                                  pads=list(pads), dilations=[d, d],
                                  group=group))
    # PyTorch pads symmetrically: pad first, then convolve unpadded.
    top, left, bottom, right = pads
    padded = F.pad(torch.from_numpy(src_ref), (left, right, top, bottom))
    y_ref = F.conv2d(padded, torch.from_numpy(w),
                     torch.from_numpy(b) if bias else None, stride=s,
                     dilation=d, groups=group).numpy()
    return activation(name, y, y_ref, act)


def output(name, y, y_ref):
    nodes.append(helper.make_node("Identity", [y], [name]))
    outputs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT,
                                                 list(y_ref.shape)))
    expected.append(np.ascontiguousarray(y_ref, dtype=np.float32))


def add(name, y, y_ref, z, z_ref):
    nodes.append(helper.make_node("Add", [y, z], [name + "_sum"]))
    return name + "_sum", y_ref + z_ref


def pair(name, src, m, k, expand_bias, expand_act, dw_bias, dw_act, s=1,
         pads=(1, 1, 1, 1), d=1, project=None):
    t, t_ref = conv(name + "_expand", src, inputs[src], m, 1,
                    bias=expand_bias, act=expand_act)
    y, y_ref = conv(name + "_dw", t, t_ref, m, k, group=m, s=s, pads=pads,
                    d=d, bias=dw_bias, act=dw_act)
    if project:
        y, y_ref = project(y, y_ref)
    output(name, y, y_ref)
    return t, t_ref


def project_s1(y, y_ref):
    y, y_ref = conv("s1_proj", y, y_ref, 24, 1, bias=True)
    return add("s1_proj", y, y_ref, "y", inputs["y"])


def project_dil(y, y_ref):
    v, v_ref = activation("dil_v", "v", inputs["v"], "relu")
    y, y_ref = conv("dil_proj", y, y_ref, 16, 1)
    return add("dil_proj", y, y_ref, v, v_ref)


pair("s2", "x", 96, 3, True, "clip", True, "clip", s=2)
pair("s1", "y", 150, 3, False, "relu", True, None, project=project_s1)
pair("k5", "z", 120, 5, True, None, False, "relu", s=2, pads=(2, 2, 1, 1),
     project=lambda y, y_ref: conv("k5_proj", y, y_ref, 40, 1, act="relu"))
pair("dil", "u", 64, 3, False, None, True, None, pads=(2, 2, 2, 2), d=2,
     project=project_dil)
t, t_ref = pair("two", "x", 96, 3, True, None, False, None)
output("two_expanded", t, t_ref)

y, y_ref = conv("solo_dw", "w", inputs["w"], 40, 3, group=40,
                pads=(1, 1, 1, 1), bias=True, act="clip")
output("solo", *conv("solo_proj", y, y_ref, 16, 1, bias=True))
y, y_ref = conv("solo2_dw", "q", inputs["q"], 32, 5, group=32, s=2,
                pads=(2, 2, 1, 1))
y, y_ref = conv("solo2_proj", y, y_ref, 24, 1, bias=True)
output("solo2", *activation("solo2_proj",
                            *add("solo2_proj", y, y_ref, "r", inputs["r"]),
                            "relu"))
y, y_ref = conv("small_dw", "s", inputs["s"], 16, 3, group=16,
                pads=(1, 1, 1, 1))
output("small", *conv("small_proj", y, y_ref, 8, 1))

save_model_with_data(out, "expand_dw", nodes, inputs, outputs, inits,
                     expected)
