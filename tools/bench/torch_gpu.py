#!/usr/bin/python3
"""PyTorch's latency on the same models as tools/gpu-check.sh's `mlcc bench
--target cuda` rows, for the mlcc / torch ratio on an NVIDIA GPU. A
benchmark, not a test.

    python3 tools/bench/torch_gpu.py [--runs 50] [--warmup 10] [--device cuda]

ResNet-50 and MobileNetV2 (torchvision) at batch 1 x 3 x 224 x 224 and the
project's BERT-base (test/models/export_models.py) at batch 1, sequence 128,
in f32 with TF32 off (mlcc computes f32 products), each timed two ways:
eager (one launch per op, as a plain PyTorch program runs) and replayed from
a CUDA graph (launch overhead gone, as mlcc's runs from their second one).
Medians of --runs runs after --warmup, each run synchronised; the weights
are random (the time does not depend on them). One line per row:

    torch resnet50 b1 eager: median 4.123 ms
"""

import argparse
import os
import statistics
import sys
import time

import torch
import torchvision

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(HERE)), "test", "models"))
import export_models  # noqa: E402  (BertBase)


def models(device):
    ids = torch.randint(0, 30522, (1, 128), device=device)
    mask = torch.ones(1, 128, dtype=torch.int64, device=device)
    image = torch.randn(1, 3, 224, 224, device=device)
    return [("resnet50 b1", torchvision.models.resnet50(), (image,)),
            ("mobilenetv2 b1", torchvision.models.mobilenet_v2(), (image,)),
            ("bert_base s128", export_models.BertBase(), (ids, mask))]


def median_ms(fn, runs, warmup, sync):
    for _ in range(warmup):
        fn()
    sync()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        sync()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--runs", type=int, default=50)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--device", default="cuda")
    a = p.parse_args()
    cuda = a.device == "cuda"
    if cuda and not torch.cuda.is_available():
        sys.exit("torch sees no CUDA device")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    print("torch %s on %s" % (torch.__version__,
                              torch.cuda.get_device_name() if cuda else "cpu"))
    for label, net, args in models(a.device):
        net = net.eval().to(a.device)
        with torch.no_grad():
            eager = median_ms(lambda: net(*args), a.runs, a.warmup, sync)
            print("torch %s eager: median %.3f ms" % (label, eager), flush=True)
            if not cuda:
                continue
            stream = torch.cuda.Stream()
            stream.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(stream):  # warm-up off the default stream
                net(*args)
            torch.cuda.current_stream().wait_stream(stream)
            graph = torch.cuda.CUDAGraph()
            with torch.cuda.graph(graph):
                net(*args)
            replay = median_ms(graph.replay, a.runs, a.warmup, sync)
            print("torch %s cuda graph: median %.3f ms" % (label, replay), flush=True)


if __name__ == "__main__":
    main()
