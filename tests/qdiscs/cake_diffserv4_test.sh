#!/usr/bin/env bash
# CAKE diffserv4 keeps an EF probe's latency under bulk best-effort load (CTest
# qdisc_cake_diffserv4; issue 11 item 6): scenarios/qdiscs/cake-diffserv4.toml through
# `nicsim run --json`, then each UDP probe's induced latency = mean RTT of the samples sent
# during the load (from 1 s after the flows start, past slow start) minus the mean before it.
# With diffserv4 the EF probe's (Voice tin) must be below 1 ms while the bulk flows fill the
# shaped 100 Mbit/s.
# Not timed: simulated time only.
# Usage: cake_diffserv4_test.sh NICSIM_BINARY SOURCE_DIR
set -euo pipefail
nicsim=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
export NICSIM_PRESETS="$src/presets"

"$nicsim" run "$src/scenarios/qdiscs/cake-diffserv4.toml" --json "$work/r.json" --quiet \
  > "$work/out.txt"
python3 - "$work/r.json" <<'PY' || fail "EF latency under load"
import json, sys
doc = json.load(open(sys.argv[1]))
LOAD_START = 2.0  # the flows' start in the scenario
def induced(probe):
    s = probe["series"]
    idle = [r for t, r in zip(s["time_s"], s["rtt_ms"]) if r is not None and t < LOAD_START]
    load = [r for t, r in zip(s["time_s"], s["rtt_ms"]) if r is not None and t >= LOAD_START + 1]
    assert len(idle) > 100 and len(load) > 500, (len(idle), len(load))
    return sum(load) / len(load) - sum(idle) / len(idle)
result = {}
for run in doc["runs"]:
    by_dscp = {p["dscp"]: induced(p) for p in run["latency_ms"].values() if p["kind"] == "udp"}
    goodput = [run["transfer"][d]["receiver"]["bits_per_second"] / 1e6 for d in ("a->b", "b->a")]
    result[run["label"]] = (by_dscp, goodput)
    print(run["label"], "induced EF %.3f ms, BE %.3f ms, goodput %.1f / %.1f Mbit/s"
          % (by_dscp[46], by_dscp[0], goodput[0], goodput[1]))
ds4, goodput = result["diffserv=diffserv4"]
assert ds4[46] < 1.0, ds4
assert all(g > 80 for g in goodput), goodput  # the bulk load really filled the 100 Mbit/s
PY
echo "ok"
