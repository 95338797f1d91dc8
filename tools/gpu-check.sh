#!/bin/bash
# The cuda target on an NVIDIA GPU, in one go (about 6 minutes on one GPU
# and 16 cores): the ONNX conformance suite on `cuda`, the real models
# against their torch/NumPy references, and `mlcc bench` on ResNet-50,
# MobileNetV2, BERT-base and the Poisson sample's Jacobi loop, beside
# PyTorch's eager and CUDA-graph latency on the first three; where the
# host CPU has AMX, the AMX kernels' tests and ResNet-50 in int8 and bf16
# with and without AMX. Then one summary table. Nothing here runs without
# a GPU: the tests (fake driver, ptxas) cover that.
#
# Usage: tools/gpu-check.sh [MODEL_DIR]
#   MODEL_DIR: the exported real models (test/models/export_models.py's
#   cache, ~/.cache/mlcc/models/<hash>). Missing ones are exported there
#   when python3 has torch; any still missing are reported, not skipped.
# Without a build and without LLVM 19 (a lent machine), the archives of
# tools/gpu-bundle.sh in $MLCC_GPU_BUNDLE (default .gpu-bundle) give the
# binaries, their libraries, the node tests and the small models.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${GPU_CHECK_OUT:-build/gpu-check}"
mkdir -p "$out"
data="${ONNX_TESTDATA:-/usr/share/libonnx-testdata/data}"

bundle="${MLCC_GPU_BUNDLE:-.gpu-bundle}"
if [ ! -x build/bin/mlcc ] && [ ! -x build/bundle/bin/mlcc ] &&
  ls "$bundle"/*.tar.xz >/dev/null 2>&1; then
  mkdir -p build/bundle
  for a in "$bundle"/*.tar.xz; do
    python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' \
      "$a" build/bundle || { echo "cannot unpack $a"; exit 1; }
  done
fi
if [ -x build/bundle/bin/mlcc ]; then
  bin=build/bundle/bin
  export LD_LIBRARY_PATH="$PWD/build/bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  [ -d "$data" ] || data=build/bundle/onnx-data
  models="${1:-build/bundle/models}"
else
  bin=build/bin
  if [ ! -x build/bin/mlcc ] || [ ! -x build/bin/mlcc-conformance ]; then
    cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null &&
      cmake --build build -j "$(nproc)" --target mlcc mlcc-conformance \
        mlcc-lowering-tests >"$out/build.log" 2>&1 ||
      { echo "build failed: $out/build.log"; exit 1; }
  fi
  models="${1:-$(ls -d "$HOME"/.cache/mlcc/models/*/ 2>/dev/null | grep -v zoo- | head -1)}"
fi
mlcc=$bin/mlcc
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader 2>/dev/null |
  head -1 | sed 's/^/gpu: /'
grep -m1 'model name' /proc/cpuinfo | sed 's/^.*: /host cpu: /'
echo "host cores: $(nproc); AMX: $(grep -m1 -o -w 'amx_tile' /proc/cpuinfo || echo none)"

# Each row is a file, so that the steps run side by side can add theirs.
rows="$out/rows"
rm -rf "$rows"
mkdir -p "$rows"
row() { printf '%-34s %s\n' "$2" "$3" >"$rows/$1"; }

# The models torch can export (ResNet-50 and BERT-base are too large for the
# bundle), each on its own so one failing leaves the others.
mkdir -p "$models"
for m in resnet50 bert_base bert_base_opset13 mobilenetv2 mlp cifar10_sigmoid_bn; do
  [ -f "$models/$m/model.onnx" ] && continue
  python3 -c 'import torch, torchvision' 2>/dev/null || break
  timeout 300 python3 test/models/export_models.py "$models" --only "$m" \
    >"$out/export-$m.log" 2>&1 || echo "export of $m: $(tail -1 "$out/export-$m.log")"
done

# Conformance: one process per test-name prefix, as many at once as cores
# (each test compiles on the CPU first, then runs on the GPU).
start=$(date +%s)
shards=()
for p in a b c d e f g h i j k l m n o p q r s t u v w x y z; do shards+=("node test_$p"); done
for s in pytorch-converted pytorch-operator simple; do shards+=("$s -"); done
printf '%s\n' "${shards[@]}" | xargs -P "$(nproc)" -L 1 sh -c '
  filter=""; [ "$1" = - ] || filter="--filter $1"
  timeout 420 '"$bin"'/mlcc-conformance --target cuda $filter \
    --expected test/conformance/vulkan_expected_passes.txt \
    --exclusions test/conformance/exclusions.txt -v "'"$data"'/$0" \
    >"'"$out"'/conformance-$0-$1.log" 2>&1' &


