#!/bin/bash
# The main job on the bundled sample: install, build (which compiles
# samples/tiny_classifier/model.onnx with `mlcc compile --target avx512`
# through mlcc_add_model and links the object into the C app
# samples/image_classifier), then run the app on a bundled image and print
# its top-5 classes. Last, the same model on the reference executor against
# its recorded outputs.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
tools/build.sh
build/bin/image_classifier samples/image_classifier/data/sample.ppm
build/bin/mlcc run samples/tiny_classifier/model.onnx --target avx512 \
  --data samples/tiny_classifier/test_data_set_0 --check
