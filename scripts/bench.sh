#!/usr/bin/env bash
# Builds a Release tree and runs every Google Benchmark program, printing the console tables
# and keeping JSON results in build-release/bench/<name>.json.
# Usage: scripts/bench.sh [FILTER_REGEX] [MIN_TIME_SECONDS]
#   FILTER_REGEX selects benchmark programs by name (default: all), e.g. 'fq_codel|htb'.
# Speed is measured here, never asserted in tests (the machine is shared and noisy): run it on
# a quiet machine and record the results with the date and machine in docs/benchmarks.md.
set -euo pipefail
cd "$(dirname "$0")/.."
filter=${1:-.}
min_time=${2:-1}
./scripts/setup.sh
# -O2 like the tested build (RelWithDebInfo) but without debug info.
cmake -S . -B build-release -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_FLAGS_RELEASE="-O2 -DNDEBUG" >/dev/null
mapfile -t targets < <(ninja -C build-release -t targets all | sed -n 's/^\([a-z0-9_]*_bench\): .*/\1/p' | sort -u)
selected=()
for t in "${targets[@]}"; do
  [[ "$t" =~ $filter ]] && selected+=("$t")
done
[ ${#selected[@]} -gt 0 ] || { echo "bench: no benchmark matches '$filter'" >&2; exit 2; }
cmake --build build-release --target "${selected[@]}"
mkdir -p build-release/bench
echo "machine: $(nproc) cores, $(lscpu | sed -n 's/^Model name: *//p' | head -1); $(date -u +%F)"
find build-release/nicsim -type f -perm -u+x -name '*_bench' | sort | while read -r exe; do
  name=$(basename "$exe")
  [[ "$name" =~ $filter ]] || continue
  echo "== $name"
  "$exe" --benchmark_min_time="$min_time" --benchmark_out="build-release/bench/$name.json" \
    --benchmark_out_format=json
done
