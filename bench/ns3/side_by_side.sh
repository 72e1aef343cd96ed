#!/usr/bin/env bash
# Times nicsim and ns-3 on the same scenario in one run, alternating the two tools so that both see the same machine load, and prints one JSON line
# per run plus a Markdown summary. Each run is wrapped in /usr/bin/time -v, so every figure is
# per whole process (set-up and output included) for both tools: CPU time (user + sys), wall
# time and peak RSS; the 1-minute load average is taken just before each run.
#
# Cases (--case):
#   stmmac_bql (default) stmmac, 100 Mbit/s, pfifo_fast, BQL off, 30 s simulated:
#                        bench/ns3/nicsim_stmmac_bql.toml and bench/ns3/stmmac_bql.cc
#   dumbbell             2 senders - router - 100 Mbit/s 10 ms bottleneck (pfifo 1000) - router -
#                        2 receivers, 4 CUBIC flows and a ping, 30 s simulated:
#                        bench/ns3/nicsim_dumbbell.toml and bench/ns3/dumbbell.cc
# Besides the speed, each JSON line carries what both simulated (goodput, probe/ping RTT, and
# for the dumbbell the per-flow goodput range and the bottleneck's drops and mean backlog), so
# the summary shows how close the two simulations are.
#
# Usage: bench/ns3/side_by_side.sh [--case NAME] [--repeat N] [--nicsim PATH] [--callgrind]
#   --case NAME   stmmac_bql (default) or dumbbell
#   --repeat N    runs of each tool (default 3)
#   --nicsim PATH the nicsim binary (default <repo>/build/tools/nicsim; build it first)
#   --callgrind   also count instructions once per tool with valgrind --tool=callgrind (load-
#                 independent; the ns-3 run takes ~25 min under callgrind, nicsim ~2 min)
# Environment: BUILD_DIR (default <repo>/build-ns3), as for run.sh. Needs bench/ns3/setup.sh's
# packages (it is called) and valgrind for --callgrind.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=${BUILD_DIR:-$repo/build-ns3}
nicsim=$repo/build/tools/nicsim
repeat=3
callgrind=0
case_name=stmmac_bql
while [ $# -gt 0 ]; do
  case "$1" in
    --case) case_name=$2; shift ;;
    --repeat) repeat=$2; shift ;;
    --nicsim) nicsim=$2; shift ;;
    --callgrind) callgrind=1 ;;
    *) echo "usage: $0 [--case stmmac_bql|dumbbell] [--repeat N] [--nicsim PATH] [--callgrind]" >&2; exit 2 ;;
  esac
  shift
done
[ -x "$nicsim" ] || { echo "$0: no nicsim binary at $nicsim (build the nicsim target)" >&2; exit 2; }

"$here/setup.sh"
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" >/dev/null
case "$case_name" in
  stmmac_bql | dumbbell) ;;
  *) echo "$0: unknown --case $case_name (stmmac_bql, dumbbell)" >&2; exit 2 ;;
esac
ns3=$build/$case_name
scenario=$here/nicsim_$case_name.toml
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# Prints the JSON line of one run of a tool: "$1" = ns-3 | nicsim.
run_one() {
  local tool=$1 load
  load=$(cut -d' ' -f1 /proc/loadavg)
  if [ "$tool" = ns-3 ]; then
    /usr/bin/time -v -o "$tmp/time" "$ns3" >"$tmp/out"
  else
    /usr/bin/time -v -o "$tmp/time" "$nicsim" run "$scenario" --quiet --json "$tmp/r.json" \
      >"$tmp/out"
  fi
  python3 - "$tool" "$load" "$tmp" "$case_name" <<'EOF'
import json, re, statistics, sys
tool, load, tmp, case = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4]
t = open(f"{tmp}/time").read()
def field(name):
    return re.search(re.escape(name) + r": (.*)", t).group(1).strip()
def seconds(hms):  # h:mm:ss or m:ss.ss
    s = 0.0
    for part in hms.split(":"):
        s = s * 60 + float(part)
    return s
proc = {
    "process_cpu_s": round(float(field("User time (seconds)")) + float(field("System time (seconds)")), 3),
    "process_wall_s": round(seconds(field("Elapsed (wall clock) time (h:mm:ss or m:ss)")), 3),
    "max_rss_kb": int(field("Maximum resident set size (kbytes)")),
    "load1": load,
}
if tool == "ns-3":
    line = next(l for l in open(f"{tmp}/out") if l.startswith("{"))
    r = json.loads(line)
