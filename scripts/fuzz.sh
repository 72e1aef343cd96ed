#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan) and runs each for a bounded time.
# Usage: scripts/fuzz.sh [SECONDS_PER_FUZZER]        (default 30)
#   Build directory: build-fuzz (override with NICSIM_FUZZ_BUILD_DIR).
#   Every nicsim/{algo,config,report,live,emu}/<name>_fuzz.cc is built as <name>_fuzz
#   and started from the committed seed corpus <its directory>/fuzz_corpus/<name>/ (read-only:
#   new inputs go to a scratch corpus in the build directory). Exits non-zero if any fuzzer
#   finds a crash, a sanitizer error, a leak or a timeout; the reproducer is kept under
#   <build dir>/fuzz/<name>/artifacts/.
#   Reproduce with: <build dir>/nicsim/<algo|config|report|live|emu>/<name>_fuzz <artifact file>
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-30}
if ! [[ "$secs" =~ ^[0-9]+$ ]] || [ "$secs" -lt 1 ]; then
  echo "usage: scripts/fuzz.sh [SECONDS_PER_FUZZER]" >&2
  exit 2
fi
dir=${NICSIM_FUZZ_BUILD_DIR:-build-fuzz}

./scripts/setup.sh
CC=clang CXX=clang++ cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DNICSIM_FUZZ=ON -DNICSIM_TESTS=OFF -DNICSIM_BENCH=OFF >/dev/null

names=()
srcdirs=()
for src in nicsim/algo/*_fuzz.cc nicsim/config/*_fuzz.cc nicsim/report/*_fuzz.cc nicsim/live/*_fuzz.cc \
           nicsim/emu/*_fuzz.cc; do
  [ -e "$src" ] || continue
  names+=("$(basename "$src" .cc)")
  srcdirs+=("$(dirname "$src")")
done
if [ ${#names[@]} -eq 0 ]; then
  echo "fuzz: no fuzz targets found" >&2
  exit 1
fi
cmake --build "$dir" --parallel 2 --target "${names[@]}"

passed=0
failed=0
for i in "${!names[@]}"; do
  target=${names[$i]}
  srcdir=${srcdirs[$i]}
  name=${target%_fuzz}
  work="$dir/fuzz/$name"
  rm -rf "$work/corpus"
  mkdir -p "$work/corpus" "$work/artifacts"
  seeds=()
  [ -d "$srcdir/fuzz_corpus/$name" ] && seeds=("$srcdir/fuzz_corpus/$name")
  log="$work/fuzz.log"
  set +e
  timeout $((secs + 120)) "$dir/$srcdir/$target" -max_total_time="$secs" -timeout=10 \
    -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$work/artifacts/" \
    "$work/corpus" "${seeds[@]}" >"$log" 2>&1
  rc=$?
  set -e
  runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' || true)
  if [ "$rc" -eq 0 ]; then
    passed=$((passed + 1))
    echo "fuzz: $target ok, ${runs:-?} inputs in ${secs}s"
  else
    failed=$((failed + 1))
    echo "fuzz: $target FAILED (exit $rc); log: $log" >&2
    grep -E 'ERROR|SUMMARY|Test unit written|deadly signal|timeout' "$log" | head -20 >&2 || true
  fi
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
