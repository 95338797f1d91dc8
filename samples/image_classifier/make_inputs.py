#!/usr/bin/env python3
"""Writes the image classifier sample's inputs into data/:

  sample.ppm   a 48 x 40 synthetic picture (binary PPM, P6): exercises the
               resize and normalisation path of main.c
  input_0.f32  tiny_classifier's recorded input (test_data_set_0/input_0.pb)
               as raw little-endian f32: main.c's output on it must match
               the recorded output_0.pb

Run with Debian's interpreter:  /usr/bin/python3 samples/image_classifier/make_inputs.py
The outputs are committed; rerun only to change them.
"""
import os

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = os.path.join(HERE, "data")
REFERENCE = os.path.join(HERE, "..", "tiny_classifier", "test_data_set_0")


def write_ppm(path):
    # Not 32 x 32, and not square, so that the nearest-neighbour resize runs:
    # a red-to-blue gradient with a green disc.
    height, width = 40, 48
    y, x = np.mgrid[0:height, 0:width]
    image = np.zeros((height, width, 3), np.uint8)
    image[..., 0] = 255 * x // (width - 1)
    image[..., 2] = 255 - image[..., 0]
    disc = (x - 30) ** 2 + (y - 18) ** 2 < 10 ** 2
    image[disc] = (40, 220, 60)
    with open(path, "wb") as f:
        f.write(b"P6\n# mlcc image_classifier sample\n%d %d\n255\n" % (width, height))
        f.write(image.tobytes())


def write_raw(path):
    tensor = onnx.TensorProto()
    with open(os.path.join(REFERENCE, "input_0.pb"), "rb") as f:
        tensor.ParseFromString(f.read())
    array = numpy_helper.to_array(tensor).astype("<f4")
    with open(path, "wb") as f:
        f.write(array.tobytes())


def main():
    os.makedirs(DATA, exist_ok=True)
    write_ppm(os.path.join(DATA, "sample.ppm"))
    write_raw(os.path.join(DATA, "input_0.f32"))


if __name__ == "__main__":
    main()