else:
    d = json.load(open(f"{tmp}/r.json"))
    run = d["runs"][0]
    m = d["meta"]
    wall = m["wall_s"]
    r = {"tool": "nicsim", "tool_version": m["nicsim_version"] + "+" + m["git_commit"],
         "case": case, "goodput_mbit": round(run["goodput_bps"]["a->b"] / 1e6, 2),
         "events": m["events"], "wall_s": round(wall, 3), "cpu_s": None,
         "events_per_s": round(m["events"] / wall), "sim_per_wall": round(run["duration_s"] / wall, 2)}
    if case == "stmmac_bql":
        r.update({"rate_mbit": 100, "qdisc": "pfifo_fast", "bql": False,
                  "probe_rtt_mean_ms": round(run["latency_ms"]["udp"]["mean"], 3)})
    else:  # dumbbell: the bottleneck is rl's egress "rl.wan"
        ping = run["latency_ms"]["ping"]
        q = run["queues"]["rl.wan"]["qdisc_packets"]
        per_flow = [f["receiver"]["bits_per_second"] / 1e6 for f in run["transfer"]["a->b"]["flows"]]
        r.update({"rate_mbit": 100, "qdisc": "pfifo", "flows": len(run["transfer"]["a->b"]["flows"]),
                  "goodput_min_flow_mbit": round(min(per_flow), 2),
                  "goodput_max_flow_mbit": round(max(per_flow), 2),
                  "ping_rtt_mean_ms": round(ping["mean"], 3), "ping_rtt_p50_ms": round(ping["p50"], 3),
                  "ping_rtt_p99_ms": round(ping["p99"], 3),
                  "bottleneck_drops": run["interfaces"]["rl.wan"]["qdisc_drops"],
                  "bottleneck_backlog_mean_pkts": round(statistics.mean(q), 1)})
r.update(proc)
print(json.dumps(r, separators=(",", ":")))
EOF
}

echo "# $(nproc) CPUs, $(lscpu | sed -n 's/^Model name: *//p' | head -1); $(date -u '+%F %H:%M UTC');" \
  "ns-3 $(pkg-config --modversion ns3-core); load $(cut -d" " -f1-3 /proc/loadavg)"
: >"$tmp/all.jsonl"
for i in $(seq "$repeat"); do
  for tool in ns-3 nicsim; do
    run_one "$tool" | tee -a "$tmp/all.jsonl"
  done
done

if [ "$callgrind" -eq 1 ]; then
  for tool in ns-3 nicsim; do
    if [ "$tool" = ns-3 ]; then cmd=("$ns3"); else cmd=("$nicsim" run "$scenario" --quiet); fi
    valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" "${cmd[@]}" >/dev/null \
      2>"$tmp/cg.log"
    ir=$(sed -n 's/.*Collected : \([0-9]*\)/\1/p' "$tmp/cg.log")
    echo "{\"tool\":\"$tool\",\"instructions\":$ir}" | tee -a "$tmp/all.jsonl"
  done
fi

echo
"$here/table.sh" "$tmp/all.jsonl" | grep -v '^| - '
echo
python3 - "$tmp/all.jsonl" <<'EOF'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
by = {"ns-3": [r for r in rows if r["tool"] == "ns-3" and "process_cpu_s" in r],
      "nicsim": [r for r in rows if r["tool"] == "nicsim" and "process_cpu_s" in r]}
ins = {r["tool"]: r["instructions"] for r in rows if "instructions" in r}
print("| | ns-3 | nicsim | ratio (median) |")
print("|---|---|---|---|")
# What both simulated (deterministic: the first run of each tool).
for key in ["goodput_mbit", "probe_rtt_mean_ms", "ping_rtt_mean_ms", "ping_rtt_p50_ms",
            "ping_rtt_p99_ms", "goodput_min_flow_mbit", "goodput_max_flow_mbit", "bottleneck_drops", "bottleneck_backlog_mean_pkts", "events"]:
    if by["ns-3"] and by["nicsim"] and key in by["ns-3"][0] and key in by["nicsim"][0]:
        a, b = by["ns-3"][0][key], by["nicsim"][0][key]
        ratio = "%.2f" % (b / a) if a else ""
        print(f"| {key} | {a} | {b} | nicsim/ns-3 {ratio} |")
for key, name in [("process_cpu_s", "process CPU s"), ("process_wall_s", "process wall s"),
                  ("max_rss_kb", "peak RSS KiB"), ("load1", "load average before the run")]:
    a = [r[key] for r in by["ns-3"]]
    b = [r[key] for r in by["nicsim"]]
    ratio = "" if key == "load1" else "%.1f×" % (statistics.median(a) / statistics.median(b))
    print(f"| {name} | {' / '.join(str(x) for x in a)} | {' / '.join(str(x) for x in b)} | {ratio} |")
if len(ins) == 2:
    print(f"| instructions (callgrind) | {ins['ns-3'] / 1e9:.2f} G | {ins['nicsim'] / 1e9:.3f} G | "
          f"{ins['ns-3'] / ins['nicsim']:.1f}× |")
EOF
