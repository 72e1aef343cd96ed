#!/usr/bin/env bash
# Smoke test of the speed benchmarks' scenarios (CTest: cli_bench_networks; issue 10 item 8,
# docs/benchmarks.md "Networks"). Not a speed test: it checks that they load and simulate.
#  1. bench/ns3/nicsim_dumbbell.toml (ns-3's dumbbell twin) loads: 4 hosts, 2 routers, 5 links.
#  2. bench/networks/ring-64h-8r.toml is what bench/networks/ring.py writes by default (no drift);
#  3. that 64-host, 8-router, 256-flow ring runs for 0.3 s: every flow moved data, every
#     clockwise ring link carried traffic, no packet lacked a route.
# Usage: bench_networks_test.sh NICSIM_BINARY SOURCE_DIR
set -euo pipefail
nicsim=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

t=$("$nicsim" topology "$src/bench/ns3/nicsim_dumbbell.toml")
grep -qF "4 hosts, 2 routers, 5 links" <<<"$t" || fail "nicsim_dumbbell.toml: $t"

python3 "$src/bench/networks/ring.py" | diff -u "$src/bench/networks/ring-64h-8r.toml" - ||
  fail "bench/networks/ring-64h-8r.toml differs from bench/networks/ring.py's output: regenerate it"
python3 "$src/bench/networks/ring.py" --duration 300ms >"$work/ring.toml"
"$nicsim" run "$work/ring.toml" --quiet --json "$work/r.json" >/dev/null
python3 - "$work/r.json" <<'PY'
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
flows = [f for d in run["transfer"].values() for f in d["flows"]]
assert len(flows) == 256, f"{len(flows)} flows, expected 256"
idle = [f["id"] for f in flows if f["receiver"]["bytes"] == 0]
assert not idle, f"flows that received nothing: {idle}"
hosts = [n for n, v in run["nodes"].items() if not v["router"]]
routers = [n for n, v in run["nodes"].items() if v["router"]]
assert (len(hosts), len(routers)) == (64, 8), (len(hosts), len(routers))
ring = {k: v for k, v in run["interfaces"].items() if k.endswith(".cw")}
assert len(ring) == 8 and all(v["tx_bytes"] > 0 for v in ring.values()), ring
assert all(v["no_route"] == 0 for v in run["nodes"].values())
print(f"ok: 256 flows, goodput {sum(run['goodput_bps'].values()) / 1e6:.0f} Mbit/s in 0.3 s")
PY
