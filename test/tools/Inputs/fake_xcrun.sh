#!/bin/sh
# Stands in for Apple's xcrun in test/tools/metal-metallib.test: `--find`
# answers for metal and metallib (fails with FAKE_XCRUN_NO_METAL set, as on
# command-line tools without the Metal toolchain); `metal -c IN -o OUT`
# writes a fake .air holding the source (fails with FAKE_XCRUN_FAIL set);
# `metallib IN -o OUT` a fake library holding the .air. Every call is
# logged to $FAKE_XCRUN_LOG.
echo "$*" >> "$FAKE_XCRUN_LOG"
[ "$1" = -sdk ] && shift 2
case "$1" in
  --find)
    [ -n "$FAKE_XCRUN_NO_METAL" ] && exit 1
    echo "/fake/$2" ;;
  metal)
    if [ -n "$FAKE_XCRUN_FAIL" ]; then
      echo "kernel.metal:3:1: error: the fake compiler rejects this" >&2
      exit 1
    fi
    { echo FAKEAIR; cat "$4"; } > "$6" ;;
  metallib)
    { echo FAKEMETALLIB; cat "$2"; } > "$4" ;;
  *)
    exit 2 ;;
esac
