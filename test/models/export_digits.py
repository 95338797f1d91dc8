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
"""
import os
import sys

import numpy as np
import onnx
import torch
from onnx import numpy_helper
from sklearn.datasets import load_digits

out = sys.argv[1]
torch.manual_seed(0)
torch.use_deterministic_algorithms(True)
torch.set_num_threads(1)
rng = np.random.default_rng(0)

digits = load_digits()
images = (digits.images / 16.0).astype(np.float32)[:, None]  # [N, 1, 8, 8]
labels = digits.target.astype(np.int64)
order = rng.permutation(len(images))
test_idx, train_idx = order[:500], order[500:]

model = torch.nn.Sequential(
    torch.nn.Conv2d(1, 16, 3, padding=1), torch.nn.ReLU(),
    torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(),
    torch.nn.MaxPool2d(2), torch.nn.Flatten(),
    torch.nn.Linear(512, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))
opt = torch.optim.Adam(model.parameters(), lr=3e-3)
x_train = torch.from_numpy(images[train_idx])
y_train = torch.from_numpy(labels[train_idx])
for epoch in range(40):
    perm = torch.from_numpy(rng.permutation(len(train_idx)))
    for i in range(0, len(perm), 64):
        batch = perm[i:i + 64]
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x_train[batch]),
                                                 y_train[batch])
        loss.backward()
        opt.step()
model.eval()

os.makedirs(out, exist_ok=True)
torch.onnx.export(model, torch.zeros(1, 1, 8, 8), os.path.join(out, "model.onnx"),
                  input_names=["image"], output_names=["logits"],
                  dynamic_axes={"image": {0: "batch"}, "logits": {0: "batch"}},
                  opset_version=13)

TENSOR_NAMES = {"input_0.pb": "image", "output_0.pb": "logits",
                "labels.pb": "labels"}

def write(folder, name, array):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(numpy_helper.from_array(array, TENSOR_NAMES[name])
                .SerializeToString())

for s in range(8):
    idx = train_idx[s * 100:(s + 1) * 100]
    write(os.path.join(out, "calibration", "test_data_set_%d" % s),
          "input_0.pb", images[idx])
correct = 0
with torch.no_grad():
    for s in range(5):
        idx = test_idx[s * 100:(s + 1) * 100]
        folder = os.path.join(out, "test", "test_data_set_%d" % s)
        logits = model(torch.from_numpy(images[idx])).numpy()
        correct += int((logits.argmax(1) == labels[idx]).sum())
        write(folder, "input_0.pb", images[idx])
        write(folder, "output_0.pb", logits.astype(np.float32))
        write(folder, "labels.pb", labels[idx])
with open(os.path.join(out, "torch_accuracy.txt"), "w") as f:
    f.write("%.1f\n" % (100.0 * correct / 500))

sample = os.path.join(out, "sample")
i = test_idx[0]
for s in range(32):
    j = train_idx[s]
    write(os.path.join(sample, "calibration", "test_data_set_%d" % s),
          "input_0.pb", images[j:j + 1])
os.makedirs(sample, exist_ok=True)
with open(os.path.join(sample, "label.txt"), "w") as f:
    f.write("%d\n" % labels[i])
with open(os.path.join(sample, "sample.pgm"), "wb") as f:
    f.write(b"P5\n8 8\n16\n" + bytes(int(v) for v in digits.images[i].flatten()))
