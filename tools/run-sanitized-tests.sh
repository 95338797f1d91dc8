#!/bin/bash
# The lit and unit tests on the ASan + UBSan build (tools/build.sh
# --sanitize, in build-sanitize/). Not part of CI (a second full build):
# run it before a change to the importer, the passes or the runtime lands.
# Leaks are not reported in the compiler's own process (LLVM's and MLIR's
# singletons live until exit); the runtime's are, by concurrency.test.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
tools/build.sh --sanitize
export ASAN_OPTIONS=detect_leaks=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
cd build-sanitize
ctest -j "$(nproc)" --output-on-failure --timeout 3000 -R '^(lit|unit: )' "$@"
