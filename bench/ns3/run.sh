#!/usr/bin/env bash
# Installs ns-3 3.37 from Debian (if needed), builds bench/ns3 and runs the stmmac BQL case of
# docs/mechanisms §13 in ns-3, printing each run's human line and JSON line, then a Markdown
# table (bench/ns3/table.sh). Results are also kept in $BUILD_DIR/results.jsonl.
#
# Usage: bench/ns3/run.sh [--all] [--repeat N] [-- EXTRA_FLAGS...]
#   default   the 100 Mbit/s, pfifo_fast, BQL-off case (30 s simulated, ~5-20 s wall)
#   --all     all five rows of §13 (adds BQL on, 1 Gbit/s off/on, fq_codel + BQL; the 1 Gbit/s
#             runs take ~45 s wall each or more)
#   --repeat  run each case N times (wall time is noisy on a shared machine)
#   EXTRA_FLAGS are passed to every run, e.g. -- --simTime=10
# Environment: BUILD_DIR (default <repo>/build-ns3).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=${BUILD_DIR:-$repo/build-ns3}

all=0
repeat=1
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --all) all=1 ;;
    --repeat) repeat=$2; shift ;;
    --) shift; extra=("$@"); break ;;
    *) echo "usage: $0 [--all] [--repeat N] [-- EXTRA_FLAGS...]" >&2; exit 2 ;;
  esac
  shift
done

"$here/setup.sh"
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" >/dev/null

cases=("--rateMbit=100 --qdisc=pfifo_fast --bql=0")
if [ "$all" -eq 1 ]; then
  cases+=(
    "--rateMbit=100 --qdisc=pfifo_fast --bql=1"
    "--rateMbit=1000 --qdisc=pfifo_fast --bql=0"
    "--rateMbit=1000 --qdisc=pfifo_fast --bql=1"
    "--rateMbit=100 --qdisc=fq_codel --bql=1"
  )
fi

results="$build/results.jsonl"
: >"$results"
echo "# machine: $(nproc) CPUs, $(lscpu | sed -n 's/^Model name: *//p' | head -1);" \
  "load $(cut -d' ' -f1-3 /proc/loadavg); $(date -u '+%F %H:%M UTC');" \
  "ns-3 $(pkg-config --modversion ns3-core) (Debian libns3-dev $(dpkg-query -W -f='${Version}' libns3-dev))"
for c in "${cases[@]}"; do
  for _ in $(seq "$repeat"); do
    # shellcheck disable=SC2086  # $c is a list of flags
    "$build/stmmac_bql" $c "${extra[@]}" | tee -a "$results.tmp"
  done
done
grep '^{' "$results.tmp" >"$results"
rm -f "$results.tmp"
echo
"$here/table.sh" "$results"
