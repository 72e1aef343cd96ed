#!/usr/bin/env bash
# CTest emu_lint: no library code under nicsim/ reads a real clock or sleeps except
# nicsim/emu/real_clock.cc, nicsim/live/live_clock.cc (real sockets) and
# nicsim/campaign/wall_clock.cc (a run's wall time in meta, the progress ETA);
# docs/ARCHITECTURE.md "Where time comes from". Tests (*_test.cc) are exempt: a root test may wait for a process to reach a state;
# timed assertions are ruled out by review, not by this script. Comments are not exempt: name
# the rule instead of the call. Usage: lint_clock.sh SRC
set -euo pipefail
src=${1:?usage: lint_clock.sh SOURCE_DIR}
pattern='clock_gettime|clock_nanosleep|steady_clock|system_clock|high_resolution_clock|gettimeofday|sleep_for|sleep_until|usleep|nanosleep|\btime\(nullptr\)|\btime\(NULL\)|\bsleep\('
hits=$(grep -rnE "$pattern" "$src/nicsim" --include='*.h' --include='*.cc' \
         | grep -v "^$src/nicsim/emu/real_clock\.cc:" | grep -v "^$src/nicsim/live/live_clock\.cc:" \
         | grep -v "^$src/nicsim/campaign/wall_clock\.cc:" \
         | grep -v "_test\.cc:" || true)
if [ -n "$hits" ]; then
  echo "emu_lint: real clock reads or sleeps outside nicsim/emu/real_clock.cc:" >&2
  echo "$hits" >&2
  exit 1
fi
echo "emu_lint: ok (only emu/real_clock.cc, live/live_clock.cc and campaign/wall_clock.cc read a real clock)"
