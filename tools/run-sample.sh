#!/bin/bash
# The main job on the bundled sample: install, build (which compiles
# samples/tiny_classifier/model.onnx with `mlcc compile --target avx512`
# through mlcc_add_model and links the object into the C app
# samples/image_classifier), then run the app on a bundled image and print
# its top-5 classes. Then the same model against its recorded outputs, and
# the Poisson blending sample (samples/poisson_blend: a while-loop solver
# compiled from graph-dialect MLIR) on its bundled images, writing
# build/poisson_blend.ppm. The classifier also runs through --target vulkan
# (samples/image_classifier/vulkan: the same main.c), on Mesa's lavapipe
# here, or on the GPU MLCC_DEVICE names.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
tools/build.sh
build/bin/image_classifier samples/image_classifier/data/sample.ppm
# lavapipe when no other Vulkan driver is chosen.
export VK_ICD_FILENAMES=${VK_ICD_FILENAMES:-/usr/share/vulkan/icd.d/lvp_icd.x86_64.json}
build/bin/image_classifier_vulkan samples/image_classifier/data/sample.ppm
build/bin/mlcc run samples/tiny_classifier/model.onnx --target avx512 \
  --data samples/tiny_classifier/test_data_set_0 --check
build/bin/poisson_blend samples/poisson_blend/data/source.ppm \
  samples/poisson_blend/data/background.ppm samples/poisson_blend/data/mask.pgm \
  build/poisson_blend.ppm
