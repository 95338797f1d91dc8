#!/bin/bash
# Exports the test models into OUT unless a complete export is already there.
set -euo pipefail
script=$1
out=$2
if [ -f "$out/.complete" ]; then
  echo "models already exported in $out"
  exit 0
fi
rm -rf "$out.partial"
mkdir -p "$out.partial"
/usr/bin/python3 "$script" "$out.partial"
touch "$out.partial/.complete"
rm -rf "$out"
mv "$out.partial" "$out"
