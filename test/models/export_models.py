#!/usr/bin/python3
"""Export the reference ONNX models used to test mlcc's ref executor and backends.

Each model is written in ONNX model-zoo layout:

    OUT/<name>/model.onnx
    OUT/<name>/test_data_set_<i>/input_<j>.pb    (TensorProto, named after graph input j)
    OUT/<name>/test_data_set_<i>/output_<j>.pb   (reference output, named after graph output j)

Weights are random but seeded, so every run produces identical files and the
script needs no network (no pretrained downloads).  Reference outputs come from
torch for the torch models and from numpy for the hand-built control-flow
graphs (Loop / If), whose references are cross-checked against a second,
independent numpy computation.  BatchNormalization is deliberately kept as
nodes (not folded into Conv) and given non-trivial statistics so that the
compiler's own BN handling is exercised.

Usage: /usr/bin/python3 export_models.py OUT [--only name,name]
Needs torch, torchvision, onnx, numpy (Debian python3-torch etc. are enough).
"""
import argparse
import inspect
import math
import os
import shutil
import time
import warnings

import numpy as np
import onnx
import torch
import torchvision
from onnx import TensorProto, helper, numpy_helper
from torch import nn

SEED = 0


# ----------------------------------------------------------------------------
# Common helpers
# ----------------------------------------------------------------------------

def seed_all(seed=SEED):
    torch.manual_seed(seed)
    np.random.seed(seed)


