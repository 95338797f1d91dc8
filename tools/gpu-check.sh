#!/bin/bash
# The cuda target on an NVIDIA GPU, in one go (under 8 minutes on one GPU):
# build (if needed), the ONNX conformance suite on `cuda`, the real models
# against their torch/NumPy references, and `mlcc bench` on ResNet-50,
# MobileNetV2, BERT-base and the Poisson sample's Jacobi loop; then one
# summary table. Nothing here runs without a GPU: the tests (fake driver,
# ptxas) cover that.
#
# Usage: tools/gpu-check.sh [MODEL_DIR]
#   MODEL_DIR: the exported real models (test/models/export_models.py's
#   cache, ~/.cache/mlcc/models/<hash>); missing models are reported, not
#   skipped silently.
set -uo pipefail
cd "$(dirname "$0")/.."
models="${1:-$(ls -d "$HOME"/.cache/mlcc/models/*/ 2>/dev/null | grep -v zoo- | head -1)}"
out="${GPU_CHECK_OUT:-build/gpu-check}"
mkdir -p "$out"
rows=()
row() { rows+=("$(printf '%-34s %s' "$1" "$2")"); }

if [ ! -x build/bin/mlcc ] || [ ! -x build/bin/mlcc-conformance ]; then
  cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null &&
    cmake --build build -j "$(nproc)" --target mlcc mlcc-conformance >"$out/build.log" 2>&1 ||
    { echo "build failed: $out/build.log"; exit 1; }
fi
mlcc=build/bin/mlcc
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -1 |
  sed 's/^/gpu: /'
grep -m1 'model name' /proc/cpuinfo | sed 's/^.*: /host cpu: /'

# Conformance, in 4 shards at once (each test compiles on the CPU first).
data=/usr/share/libonnx-testdata/data
start=$(date +%s)
for shard in node pytorch-converted pytorch-operator simple; do
  timeout 420 build/bin/mlcc-conformance --target cuda \
    --expected test/conformance/vulkan_expected_passes.txt \
    --exclusions test/conformance/exclusions.txt -v "$data/$shard" \
    >"$out/conformance-$shard.log" 2>&1 &
done
wait
# "conformance: 986 of 993 inference tests pass (...)" per shard.
summary=$(cat "$out"/conformance-*.log | awk '/^conformance: [0-9]+ of [0-9]+/ \
  { p += $2; t += $4 } END { printf "%d of %d pass", p, t }')
row "conformance on cuda" "$summary ($(( $(date +%s) - start )) s; logs in $out)"

# The real models against their references, at the avx512 tolerances.
check() { # name rtol atol [dim]
  local dir="$models/$1" dims=()
  [ -n "${4:-}" ] && dims=(--dim "$4")
  if [ ! -f "$dir/model.onnx" ]; then row "model $1" "MISSING ($dir)"; return; fi
  if timeout 300 $mlcc run "$dir/model.onnx" --target cuda "${dims[@]}" \
       --data "$dir/test_data_set_0" --check --rtol "$2" --atol "$3" \
       >"$out/model-$1.log" 2>&1; then
    row "model $1" "OK: $(grep -o 'max abs error [^,]*' "$out/model-$1.log" | sort -k4 -g | tail -1)"
  else
    row "model $1" "FAIL: $(tail -1 "$out/model-$1.log")"
  fi
}
check mlp 1e-4 1e-5
check cifar10_sigmoid_bn 1e-4 1e-5
check loop_solver 1e-4 1e-5
check if_model 1e-5 1e-6
check resnet50 1e-3 1e-4
check mobilenetv2 1e-3 1e-4
check bert_base 1e-3 1e-4 batch=1
check bert_base_opset13 1e-3 1e-4 batch=1

# Latency: median of 50 runs after 10, one context.
bench() { # label model [dim]
  local dims=()
  [ -n "${3:-}" ] && dims=(--dim "$3")
  if [ ! -f "$2" ]; then row "bench $1" "MISSING ($2)"; return; fi
  if timeout 240 $mlcc bench "$2" --target cuda "${dims[@]}" --runs 50 --warmup 10 \
       >"$out/bench-$1.log" 2>&1; then
    row "bench $1" "$(grep -m1 -i 'median' "$out/bench-$1.log")"
  else
    row "bench $1" "FAIL: $(tail -1 "$out/bench-$1.log")"
  fi
}
bench "resnet50 b1" "$models/resnet50/model.onnx"
bench "mobilenetv2 b1" "$models/mobilenetv2/model.onnx"
bench "bert_base s128" "$models/bert_base/model.onnx" batch=1
bench "poisson jacobi loop" samples/poisson_blend/poisson_blend.mlir

echo
printf '%s\n' "${rows[@]}"