# The real models against their references, at the avx512 tolerances,
# side by side with the conformance run.
check() { # name rtol atol [dim]
  local dir="$models/$1" dims=()
  [ -n "${4:-}" ] && dims=(--dim "$4")
  if [ ! -f "$dir/model.onnx" ]; then row "b-$1" "model $1" "MISSING ($dir)"; return; fi
  if timeout 300 $mlcc run "$dir/model.onnx" --target cuda "${dims[@]}" \
       --data "$dir/test_data_set_0" --check --rtol "$2" --atol "$3" \
       >"$out/model-$1.log" 2>&1; then
    row "b-$1" "model $1" "OK: $(grep -o 'max abs error [^,]*' "$out/model-$1.log" | sort -k4 -g | tail -1)"
  else
    row "b-$1" "model $1" "FAIL: $(tail -1 "$out/model-$1.log")"
  fi
}
check mlp 1e-4 1e-5 &
check cifar10_sigmoid_bn 1e-4 1e-5 &
check loop_solver 1e-4 1e-5 &
check if_model 1e-5 1e-6 &
check resnet50 1e-3 1e-4 &
check mobilenetv2 1e-3 1e-4 &
check bert_base 1e-3 1e-4 batch=1 &
check bert_base_opset13 1e-3 1e-4 batch=1 &
wait
# "conformance: 986 of 993 inference tests pass (...)" per shard; a test
# that passes on vulkan and fails here is a REGRESSION line in its log.
summary=$(cat "$out"/conformance-*.log | awk '/^conformance: [0-9]+ of [0-9]+/ \
  { p += $2; t += $4 } END { printf "%d of %d pass", p, t }')
regressions=$(cat "$out"/conformance-*.log | grep -c '^REGRESSION' || true)
row a-conformance "conformance on cuda" "$summary, $regressions of the vulkan target's passes fail ($(( $(date +%s) - start )) s)"

# Latency: median of $runs runs after $warmup, one context.
runs=50 warmup=10
bench() { # key label model [mlcc options...]
  local key=$1 label=$2 model=$3
  shift 3
  if [ ! -f "$model" ]; then row "$key" "bench $label" "MISSING ($model)"; return; fi
  if timeout 240 $mlcc bench "$model" "$@" --runs "$runs" --warmup "$warmup" \
       >"$out/bench-$key.log" 2>&1; then
    row "$key" "bench $label" "$(grep -m1 -i 'median' "$out/bench-$key.log")"
  else
    row "$key" "bench $label" "FAIL: $(tail -1 "$out/bench-$key.log")"
  fi
}

# The AMX kernels, where the host has AMX: their unit tests, then ResNet-50
# with and without AMX at one thread (int8 calibrated on its test set), on
# the CPU while the GPU benches run.
amx() {
  if ! grep -q -w amx_tile /proc/cpuinfo; then
    row d0-amx "amx kernel tests" "SKIPPED: the host CPU has no AMX"
    return
  fi
  if timeout 120 $bin/mlcc-lowering-tests "[amx]" >"$out/amx-tests.log" 2>&1; then
    row d0-amx "amx kernel tests" "OK: $(grep -m1 -E 'test cases' "$out/amx-tests.log")"
  else
    row d0-amx "amx kernel tests" "FAIL: $(grep -m1 -E 'test cases' "$out/amx-tests.log")"
  fi
  local r50="$models/resnet50/model.onnx" runs=10 warmup=2
  local int8=(--quantize int8 --calibrate "$models/resnet50" --max-layer-error inf)
  bench d1-fp32 "resnet50 fp32 1t" "$r50" --cpu icelake-server
  bench d2-bf16 "resnet50 bf16 1t avx512_bf16" "$r50" --precision bf16 --cpu cooperlake
  bench d3-bf16amx "resnet50 bf16 1t AMX" "$r50" --precision bf16 --cpu sapphirerapids
  bench d4-int8 "resnet50 int8 1t VNNI" "$r50" "${int8[@]}" --cpu icelake-server
  bench d5-int8amx "resnet50 int8 1t AMX" "$r50" "${int8[@]}" --cpu sapphirerapids
  # bf16 without AMX took twice fp32's time on the first Xeon seen (on Zen
  # 5 it is 1.8x faster): the profiles, op by op, to find out why.
  for p in "fp32 --cpu icelake-server" "bf16 --precision bf16 --cpu cooperlake"; do
    timeout 120 $mlcc bench "$r50" ${p#* } --runs 5 --per-op \
      >"$out/per-op-${p%% *}.log" 2>&1
  done
}
amx &

bench c1-resnet "resnet50 b1" "$models/resnet50/model.onnx" --target cuda
bench c2-mobilenet "mobilenetv2 b1" "$models/mobilenetv2/model.onnx" --target cuda
bench c3-bert "bert_base s128" "$models/bert_base/model.onnx" --target cuda --dim batch=1
bench c4-jacobi "poisson jacobi loop" samples/poisson_blend/poisson_blend.mlir --target cuda
# PyTorch on the same GPU for the ratios: eager, and replayed from a CUDA
# graph (tools/bench/torch_gpu.py).
if python3 -c 'import torch, torchvision; assert torch.cuda.is_available()' 2>/dev/null; then
  timeout 240 python3 tools/bench/torch_gpu.py >"$out/torch.log" 2>&1
  i=0
  while read -r line; do
    i=$((i + 1))
    row "c9-torch-$i" "${line%%: median*}" "median ${line##*median }"
  done < <(grep '^torch .*: median' "$out/torch.log")
  [ "$i" -gt 0 ] || row c9-torch "torch on the GPU" "FAIL: $(tail -1 "$out/torch.log")"
else
  row c9-torch "torch on the GPU" "SKIPPED: python3 has no torch with CUDA"
fi
wait

echo
cat "$rows"/*
