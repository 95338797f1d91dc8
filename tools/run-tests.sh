#!/bin/bash
# Every test: install, build, then lit, unit, conformance and real-model
# tests through CTest, two at a time.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
tools/build.sh
cd build
ctest -j "$(nproc)" --output-on-failure --timeout 3000
