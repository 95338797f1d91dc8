#!/bin/bash
# The lit and unit tests on the ASan + UBSan build (tools/build.sh
# --sanitize: clang-19, in build-sanitize/), and the fuzz targets (CTest
# label `fuzz`: each replays its kept findings, then fuzzes for a minute).
# Part of tools/run-tests.sh. More: the conformance suites under the
# sanitizers with
#   tools/run-sanitized-tests.sh -R '^conformance-(ref|avx512)'
# The runtime's own leaks are checked by concurrency.test (LeakSanitizer);
# here leaks are not reported in the compiler's process (LLVM's and MLIR's
# singletons live until exit), and a failed allocation returns NULL, as
# the out-of-memory tests expect, instead of stopping the process.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
tools/build.sh --sanitize
export ASAN_OPTIONS=detect_leaks=0:allocator_may_return_null=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
cd build-sanitize
if [ $# -eq 0 ]; then
  set -- -R '^(lit$|unit:|fuzz: )'
fi
ctest -j "$(nproc)" --output-on-failure --timeout 3000 "$@"
