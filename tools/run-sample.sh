#!/bin/bash
# The main job on the bundled sample: install, build, then run the sample
# image classifier on the reference target and check it against its
# recorded outputs.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
tools/build.sh
build/bin/mlcc run samples/tiny_classifier/model.onnx --target ref \
  --data samples/tiny_classifier/test_data_set_0 --check
