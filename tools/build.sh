#!/bin/bash
# Configures and builds mlcc in ./build (Release, Ninja, ccache).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j "$(nproc)"
