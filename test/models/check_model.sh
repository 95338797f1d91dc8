#!/bin/bash
# Runs a model-zoo folder on the reference executor against every test data
# set in it. Usage: check_model.sh MLCC MODEL_DIR RTOL ATOL [DIM]
set -euo pipefail
mlcc=$1 dir=$2 rtol=$3 atol=$4 dim=${5:-}
dimArgs=()
[ -n "$dim" ] && dimArgs=(--dim "$dim")
found=0
for data in "$dir"/test_data_set_*; do
  found=1
  echo "== $data"
  "$mlcc" run "$dir/model.onnx" --target ref "${dimArgs[@]}" --data "$data" \
    --check --rtol "$rtol" --atol "$atol"
done
[ $found = 1 ] || { echo "no test data in $dir"; exit 1; }
