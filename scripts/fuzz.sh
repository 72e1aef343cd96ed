#!/usr/bin/env bash
# Builds the libFuzzer targets (clang, ASan + UBSan on every library) and runs each.
# Usage: scripts/fuzz.sh [SECONDS_PER_FUZZER]   each target for that long (default 30; CI: 30)
#        scripts/fuzz.sh --long [RUNS]          each target for RUNS executions (default 10^7:
#                                               a nightly-style run, hours; not for CI). Run it
#                                               niced if you like; the timeout (600 s here, 10 s
#                                               otherwise) is wall time: stop it (SIGSTOP) for
#                                               less than that
#        scripts/fuzz.sh --long [RUNS] --jobs N the same with N worker processes per target
#                                               (libFuzzer's -fork=N: one run, one corpus, RUNS
#                                               counted over all workers); N = your core count
#        scripts/fuzz.sh --merge                minimise what the runs found into the committed
#                                               corpora (then commit them)
#   Any of these may end with target names (e.g. `--long 10000000 protocol_fuzz`) to run only
#   those targets; an unknown name is an error.
#   Build directory: build-fuzz (override with NICSIM_FUZZ_BUILD_DIR).
#   Every nicsim/{algo,config,report,live,emu,sim}/<name>_fuzz.cc is built as <name>_fuzz. Inputs:
#   the committed seed corpus <its directory>/fuzz_corpus/<name>/ (read-only) plus a scratch
#   corpus <build dir>/fuzz/<name>/corpus that is KEPT between runs, so each run starts where the
#   last one stopped; --merge folds it (minimised, -merge=1) into the committed corpus. A
#   dictionary <its directory>/fuzz_corpus/<name>.dict is used when present; the scenario targets
#   take inputs up to 128 KiB (-max_len; libFuzzer's default would be the seeds' size).
#   Each target's executions, exec/s and coverage (libFuzzer's cov/ft) are printed and appended
#   to <build dir>/fuzz/stats.tsv. Exits non-zero if any fuzzer finds a crash, a sanitizer
#   error, a leak or a timeout; the reproducer is kept under <build dir>/fuzz/<name>/artifacts/.
#   Reproduce with: <build dir>/nicsim/<dir>/<name>_fuzz <artifact file>
set -euo pipefail
cd "$(dirname "$0")/.."
usage() {
  echo "usage: scripts/fuzz.sh [SECONDS_PER_FUZZER | --long [RUNS] [--jobs N] | --merge] [TARGET_fuzz...]" >&2
  exit 2
}
mode=time
secs=30
runs_wanted=10000000
jobs=1
case "${1:-}" in
  --long)
    mode=long
    shift
    if [[ "${1:-}" =~ ^[0-9]+$ ]]; then
      runs_wanted=$1
      shift
    fi
    [ "$runs_wanted" -ge 1 ] || usage
    if [ "${1:-}" = --jobs ]; then
      jobs=${2:-}
      [[ "$jobs" =~ ^[0-9]+$ ]] && [ "$jobs" -ge 1 ] || usage
      shift 2
    fi
    ;;
  --merge)
    mode=merge
    shift
    ;;
  -h | --help) usage ;;
  "") ;;
  *_fuzz) ;;
  *)
    secs=$1
    [[ "$secs" =~ ^[0-9]+$ ]] && [ "$secs" -ge 1 ] || usage
    shift
    ;;
esac
only=("$@")
dir=${NICSIM_FUZZ_BUILD_DIR:-build-fuzz}

./scripts/setup.sh
CC=clang CXX=clang++ cmake -S . -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DNICSIM_FUZZ=ON -DNICSIM_TESTS=OFF -DNICSIM_BENCH=OFF >/dev/null

