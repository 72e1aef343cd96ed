#!/usr/bin/env bash
# How the simulator's cost grows with the network (issue 10 item 8; docs/benchmarks.md,
# "Networks"): runs `nicsim run` on ring networks written by bench/networks/ring.py — 8 routers
# with 1, 2, 4 and 8 hosts each (8-64 hosts, 4 TCP flows per host: 32-256 flows) at 1 Gbit/s
# ring links, and the 64-host network at 100 Mbit/s — each under /usr/bin/time -v, and prints
# one JSON line per run and a Markdown table: CPU and wall time of the whole process, peak RSS,
# events, events per CPU second, simulated seconds per CPU second (> 1: faster than real time),
# and what was simulated (total goodput, the ring links' mean utilisation, drops at the ring
# egresses, the ping's mean RTT).
#
# Usage: bench/networks/scale.sh [--nicsim PATH] [--duration 5s] [--only HOSTS_PER_ROUTER:RATE]...
#   --nicsim    the nicsim binary (default <repo>/build/tools/nicsim)
#   --duration  simulated time per run (default 5s)
#   --only      run only these cases, e.g. --only 8:1Gbit (repeatable)
# The machine is shared: compare CPU times, not wall times, and note the load average (printed).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
nicsim=$repo/build/tools/nicsim
duration=5s
cases=()
while [ $# -gt 0 ]; do
  case "$1" in
    --nicsim) nicsim=$2; shift ;;
    --duration) duration=$2; shift ;;
    --only) cases+=("$2"); shift ;;
    *) echo "usage: $0 [--nicsim PATH] [--duration 5s] [--only HOSTS_PER_ROUTER:RATE]..." >&2; exit 2 ;;
  esac
  shift
done
[ -x "$nicsim" ] || { echo "$0: no nicsim binary at $nicsim (build the nicsim target)" >&2; exit 2; }
command -v /usr/bin/time >/dev/null || { echo "$0: needs /usr/bin/time (Debian package time)" >&2; exit 2; }
[ ${#cases[@]} -gt 0 ] || cases=(1:1Gbit 2:1Gbit 4:1Gbit 8:1Gbit 8:100Mbit)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "# $(nproc) CPUs, $(lscpu | sed -n 's/^Model name: *//p' | head -1); $(date -u '+%F %H:%M UTC');" \
  "$("$nicsim" --version | head -1); load $(cut -d' ' -f1-3 /proc/loadavg)"
for c in "${cases[@]}"; do
  per=${c%%:*}
  rate=${c#*:}
  python3 "$here/ring.py" --hosts-per-router "$per" --ring-rate "$rate" --duration "$duration" \
    >"$tmp/ring.toml"
  load=$(cut -d' ' -f1 /proc/loadavg)
  /usr/bin/time -v -o "$tmp/time" "$nicsim" run "$tmp/ring.toml" --quiet --json "$tmp/r.json" \
    >/dev/null
  python3 - "$tmp" "$per" "$rate" "$load" <<'PY' | tee -a "$tmp/all.jsonl"
import json, re, statistics, sys
tmp, per, rate, load = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
t = open(f"{tmp}/time").read()
def field(name):
    return re.search(re.escape(name) + r": (.*)", t).group(1).strip()
def seconds(hms):
    s = 0.0
    for part in hms.split(":"):
        s = s * 60 + float(part)
    return s
d = json.load(open(f"{tmp}/r.json"))
run, meta = d["runs"][0], d["meta"]
cpu = float(field("User time (seconds)")) + float(field("System time (seconds)"))
sim = run["duration_s"]
rate_bps = float(rate.replace("Gbit", "e9").replace("Mbit", "e6"))
ring = {k: v for k, v in run["interfaces"].items() if k.endswith(".cw")}
util = [v["tx_bytes"] * 8 / sim / rate_bps for v in ring.values()]
print(json.dumps({
    "hosts": 8 * per, "routers": 8, "flows": len(run["transfer"]["a->b"]["flows"]) +
    len(run["transfer"]["b->a"]["flows"]), "ring_rate": rate, "sim_s": sim,
    "process_cpu_s": round(cpu, 2), "process_wall_s": round(seconds(field("Elapsed (wall clock) time (h:mm:ss or m:ss)")), 2),
    "max_rss_mib": round(int(field("Maximum resident set size (kbytes)")) / 1024, 1),
    "events": meta["events"], "events_per_cpu_s": round(meta["events"] / cpu),
    "sim_s_per_cpu_s": round(sim / cpu, 3),
    "goodput_mbit": round(sum(run["goodput_bps"].values()) / 1e6, 1),
    "ring_util_mean": round(statistics.mean(util), 3),
    "ring_drops": sum(v["qdisc_drops"] for v in ring.values()),
    "retransmits": run["retransmits"],
    "ping_mean_ms": round(run["latency_ms"]["ping"]["mean"], 2), "load1": load,
}, separators=(",", ":")))
PY
done
echo
python3 - "$tmp/all.jsonl" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
print("| hosts | flows | ring links | CPU s | wall s | sim s / CPU s | events | events / CPU s | peak RSS MiB | goodput Mbit/s | ring utilisation | ring drops | ping ms | load |")
print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
for r in rows:
    print(f"| {r['hosts']} | {r['flows']} | {r['ring_rate']} | {r['process_cpu_s']} | {r['process_wall_s']} | "
          f"{r['sim_s_per_cpu_s']} | {r['events'] / 1e6:.2f} M | {r['events_per_cpu_s'] / 1e6:.2f} M | "
          f"{r['max_rss_mib']} | {r['goodput_mbit']} | {r['ring_util_mean']:.0%} | {r['ring_drops']} | "
          f"{r['ping_mean_ms']} | {r['load1']} |")
PY
