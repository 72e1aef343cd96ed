#!/usr/bin/env bash
# Configures and builds nicsim. Usage: scripts/build.sh [BUILD_DIR] [extra cmake args...]
#   NICSIM_BUILD_TYPE   CMake build type (default RelWithDebInfo; Release, Debug, ...)
# Warnings are errors here (NICSIM_WERROR=ON), as in CI; a plain `cmake` build leaves them
# warnings. CC/CXX choose the compiler as usual (CC=clang CXX=clang++).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
# ccache, when installed, makes rebuilds (and builds in several worktrees) cheap; not required.
launcher=()
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE="${NICSIM_BUILD_TYPE:-RelWithDebInfo}" \
  -DNICSIM_WERROR=ON "${launcher[@]}" "$@" >/dev/null
cmake --build "$dir"
