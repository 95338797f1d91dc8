#!/bin/bash
# Packs what tools/gpu-check.sh needs for a GPU machine that has no LLVM 19
# and cannot install it (a lent machine with no network): the built mlcc,
# mlcc-conformance and mlcc-lowering-tests with every shared library they
# load except glibc's, the ONNX node tests, and the small real models. The
# large ones (ResNet-50, BERT-base: 100 and 420 MB of weights) are exported
# there by test/models/export_models.py from the same seed.
#
# Usage: tools/gpu-bundle.sh [OUT_DIR]   (default .gpu-bundle)
# Writes OUT_DIR/libs.tar.xz (about 55 MB) and OUT_DIR/rest.tar.xz (about
# 30 MB), two archives so that each fits a 64 MiB transfer; gpu-check.sh
# unpacks whatever of them it finds in $MLCC_GPU_BUNDLE into build/bundle.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${1:-.gpu-bundle}"
models="${MODELS:-$(ls -d "$HOME"/.cache/mlcc/models/*/ 2>/dev/null | grep -v zoo- | head -1)}"
bins=(mlcc mlcc-conformance mlcc-lowering-tests)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib" "$stage/models" "$out"

for b in "${bins[@]}"; do
  cp "build/bin/$b" "$stage/bin/"
  ldd "build/bin/$b" | awk '$3 ~ /^\// { print $3 }'
done | sort -u | grep -v -E '/(libc|libm|libdl|libpthread|librt)\.so|/ld-linux' |
  xargs cp -L -t "$stage/lib"
ln -s /usr/share/libonnx-testdata/data "$stage/onnx-data"
for m in mlp cifar10_sigmoid_bn loop_solver if_model mobilenetv2; do
  cp -r "$models/$m" "$stage/models/"
done

# xz, not zstd: Python's tarfile (on any machine with python3) unpacks it.
tar -C "$stage" -cf - lib | xz -9e -T0 >"$out/libs.tar.xz"
tar -C "$stage" -chf - bin onnx-data models | xz -9 -T0 >"$out/rest.tar.xz"
ls -l "$out"
