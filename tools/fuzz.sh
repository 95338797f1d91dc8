#!/bin/bash
# Runs one libFuzzer target of the sanitizer build (tools/build.sh
# --sanitize) for SECONDS:
#   tools/fuzz.sh onnx-import 1800
# Targets: onnx-import, mlir-input, tensor-proto, weights-file, runtime-run
# (test/fuzz). First the kept findings (test/fuzz/regressions/TARGET) are
# replayed, then it fuzzes from its corpus (BUILD/fuzz/corpus/TARGET, kept
# between runs) and the seeds: the node tests' models and data, the
# repository's .mlir files, test/fuzz/seeds/TARGET. A crash is written to
# BUILD/fuzz/artifacts/TARGET/ and fails the run; once fixed, keep it in
# test/fuzz/regressions/TARGET/.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
target="${1:?usage: tools/fuzz.sh TARGET SECONDS [BUILD_DIR]}"
seconds="${2:?usage: tools/fuzz.sh TARGET SECONDS [BUILD_DIR]}"
build="$(cd "${3:-$root/build-sanitize}" && pwd)"
bin="$build/bin/mlcc-fuzz-$target"
[ -x "$bin" ] || { echo "fuzz.sh: no $bin (tools/build.sh --sanitize)" >&2; exit 1; }
work="$build/fuzz"
corpus="$work/corpus/$target"
seeds="$work/seeds/$target"
artifacts="$work/artifacts/$target"
log="$work/logs/$target.log"
mkdir -p "$corpus" "$artifacts" "$(dirname "$log")"

# The seeds, gathered once per build folder. The fuzz targets skip inputs
# over 256 KiB, and so does this.
testdata=/usr/share/libonnx-testdata/data
if [ ! -d "$seeds" ]; then
  mkdir -p "$seeds.tmp"
  case "$target" in
    onnx-import)
      for m in "$testdata"/*/*/model.onnx; do
        d="${m%/model.onnx}"
        cp "$m" "$seeds.tmp/$(basename "$(dirname "$d")")-$(basename "$d").onnx"
      done ;;
    tensor-proto)
      for f in "$testdata"/node/*/test_data_set_0/*.pb; do
        d="${f%/test_data_set_0/*}"
        cp "$f" "$seeds.tmp/$(basename "$d")-$(basename "$f")"
      done ;;
    mlir-input)
      find "$root/test" "$root/samples" -name '*.mlir' -size -256k \
        -exec cp --backup=numbered -t "$seeds.tmp" {} + ;;
  esac
  find "$seeds.tmp" -type f -size +256k -delete
  if [ -d "$root/test/fuzz/seeds/$target" ]; then
    cp "$root/test/fuzz/seeds/$target"/* "$seeds.tmp/"
  fi
  mv "$seeds.tmp" "$seeds"
fi

# Leaks are findings here (libFuzzer checks each input's), and so is an
# allocation past -malloc_limit_mb; UBSan stops at its first report (the
# build has -fno-sanitize-recover).
export ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=1
export UBSAN_OPTIONS=print_stacktrace=1

regressions="$root/test/fuzz/regressions/$target"
if compgen -G "$regressions/*" >/dev/null; then
  echo "fuzz $target: replaying $(ls "$regressions" | wc -l) kept findings"
  "$bin" -rss_limit_mb=4096 -malloc_limit_mb=2048 "$regressions"/* \
    > "$work/logs/$target.regressions.log" 2>&1 || {
    tail -40 "$work/logs/$target.regressions.log" >&2
    echo "fuzz $target: a kept finding fails again" >&2
    exit 1
  }
fi

status=0
"$bin" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=4096 \
  -malloc_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$artifacts/" \
  "$corpus" "$seeds" > "$log" 2>&1 || status=$?
done_line="$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -1 || true)"
runs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)"
echo "fuzz $target: ${runs:-?} runs in ${seconds}s; ${done_line:-no DONE line}"
echo "fuzz $target: corpus $(ls "$corpus" | wc -l) inputs, log $log"
if [ "$status" -ne 0 ]; then
  grep -E 'ERROR|SUMMARY|finding|Test unit written' "$log" >&2 || tail -40 "$log" >&2
  echo "fuzz $target: FAILED (exit $status); the input is in $artifacts/" >&2
  exit 1
fi
