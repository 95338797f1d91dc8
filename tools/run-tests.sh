#!/bin/bash
# Every test: install, build, then lit, unit, conformance and real-model
# tests through CTest, two at a time; then the lit and unit tests again on
# the ASan + UBSan build, and a minute of each fuzz target
# (tools/run-sanitized-tests.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
tools/build.sh
(cd build && ctest -j "$(nproc)" --output-on-failure --timeout 3000)
tools/run-sanitized-tests.sh
