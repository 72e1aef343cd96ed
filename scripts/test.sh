#!/usr/bin/env bash
# Sets up, builds and runs every test. Usage: scripts/test.sh [--sanitize]
#   --sanitize   build in build-asan with AddressSanitizer + UndefinedBehaviorSanitizer
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
if [ "${1:-}" = "--sanitize" ]; then
  dir=build-asan
  ./scripts/build.sh "$dir" -DNICSIM_SANITIZE=ON -DNICSIM_BENCH=OFF
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1
else
  dir=build
  ./scripts/build.sh "$dir"
fi
# The skipped-test count comes from CTest's JUnit report. With NICSIM_REQUIRE_EMU=1 (CI) every
# test must run: a skip makes this script fail (docs/emu.md, "Tests").
junit="$PWD/$dir/ctest-junit.xml"
rm -f "$junit"
rc=0
ctest --test-dir "$dir" --output-on-failure -j "$(nproc)" --output-junit "$junit" || rc=$?
skipped=$(sed -n 's/^[[:space:]]*skipped="\([0-9]*\)".*/\1/p' "$junit" 2>/dev/null | head -1)
echo "ctest: ${skipped:-unknown (no JUnit report)} skipped"
if [ "${NICSIM_REQUIRE_EMU:-0}" = 1 ] && [ "${skipped:-none}" != 0 ]; then
  echo "FAIL: NICSIM_REQUIRE_EMU=1 but ${skipped:-an unknown number of} test(s) skipped" >&2
  rc=1
fi
exit "$rc"
