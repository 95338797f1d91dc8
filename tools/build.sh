#!/bin/bash
# Configures and builds mlcc in ./build (Release, Ninja, ccache).
set -euo pipefail
cd "$(dirname "$0")/.."
# Paths under the checkout hash as relative ones, so ccache hits survive a
# fresh clone in another folder (CI).
export CCACHE_BASEDIR="$PWD"
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$(nproc)"