names=()
srcdirs=()
for src in nicsim/algo/*_fuzz.cc nicsim/config/*_fuzz.cc nicsim/report/*_fuzz.cc nicsim/live/*_fuzz.cc \
           nicsim/emu/*_fuzz.cc nicsim/sim/*_fuzz.cc; do
  [ -e "$src" ] || continue
  names+=("$(basename "$src" .cc)")
  srcdirs+=("$(dirname "$src")")
done
if [ ${#only[@]} -gt 0 ]; then
  kept_names=()
  kept_dirs=()
  for want in "${only[@]}"; do
    found=0
    for i in "${!names[@]}"; do
      if [ "${names[$i]}" = "$want" ]; then
        kept_names+=("${names[$i]}")
        kept_dirs+=("${srcdirs[$i]}")
        found=1
      fi
    done
    [ "$found" -eq 1 ] || { echo "fuzz: no target named '$want' (targets: ${names[*]})" >&2; exit 2; }
  done
  names=("${kept_names[@]}")
  srcdirs=("${kept_dirs[@]}")
fi
if [ ${#names[@]} -eq 0 ]; then
  echo "fuzz: no fuzz targets found" >&2
  exit 1
fi
cmake --build "$dir" --parallel 2 --target "${names[@]}"

passed=0
failed=0
stats="$dir/fuzz/stats.tsv"
mkdir -p "$dir/fuzz"
[ -s "$stats" ] || printf 'date\ttarget\tmode\texecutions\texec_per_s\tcov\tft\tcorpus\n' > "$stats"
for i in "${!names[@]}"; do
  target=${names[$i]}
  srcdir=${srcdirs[$i]}
  name=${target%_fuzz}
  work="$dir/fuzz/$name"
  committed="$srcdir/fuzz_corpus/$name"
  mkdir -p "$work/corpus" "$work/artifacts"
  bin="$dir/$srcdir/$target"
  if [ "$mode" = merge ]; then
    mkdir -p "$committed"
    "$bin" -merge=1 "$committed" "$work/corpus" > "$work/merge.log" 2>&1 \
      || { echo "fuzz: $target merge FAILED; log: $work/merge.log" >&2; failed=$((failed + 1)); continue; }
    echo "fuzz: $target: $(ls "$committed" | wc -l) inputs in $committed"
    passed=$((passed + 1))
    continue
  fi
  seeds=()
  [ -d "$committed" ] && seeds=("$committed")
  extra=()
  [ -f "$srcdir/fuzz_corpus/$name.dict" ] && extra+=("-dict=$srcdir/fuzz_corpus/$name.dict")
  case "$name" in scenario | scenario_sim) extra+=(-max_len=131072) ;; esac
  if [ "$mode" = long ]; then
    # libFuzzer's -timeout is wall time: a nightly run at low priority beside other work can
    # wait long for a CPU, so a unit is a hang only after 600 s (libFuzzer's default is 1200;
    # units over 10 s are still written as slow-unit-* artifacts).
    limit=(-runs="$runs_wanted" -timeout=600)
    # Fork mode ignores timeouts and out-of-memory by default: a long run must report them.
    [ "$jobs" -gt 1 ] && limit+=(-fork="$jobs" -ignore_timeouts=0 -ignore_ooms=0)
    wall=$((7 * 24 * 3600))
  else
    limit=(-max_total_time="$secs" -timeout=10)
    wall=$((secs + 120))
  fi
  log="$work/fuzz.log"
  set +e
  timeout "$wall" "$bin" "${limit[@]}" -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$work/artifacts/" "${extra[@]}" "$work/corpus" "${seeds[@]}" >"$log" 2>&1
  rc=$?
  set -e
  runs=$(grep -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$' || true)
  rate=$(grep -oE 'stat::average_exec_per_sec: *[0-9]+' "$log" | grep -oE '[0-9]+$' || true)
  if [ -z "$runs" ]; then
    # Fork mode prints no final stats; its last status line reads
    # "#RUNS: cov: C ft: F corp: N exec/s R oom/timeout/crash: a/b/c time: Ts job: J ...".
    status=$(grep -E '^#[0-9]+: cov:' "$log" | tail -1 || true)
    runs=$(echo "$status" | grep -oE '^#[0-9]+' | tr -d '#' || true)
    secs_run=$(echo "$status" | grep -oE ' time: [0-9]+' | grep -oE '[0-9]+' || true)
    [ -n "$runs" ] && [ "${secs_run:-0}" -gt 0 ] && rate=$((runs / secs_run))
  fi
  cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1 || true)
  corpus=$(ls "$work/corpus" | wc -l)
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$(date -u +%FT%TZ)" "$target" "$mode" "${runs:-?}" \
    "${rate:-?}" "$(echo "$cov" | awk '{print $2}')" "$(echo "$cov" | awk '{print $4}')" "$corpus" >> "$stats"
  if [ "$rc" -eq 0 ]; then
    passed=$((passed + 1))
    echo "fuzz: $target ok, ${runs:-?} inputs (${rate:-?}/s), ${cov:-cov ?}, scratch corpus $corpus"
  else
    failed=$((failed + 1))
    echo "fuzz: $target FAILED (exit $rc); log: $log" >&2
    grep -E 'ERROR|SUMMARY|Test unit written|deadly signal|timeout' "$log" | head -20 >&2 || true
  fi
done
echo "fuzz: $passed passed, $failed failed (statistics: $stats)"
[ "$failed" -eq 0 ]
