#!/bin/bash
# The main job on the bundled samples: install, build (which compiles
# samples/digits/model.onnx, a CNN trained on handwritten digits, with
# `mlcc compile --target avx512` through mlcc_add_model, once in fp32 and
# once in int8 calibrated on bundled training images, and links both objects
# into the C app samples/digits), then read the bundled digit with both and
# print their answers. Then the Poisson blending sample (samples/poisson_blend: a while-loop solver
# compiled from graph-dialect MLIR) on its bundled images, writing
# build/poisson_blend.ppm. The classifier also runs through --target vulkan
# (samples/image_classifier/vulkan: the same main.c), on Mesa's lavapipe
# here, or on the GPU MLCC_DEVICE names: the tiny classifier (random
# weights) on a bundled image, its top-5 classes.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
tools/build.sh
build/bin/digits samples/digits/sample.pgm
# lavapipe when no other Vulkan driver is chosen.
export VK_ICD_FILENAMES=${VK_ICD_FILENAMES:-/usr/share/vulkan/icd.d/lvp_icd.x86_64.json}
build/bin/image_classifier_vulkan samples/image_classifier/data/sample.ppm
build/bin/poisson_blend samples/poisson_blend/data/source.ppm \
  samples/poisson_blend/data/background.ppm samples/poisson_blend/data/mask.pgm \
  build/poisson_blend.ppm
