"""Trains the digits CNN and exports it with its data: argv[1] is the folder.

scikit-learn's bundled handwritten digits (load_digits: 1797 8x8 images,
16 grey levels), a fixed seeded split of 1297 training and 500 test images,
a small CNN trained with torch (seeded, CPU, deterministic):

  conv 1->16 3x3 pad 1, ReLU, conv 16->32 3x3 pad 1, ReLU, max pool 2,
  flatten, fc 512->64, ReLU, fc 64->10

Written:
  model.onnx                      dynamic batch ("batch"), opset 13
  calibration/test_data_set_N/    8 sets of 100 training images (input_0.pb)
  test/test_data_set_N/           5 sets of 100 test images: input_0.pb,
                                  output_0.pb (torch's logits), labels.pb
  torch_accuracy.txt              torch's top-1 on the 500 test images
  sample/                         what samples/digits bundles: one test
                                  image (sample.pgm, 8x8, 16 levels) and
                                  its label (label.txt), and 32 training
                                  images, one per set, to calibrate the
                                  batch-1 model (calibration/)

export_digits_resnet50.py trains another network on the same split and
writes the same layout with the functions below.
"""
import os
import sys

import numpy as np
import onnx
import torch
from onnx import numpy_helper
from sklearn.datasets import load_digits

TENSOR_NAMES = {"input_0.pb": "image", "output_0.pb": "logits",
                "labels.pb": "labels"}


class Digits:
    """The images in [0, 1] as [N, 1, 8, 8], their labels, and the seeded
    split (the same for every network trained on them). rng goes on to
    shuffle the training batches."""

    def __init__(self):
        self.rng = rng = np.random.default_rng(0)
        self.raw = load_digits()
        self.images = (self.raw.images / 16.0).astype(np.float32)[:, None]
        self.labels = self.raw.target.astype(np.int64)
        order = rng.permutation(len(self.images))
        self.test_idx, self.train_idx = order[:500], order[500:]


def train(model, digits, epochs, lr, decay_after=None):
    """Adam on batches of 64, shuffled by digits.rng, the learning rate a
    tenth from epoch `decay_after` on; leaves the model in eval mode."""
    rng = digits.rng
    opt = torch.optim.Adam(model.parameters(), lr=lr)
    x_train = torch.from_numpy(digits.images[digits.train_idx])
    y_train = torch.from_numpy(digits.labels[digits.train_idx])
    model.train()
    for epoch in range(epochs):
        if epoch == decay_after:
            for group in opt.param_groups:
                group["lr"] = lr / 10
        perm = torch.from_numpy(rng.permutation(len(digits.train_idx)))
        for i in range(0, len(perm), 64):
            batch = perm[i:i + 64]
            opt.zero_grad()
            loss = torch.nn.functional.cross_entropy(model(x_train[batch]),
                                                     y_train[batch])
            loss.backward()
            opt.step()
    model.eval()


def write(folder, name, array):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(numpy_helper.from_array(array, TENSOR_NAMES[name])
                .SerializeToString())


def export(out, model, digits):
    """model.onnx, calibration/, test/ and torch_accuracy.txt (see above)."""
    os.makedirs(out, exist_ok=True)
    torch.onnx.export(model, torch.zeros(1, 1, 8, 8), os.path.join(out, "model.onnx"),
                      input_names=["image"], output_names=["logits"],
                      dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}},
                      opset_version=13)
    images, labels = digits.images, digits.labels
    for s in range(8):
        idx = digits.train_idx[s * 100:(s + 1) * 100]
        write(os.path.join(out, "calibration", "test_data_set_%d" % s),
              "input_0.pb", images[idx])
    correct = 0
    with torch.no_grad():
        for s in range(5):
            idx = digits.test_idx[s * 100:(s + 1) * 100]
            folder = os.path.join(out, "test", "test_data_set_%d" % s)
            logits = model(torch.from_numpy(images[idx])).numpy()
            correct += int((logits.argmax(1) == labels[idx]).sum())
            write(folder, "input_0.pb", images[idx])
            write(folder, "output_0.pb", logits.astype(np.float32))
            write(folder, "labels.pb", labels[idx])
    with open(os.path.join(out, "torch_accuracy.txt"), "w") as f:
        f.write("%.1f\n" % (100.0 * correct / 500))


def export_sample(out, digits):
    sample = os.path.join(out, "sample")
    i = digits.test_idx[0]
    for s in range(32):
        j = digits.train_idx[s]
        write(os.path.join(sample, "calibration", "test_data_set_%d" % s),
              "input_0.pb", digits.images[j:j + 1])
    os.makedirs(sample, exist_ok=True)
    with open(os.path.join(sample, "label.txt"), "w") as f:
        f.write("%d\n" % digits.labels[i])
    with open(os.path.join(sample, "sample.pgm"), "wb") as f:
        f.write(b"P5\n8 8\n16\n" +
                bytes(int(v) for v in digits.raw.images[i].flatten()))


def main(out):
    torch.manual_seed(0)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    digits = Digits()
    model = torch.nn.Sequential(
        torch.nn.Conv2d(1, 16, 3, padding=1), torch.nn.ReLU(),
        torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(),
        torch.nn.MaxPool2d(2), torch.nn.Flatten(),
        torch.nn.Linear(512, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))
    train(model, digits, epochs=40, lr=3e-3)
    export(out, model, digits)
    export_sample(out, digits)


if __name__ == "__main__":
    main(sys.argv[1])
