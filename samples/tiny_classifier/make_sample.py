#!/usr/bin/env python3
"""Writes the bundled sample: a small CIFAR-style image classifier (conv, batch
norm, relu, pooling, linear; seeded weights) with one input image and the
torch reference output, in ONNX model-zoo layout.

Run with Debian's interpreter:  /usr/bin/python3 samples/tiny_classifier/make_sample.py
The outputs are committed; rerun only to change the sample.
"""
import os

import numpy as np
import onnx
import torch
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


class TinyClassifier(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.features = torch.nn.Sequential(
            torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
            torch.nn.MaxPool2d(2),
            torch.nn.Conv2d(8, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
            torch.nn.AdaptiveAvgPool2d(1))
        self.classifier = torch.nn.Linear(16, 10)

    def forward(self, x):
        return torch.softmax(self.classifier(torch.flatten(self.features(x), 1)), dim=1)


def main():
    torch.manual_seed(7)
    model = TinyClassifier()
    for m in model.modules():
        if isinstance(m, torch.nn.BatchNorm2d):
            m.running_mean.uniform_(-0.5, 0.5)
            m.running_var.uniform_(0.5, 1.5)
    model.eval()
    image = torch.rand(1, 3, 32, 32)
    with torch.no_grad():
        probs = model(image)
    path = os.path.join(HERE, "model.onnx")
    torch.onnx.export(model, image, path, input_names=["image"], output_names=["probabilities"],
                      opset_version=13, training=torch.onnx.TrainingMode.PRESERVE,
                      do_constant_folding=False)
    onnx.checker.check_model(onnx.load(path))
    data = os.path.join(HERE, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    for name, array, tensor_name in [("input_0.pb", image, "image"),
                                     ("output_0.pb", probs, "probabilities")]:
        with open(os.path.join(data, name), "wb") as f:
            f.write(numpy_helper.from_array(array.numpy().astype(np.float32), tensor_name)
                    .SerializeToString())
    print("top class", int(probs.argmax()), "p =", float(probs.max()))


if __name__ == "__main__":
    main()
