#!/bin/bash
# Configures and builds mlcc in ./build (Release, Ninja, ccache).
#   tools/build.sh --sanitize   the same in ./build-sanitize with clang-19,
#                               ASan and UBSan (MLCC_SANITIZE) and the
#                               libFuzzer targets (MLCC_FUZZ), see
#                               CMakeLists.txt; tools/run-sanitized-tests.sh
#                               runs its tests, tools/fuzz.sh its fuzzers
set -euo pipefail
cd "$(dirname "$0")/.."
# Paths under the checkout hash as relative ones, so ccache hits survive a
# fresh clone in another folder (CI).
export CCACHE_BASEDIR="$PWD"
dir=build
flags=()
if [ "${1:-}" = "--sanitize" ]; then
  dir=build-sanitize
  flags=(-DMLCC_SANITIZE=address,undefined -DMLCC_FUZZ=ON
    -DCMAKE_C_COMPILER=clang-19 -DCMAKE_CXX_COMPILER=clang++-19)
fi
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "${flags[@]}" >/dev/null
cmake --build "$dir" -j "$(nproc)"