def write_test_set(model_dir, idx, inputs, outputs):
    """inputs/outputs: lists of (name, numpy array)."""
    d = os.path.join(model_dir, f"test_data_set_{idx}")
    os.makedirs(d, exist_ok=True)
    for prefix, tensors in (("input", inputs), ("output", outputs)):
        for j, (name, arr) in enumerate(tensors):
            with open(os.path.join(d, f"{prefix}_{j}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(np.asarray(arr), name).SerializeToString())


def count_nodes(graph, op_counts):
    """Node count of a graph including all subgraphs; fills op_counts."""
    n = 0
    for node in graph.node:
        n += 1
        op_counts[node.op_type] = op_counts.get(node.op_type, 0) + 1
        for attr in node.attribute:
            for sub in list(attr.graphs) + ([attr.g] if attr.HasField("g") else []):
                n += count_nodes(sub, op_counts)
    return n


def export_torch(model_dir, module, args, in_names, out_names, opset, dynamic_axes=None,
                 keep_bn=False):
    """Export `module(*args)` with torch.onnx and write test_data_set_0."""
    path = os.path.join(model_dir, "model.onnx")
    module.eval()
    with torch.no_grad():
        ref = module(*args)
    refs = ref if isinstance(ref, (tuple, list)) else (ref,)
    # In eval mode torch fuses BatchNorm into the preceding Conv; PRESERVE
    # (with the module already in eval) skips that peephole, keeping BN nodes.
    training = torch.onnx.TrainingMode.PRESERVE if keep_bn else torch.onnx.TrainingMode.EVAL
    # torch >= 2.9 exports through dynamo by default; these models and their
    # dynamic_axes are written for the TorchScript exporter, which older
    # torch (Debian's) has as its only one.
    legacy = {"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters else {}
    torch.onnx.export(module, tuple(args), path, opset_version=opset,
                      input_names=in_names, output_names=out_names,
                      dynamic_axes=dynamic_axes, training=training,
                      do_constant_folding=True, **legacy)
    # torch's shape inference can leave static output dims symbolic (e.g.
    # BERT's sequence axis after LayerNormalization); pin every dim that is
    # not declared dynamic to the reference output's size.
    model = onnx.load(path)
    assert [i.name for i in model.graph.input] == in_names, model.graph.input
    assert [o.name for o in model.graph.output] == out_names, model.graph.output
    pinned = 0
    for out, r in zip(model.graph.output, refs):
        dyn = (dynamic_axes or {}).get(out.name, {})
        for i, dim in enumerate(out.type.tensor_type.shape.dim):
            if i not in dyn and not dim.HasField("dim_value"):
                dim.dim_value = r.shape[i]
                pinned += 1
    if pinned:
        onnx.save(model, path)
    write_test_set(model_dir, 0,
                   [(n, a.numpy()) for n, a in zip(in_names, args)],
                   [(n, r.numpy()) for n, r in zip(out_names, refs)])
    return path


def randomize_bn(module, calib_input):
    """Give every BatchNorm random affine params and real (non 0/1) running
    statistics, measured on a seeded random calibration batch so the
    activations of deep nets stay in a sensible range."""
    bns = [m for m in module.modules() if isinstance(m, nn.BatchNorm2d)]
    with torch.no_grad():
        for bn in bns:
            bn.weight.uniform_(0.5, 1.5)
            bn.bias.normal_(0.0, 0.1)
            bn.reset_running_stats()
            bn.momentum = None  # cumulative average over calibration batches
        module.train()
        module(calib_input)
        module.eval()
    return len(bns)


# ----------------------------------------------------------------------------
# torch models
# ----------------------------------------------------------------------------

def make_vision(model_dir, ctor):
    net = ctor(weights=None)
    n_bn = randomize_bn(net, torch.randn(8, 3, 224, 224))
    path = export_torch(model_dir, net, [torch.randn(1, 3, 224, 224)], ["input"], ["output"], 13,
                        keep_bn=True)
    return path, {"BatchNormalization": n_bn}


class CifarSigmoidBN(nn.Module):
    """Caffe examples/cifar10/cifar10_full_sigmoid_train_test_bn.prototxt.
    Caffe pooling rounds the output size up, hence ceil_mode (32->16->8->4)."""

    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 32, 5, padding=2)
        self.pool1 = nn.MaxPool2d(3, 2, ceil_mode=True)
        self.bn1 = nn.BatchNorm2d(32)
        self.conv2 = nn.Conv2d(32, 32, 5, padding=2)
        self.bn2 = nn.BatchNorm2d(32)
        self.pool2 = nn.AvgPool2d(3, 2, ceil_mode=True, count_include_pad=False)
        self.conv3 = nn.Conv2d(32, 64, 5, padding=2)
        self.bn3 = nn.BatchNorm2d(64)
        self.pool3 = nn.AvgPool2d(3, 2, ceil_mode=True, count_include_pad=False)
        self.ip1 = nn.Linear(64 * 4 * 4, 10)

    def forward(self, x):
        x = torch.sigmoid(self.bn1(self.pool1(self.conv1(x))))
        x = self.pool2(torch.sigmoid(self.bn2(self.conv2(x))))
        x = self.pool3(torch.sigmoid(self.bn3(self.conv3(x))))
        return self.ip1(torch.flatten(x, 1))


def make_cifar(model_dir):
    net = CifarSigmoidBN()
    n_bn = randomize_bn(net, torch.randn(16, 3, 32, 32))
    path = export_torch(model_dir, net, [torch.randn(1, 3, 32, 32)], ["data"], ["ip1"], 13,
                        keep_bn=True)
    return path, {"BatchNormalization": n_bn}


def make_mlp(model_dir):
    net = nn.Sequential(nn.Linear(784, 512), nn.ReLU(), nn.Linear(512, 256), nn.ReLU(),
                        nn.Linear(256, 10))
    return export_torch(model_dir, net, [torch.randn(4, 784)], ["input"], ["logits"], 13), {}


class BertLayer(nn.Module):
    def __init__(self, hidden, heads, inter, seq):
        super().__init__()
        self.heads, self.dh, self.seq = heads, hidden // heads, seq
        self.q = nn.Linear(hidden, hidden)
        self.k = nn.Linear(hidden, hidden)
        self.v = nn.Linear(hidden, hidden)
        self.attn_out = nn.Linear(hidden, hidden)
        self.ln1 = nn.LayerNorm(hidden, eps=1e-12)
        self.ffn_in = nn.Linear(hidden, inter)
        self.ffn_out = nn.Linear(inter, hidden)
        self.ln2 = nn.LayerNorm(hidden, eps=1e-12)

    def split(self, t):  # [B,S,H] -> [B,heads,S,dh]; only the batch is dynamic
        return t.reshape(-1, self.seq, self.heads, self.dh).transpose(1, 2)

    def forward(self, x, mask_bias):
        q, k, v = self.split(self.q(x)), self.split(self.k(x)), self.split(self.v(x))
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.dh) + mask_bias
        ctx = torch.matmul(torch.softmax(scores, dim=-1), v)
        ctx = ctx.transpose(1, 2).reshape(-1, self.seq, self.heads * self.dh)
        x = self.ln1(x + self.attn_out(ctx))
        return self.ln2(x + self.ffn_out(nn.functional.gelu(self.ffn_in(x))))


class BertBase(nn.Module):
    """BERT-base encoder; returns the last hidden state. Segment ids are all 0."""

    def __init__(self, vocab=30522, hidden=768, layers=12, heads=12, inter=3072,
                 max_pos=512, seq=128):
        super().__init__()
        self.word_emb = nn.Embedding(vocab, hidden)
        self.pos_emb = nn.Embedding(max_pos, hidden)
        self.type_emb = nn.Embedding(2, hidden)
        self.emb_ln = nn.LayerNorm(hidden, eps=1e-12)
        self.layers = nn.ModuleList(BertLayer(hidden, heads, inter, seq) for _ in range(layers))
        self.register_buffer("position_ids", torch.arange(seq).unsqueeze(0))
        # BERT's init (N(0, 0.02)); biases and LayerNorm params also randomised
        # so that none of them is an identity.
        with torch.no_grad():
            for m in self.modules():
                if isinstance(m, (nn.Linear, nn.Embedding)):
                    m.weight.normal_(0.0, 0.02)
                if isinstance(m, nn.Linear):
                    m.bias.normal_(0.0, 0.02)
                if isinstance(m, nn.LayerNorm):
                    m.weight.normal_(1.0, 0.1)
                    m.bias.normal_(0.0, 0.1)

    def forward(self, input_ids, attention_mask):
        token_type_ids = torch.zeros_like(input_ids)
        x = self.word_emb(input_ids) + self.pos_emb(self.position_ids) + self.type_emb(token_type_ids)
        x = self.emb_ln(x)
        mask_bias = (1.0 - attention_mask[:, None, None, :].to(torch.float32)) * -10000.0
        for layer in self.layers:
            x = layer(x, mask_bias)
        return x


def make_bert(model_dir, opset):
    net = BertBase()
    ids = torch.randint(0, 30522, (1, 128), dtype=torch.int64)
    mask = torch.ones(1, 128, dtype=torch.int64)
    mask[:, 100:] = 0  # padded tail so the mask matters
    dyn = {"input_ids": {0: "batch"}, "attention_mask": {0: "batch"},
           "last_hidden_state": {0: "batch"}}
    path = export_torch(model_dir, net, [ids, mask], ["input_ids", "attention_mask"],
                        ["last_hidden_state"], opset, dynamic_axes=dyn)
    return path, {"LayerNormalization": 25 if opset >= 17 else 0}


# ----------------------------------------------------------------------------
# Hand-built control-flow models
# ----------------------------------------------------------------------------

def make_loop_solver(model_dir):
    """Jacobi iteration x <- (b - R x) / d inside an ONNX Loop, stopping when
    max|x_new - x| <= tol or after max_iters trips. A = diag(d) + R is strictly
    diagonally dominant, so it converges. Outputs: final x, iteration count."""
    n, max_iters, tol = 16, 100, np.float32(1e-4)
    rng = np.random.RandomState(SEED)
    # Mostly-positive off-diagonals make the contraction slow enough (~0.8)
    # to take about ten trips; the asserts below check the stop is no near tie.
    R = rng.uniform(-0.25, 1, (n, n)).astype(np.float32)
    np.fill_diagonal(R, 0)
    d = (np.abs(R).sum(axis=1) * 1.2).astype(np.float32)
    b = rng.uniform(-1, 1, n).astype(np.float32)

    fvec = lambda nm: helper.make_tensor_value_info(nm, TensorProto.FLOAT, [n])
    scalar = lambda nm, t: helper.make_tensor_value_info(nm, t, [])
    body = helper.make_graph(
        [helper.make_node("MatMul", ["R", "x_in"], ["Rx"]),
         helper.make_node("Sub", ["b", "Rx"], ["r"]),
         helper.make_node("Div", ["r", "d"], ["x_out"]),
         helper.make_node("Sub", ["x_out", "x_in"], ["delta"]),
         helper.make_node("Abs", ["delta"], ["abs_delta"]),
         helper.make_node("ReduceMax", ["abs_delta"], ["max_delta"], keepdims=0),
         helper.make_node("Greater", ["max_delta", "tol"], ["cond_out"]),
         helper.make_node("Constant", [], ["one"], value=numpy_helper.from_array(np.int64(1))),
         helper.make_node("Add", ["k_in", "one"], ["k_out"])],
        "jacobi_body",
        [scalar("iter_num", TensorProto.INT64), scalar("cond_in", TensorProto.BOOL),
         fvec("x_in"), scalar("k_in", TensorProto.INT64)],
        [scalar("cond_out", TensorProto.BOOL), fvec("x_out"), scalar("k_out", TensorProto.INT64)])
    inits = [numpy_helper.from_array(a, nm) for nm, a in [
        ("R", R), ("d", d), ("tol", tol), ("max_iters", np.int64(max_iters)),
        ("cond_init", np.array(True)), ("x0", np.zeros(n, np.float32)), ("k0", np.int64(0))]]
    graph = helper.make_graph(
        [helper.make_node("Loop", ["max_iters", "cond_init", "x0", "k0"], ["x", "iterations"],
                          body=body)],
        "loop_solver", [fvec("b")],
        [fvec("x"), scalar("iterations", TensorProto.INT64)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    path = os.path.join(model_dir, "model.onnx")
    onnx.save(model, path)

    # Reference: exactly the graph's algorithm in float32.
    x, k, cond, deltas = np.zeros(n, np.float32), 0, True, []
    while k < max_iters and cond:
        x_new = (b - R @ x) / d
        deltas.append(np.abs(x_new - x).max())
        cond = bool(deltas[-1] > tol)
        x, k = x_new, k + 1
    # Independent check: Jacobi in float64 written as a correction on the full
    # A, plus a direct solve; both must agree with the reference.
    A = R.astype(np.float64) + np.diag(d.astype(np.float64))
    x64, k64 = np.zeros(n), 0
    for k64 in range(1, max_iters + 1):
        step = (b - A @ x64) / np.diag(A)
        x64 = x64 + step
        if np.abs(step).max() <= tol:
            break
    assert k == k64 < max_iters, (k, k64)
    # the stopping decision must not be a near tie that rounding could flip
    assert deltas[-1] < 0.95 * tol < 1.05 * tol < deltas[-2], deltas[-2:]
    np.testing.assert_allclose(x, x64, rtol=0, atol=1e-5)
    np.testing.assert_allclose(x, np.linalg.solve(A, b), rtol=0, atol=10 * tol)
    write_test_set(model_dir, 0, [("b", b)], [("x", x), ("iterations", np.int64(k))])
    return path, {}


def make_if_model(model_dir):
    """y = (x*2 + 1) if ReduceSum(x) > 0 else (Relu(x) - three); `three` is an
    outer-scope initializer used inside the else branch."""
    shape = [4, 8]
    out_vi = lambda nm: helper.make_tensor_value_info(nm, TensorProto.FLOAT, shape)
    const = lambda nm, v: helper.make_node("Constant", [], [nm],
                                           value=numpy_helper.from_array(np.float32(v)))
    then_g = helper.make_graph(
        [const("two", 2.0), const("one", 1.0),
         helper.make_node("Mul", ["x", "two"], ["x2"]),
         helper.make_node("Add", ["x2", "one"], ["then_out"])],
        "then_branch", [], [out_vi("then_out")])
    else_g = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["relu_x"]),
         helper.make_node("Sub", ["relu_x", "three"], ["else_out"])],
        "else_branch", [], [out_vi("else_out")])
    graph = helper.make_graph(
        [helper.make_node("ReduceSum", ["x"], ["sum"], keepdims=0),
         helper.make_node("Greater", ["sum", "zero"], ["cond"]),
         helper.make_node("If", ["cond"], ["y"], then_branch=then_g, else_branch=else_g)],
        "if_model", [out_vi("x")], [out_vi("y")],
        [numpy_helper.from_array(np.float32(0), "zero"),
         numpy_helper.from_array(np.float32(3), "three")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    path = os.path.join(model_dir, "model.onnx")
    onnx.save(model, path)

    rng = np.random.RandomState(SEED)
    for idx, offset in ((0, 1.0), (1, -1.0)):  # set 0: cond true, set 1: cond false
        x = (rng.normal(0, 1, shape) + offset).astype(np.float32)
        s = x.sum()
        y = (x * np.float32(2) + np.float32(1)) if s > 0 else (np.maximum(x, 0) - np.float32(3))
        # Independent check, written differently (float64 sum, where, |x| form).
        alt = np.where(np.sum(x, dtype=np.float64) > 0, x + x + 1, (x + np.abs(x)) / 2 - 3)
        np.testing.assert_allclose(y, alt, rtol=1e-6, atol=1e-6)
        assert (s > 0) == (idx == 0) and abs(s) > 1.0, s
        write_test_set(model_dir, idx, [("x", x)], [("y", y.astype(np.float32))])
    return path, {}


# ----------------------------------------------------------------------------
# Driver
# ----------------------------------------------------------------------------

MODELS = {
    "resnet50": lambda d: make_vision(d, torchvision.models.resnet50),
    "mobilenetv2": lambda d: make_vision(d, torchvision.models.mobilenet_v2),
    "bert_base": lambda d: make_bert(d, 17),
    "bert_base_opset13": lambda d: make_bert(d, 13),
    "cifar10_sigmoid_bn": make_cifar,
    "mlp": make_mlp,
    "loop_solver": make_loop_solver,
    "if_model": make_if_model,
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("out", help="output directory")
    ap.add_argument("--only", help="comma-separated subset of: " + ",".join(MODELS))
    args = ap.parse_args()
    names = args.only.split(",") if args.only else list(MODELS)
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        ap.error(f"unknown model(s): {','.join(unknown)}")
    torch.use_deterministic_algorithms(True)
    # torch warns against constant folding with TrainingMode.PRESERVE; that
    # only matters for modules in train mode, and ours are in eval.
    warnings.filterwarnings("ignore", message="It is recommended that constant folding")
    for name in names:
        model_dir = os.path.join(args.out, name)
        shutil.rmtree(model_dir, ignore_errors=True)
        os.makedirs(model_dir)
        seed_all()  # per model, so --only gives the same files as a full run
        t0 = time.time()
        path, expect = MODELS[name](model_dir)
        onnx.checker.check_model(path)  # path form: also fine for models > 2 GB
        model = onnx.load(path)
        # strict shape/type inference, in memory (the path form rewrites the file)
        onnx.shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
        ops = {}
        n_nodes = count_nodes(model.graph, ops)
        for op, n in expect.items():
            assert ops.get(op, 0) == n, f"{name}: expected {n} {op} nodes, got {ops.get(op, 0)}"
        n_sets = len([e for e in os.listdir(model_dir) if e.startswith("test_data_set_")])
        extra = "".join(f", {n} {op}" for op, n in expect.items())
        size = os.path.getsize(path)
        size = f"{size / 2**20:7.1f} MiB" if size >= 2**20 else f"{size / 2**10:7.1f} KiB"
        print(f"{name:20s} {size}  {n_nodes:5d} nodes{extra}"
              f"  opset {model.opset_import[0].version}  {n_sets} test set(s)"
              f"  {time.time() - t0:6.1f} s", flush=True)


if __name__ == "__main__":
    main()
