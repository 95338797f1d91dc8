"""Trains torchvision's ResNet-50 on the digits (export_digits.py's split)
and exports it in the same layout: argv[1] is the folder.

The issue asks for ResNet-50's int8 accuracy, and a ResNet-50 with seeded
weights cannot show it: its outputs are nearly one common vector whatever
the input, and 1% input noise moves its top-1 on a quarter of the inputs.
Without ImageNet weights here, this is a trained ResNet-50 on a real task:
the 8x8 image is resized to 32x32 (bilinear) and repeated on three
channels inside the model, so the network is ResNet-50 as torchvision
builds it, stem to fc (10 classes), at 32x32 (its last stage runs at 1x1).
Trained 8 epochs with Adam (the last two at a tenth of the rate), seeded,
one thread (about 5 minutes).

Written: what export_digits.py writes, without sample/.
"""
import sys

import torch
import torchvision

from export_digits import Digits, export, train


class Resnet50Digits(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.net = torchvision.models.resnet50(weights=None, num_classes=10)

    def forward(self, image):
        x = torch.nn.functional.interpolate(image, size=(32, 32), mode="bilinear",
                                            align_corners=False)
        return self.net(torch.cat([x, x, x], 1))


def main(out):
    torch.manual_seed(0)
    torch.use_deterministic_algorithms(True)
    torch.set_num_threads(1)
    digits = Digits()
    model = Resnet50Digits()
    train(model, digits, epochs=8, lr=1e-3, decay_after=6)
    export(out, model, digits)


if __name__ == "__main__":
    main(sys.argv[1])
