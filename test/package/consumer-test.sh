#!/bin/bash
# Usage: consumer-test.sh CMAKE NINJA CC MLCC_BUILD_DIR CONSUMER_SRC MODEL WORK
#
# Installs the mlcc build into WORK/prefix (its three install components)
# and, as an application would:
#  1. configures and builds CONSUMER_SRC with find_package(mlcc) and runs it;
#  2. checks that a second build has nothing to do, and that touching the
#     model or the installed compiler recompiles the model; and that
#     mlcc_add_model refuses a bad NAME;
#  3. builds the same program from `pkg-config --cflags --libs mlcc` alone
#     and runs it against the installed shared runtime.
set -euo pipefail
cmake=$1 ninja=$2 cc=$3 mlcc_build=$4 src=$5 model=$6 work=$7

step() { echo "== $*"; }
fail() { echo "consumer-test: FAILED: $*" >&2; exit 1; }

rm -rf "$work"
mkdir -p "$work/models/tiny_classifier"
prefix=$work/prefix
# A copy, so that touching it below leaves the source tree alone.
cp "$model" "$work/models/tiny_classifier/model.onnx"
model=$work/models/tiny_classifier/model.onnx

step "install into $prefix"
for component in mlcc_runtime mlcc_compiler mlcc_development; do
  "$cmake" --install "$mlcc_build" --prefix "$prefix" --component $component \
    >/dev/null
done
for f in bin/mlcc include/mlcc/runtime.h include/mlcc/model.h; do
  [ -e "$prefix/$f" ] || fail "$f was not installed"
done
[ -z "$(find "$prefix/include" -name LastError.h)" ] ||
  fail "a private runtime header was installed"
libdir=$(cd "$prefix" && echo lib*/libmlcc_runtime.a)
libdir=$prefix/${libdir%/*}
[ -e "$libdir/libmlcc_runtime.so" ] || fail "no shared runtime in $libdir"
"$prefix/bin/mlcc" --help >/dev/null || fail "the installed mlcc does not run"

step "CMake: find_package(mlcc) + mlcc_add_model"
build=$work/build
"$cmake" -S "$src" -B "$build" -G Ninja -DCMAKE_MAKE_PROGRAM="$ninja" \
  -DCMAKE_C_COMPILER="$cc" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF -DMLCC_TEST_MODEL="$model" >/dev/null
"$cmake" --build "$build"
[ "$("$build/app")" = ok ] || fail "app did not print ok"
[ "$("$build/app2")" = ok ] || fail "app2 did not print ok"
[ "$("$build/app_external")" = ok ] || fail "app_external did not print ok"

step "rebuilds: nothing, then the model, then the compiler"
# What a build would run (whole, not piped into grep -q: with pipefail an
# early exit of grep would fail the pipe).
plan() { "$ninja" -C "$build" -n; }
[[ $(plan) == *"no work to do"* ]] || fail "a second build is not a no-op"
touch "$model"
[[ $(plan) == *"mlcc: compiling"* ]] ||
  fail "editing the model does not recompile it"
"$cmake" --build "$build" >/dev/null
[[ $(plan) == *"no work to do"* ]] || fail "the rebuild left work to do"
touch "$prefix/bin/mlcc"
[[ $(plan) == *"mlcc: compiling"* ]] ||
  fail "a new compiler does not recompile the model"
"$cmake" --build "$build" >/dev/null

step "mistakes stop the configure"
mistake() { # KIND EXPECTED-MESSAGE
  local out
  if out=$("$cmake" -S "$src" -B "$build" -DMLCC_TEST_MISTAKE="$1" 2>&1); then
    fail "mistake '$1' was accepted"
  fi
  [[ $(tr -s ' \n' ' ' <<<"$out") == *"$2"* ]] ||
    fail "mistake '$1' did not say '$2': $out"
}
mistake reserved-name "the model name 'Arena' would clash with the mlcc runtime's mlcc_arena_* names"
mistake bad-name "NAME '3d-net' is not a C identifier"
mistake same-name "already compiles a different model named 'tiny_classifier'"
"$cmake" -S "$src" -B "$build" -DMLCC_TEST_MISTAKE= >/dev/null

step "pkg-config"
export PKG_CONFIG_PATH=$libdir/pkgconfig
flags=$(pkg-config --cflags --libs mlcc) || fail "pkg-config mlcc failed"
echo "pkg-config --cflags --libs mlcc: $flags"
# The paths are relative to the .pc file (a relocatable prefix): compare
# them once resolved.
same_dir() { [ "$(cd "$1" && pwd -P)" = "$(cd "$2" && pwd -P)" ]; }
includedir=$(pkg-config --variable=includedir mlcc)
pc_libdir=$(pkg-config --variable=libdir mlcc)
same_dir "$includedir" "$prefix/include" || fail "includedir is $includedir"
same_dir "$pc_libdir" "$libdir" || fail "libdir is $pc_libdir"
[[ " $flags " == *" -I$includedir "* ]] || fail "no -I$includedir in the flags"
[[ " $flags " == *" -L$pc_libdir -lmlcc_runtime "* ]] ||
  fail "no -L$pc_libdir -lmlcc_runtime in the flags"
[ -x "$(pkg-config --variable=mlcc mlcc)" ] || fail "no mlcc variable"
# The model object and header from the CMake build, the rest from pkg-config.
# shellcheck disable=SC2046
"$cc" -std=c11 -o "$work/app-pkgconfig" $(pkg-config --cflags mlcc) \
  -I"$build/mlcc_models" "$src/main.c" "$build/mlcc_models/tiny_classifier.o" \
  $(pkg-config --libs mlcc)
[ "$(LD_LIBRARY_PATH=$libdir "$work/app-pkgconfig")" = ok ] ||
  fail "the pkg-config build did not print ok"
[[ $(LD_LIBRARY_PATH=$libdir ldd "$work/app-pkgconfig") == \
  *"$libdir/libmlcc_runtime.so"* ]] ||
  fail "the pkg-config build does not use the installed shared runtime"
echo "consumer-test: ok"
