#!/usr/bin/env bash
# Sets up, builds and runs every test. Usage: scripts/test.sh [--sanitize]
#   --sanitize   build in build-asan with clang, AddressSanitizer + UndefinedBehaviorSanitizer
#                (so CI's two builds cover both compilers)
#   NICSIM_BUILD_TYPE   the build type of the plain build (default RelWithDebInfo; CI: Release)
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
if [ "${1:-}" = "--sanitize" ]; then
  dir=build-asan
  CC=clang CXX=clang++ ./scripts/build.sh "$dir" -DNICSIM_SANITIZE=ON -DNICSIM_BENCH=OFF
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1
else
  dir=build
  ./scripts/build.sh "$dir"
fi
ctest --test-dir "$dir" --output-on-failure -j "$(nproc)"
