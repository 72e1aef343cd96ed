#!/usr/bin/env bash
# The published ordering of latency under load by qdisc (CTest qdisc_rrul_ordering; issue 11):
# a shortened scenarios/qdiscs/rrul-by-qdisc.toml (20 and 100 Mbit/s, five kinds; the same
# 2 s + 12 s + 2 s rrul: with a shorter load pfifo's queue has not grown to its limit yet)
# through `nicsim run --json`, then, at each rate, the induced latency of the rrul probes
# ordered as Høiland-Jørgensen et al., "The Good, the Bad and the WiFi" (2015) and
# "Piece of CAKE" (2018) report it: pfifo >> PIE ~ CoDel > fq_codel ~ CAKE
# (docs/fidelity.md, "rrul by qdisc"). Not timed: simulated time only.
# Usage: rrul_ordering_test.sh NICSIM_BINARY SOURCE_DIR
set -euo pipefail
nicsim=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
export NICSIM_PRESETS="$src/presets"

# The shipped file with two rates and the five kinds the ordering names.
sed -e 's/^"links\[{0,1}\].reverse.rate" = .*/"links[{0,1}].reverse.rate" = ["20Mbit", "100Mbit"]/' \
    -e 's/^"routers.r.interfaces.{lan,wan}.qdisc" = .*/"routers.r.interfaces.{lan,wan}.qdisc" = ["pfifo", "pie", "codel", "fq_codel", "cake"]/' \
    "$src/scenarios/qdiscs/rrul-by-qdisc.toml" > "$work/short.toml"
grep -q '"20Mbit", "100Mbit"\]' "$work/short.toml" || fail "could not shorten the rates"
grep -q '"pfifo", "pie", "codel", "fq_codel", "cake"\]' "$work/short.toml" || fail "kinds"

"$nicsim" run "$work/short.toml" --json "$work/r.json" > "$work/out.txt"
grep -q "^latency under load, by run" "$work/out.txt" || fail "no per-run summary table"

python3 - "$work/r.json" <<'PY' || fail "ordering"
import json, sys
doc = json.load(open(sys.argv[1]))
induced = {}
for run in doc["runs"]:
    rate = run["params"]["links[{0,1}].reverse.rate"]
    kind = run["params"]["routers.r.interfaces.{lan,wan}.qdisc"]
    induced.setdefault(rate, {})[kind] = run["latency_under_load"]["induced_latency_ms"]
# Each kind's own counters (tc -s) are in the bottleneck interfaces' results.
own = {"pfifo": set(), "pie": {"prob", "delay", "pkts_in", "dropped", "maxq"},
       "codel": {"codel_drop_count", "drop_overlimit", "maxpacket"},
       "fq_codel": {"new_flow_count", "codel_drop_count", "drop_overmemory"},
       "cake": {"capacity_estimate", "tin0_pkts", "tin0_av_delay_us", "tin2_sp_flows"}}
for run in doc["runs"]:
    kind = run["params"]["routers.r.interfaces.{lan,wan}.qdisc"]
    for iface in ("r.lan", "r.wan"):
        counters = run["interfaces"][iface]["qdisc"]
        assert own[kind] <= set(counters), (kind, iface, sorted(counters))
        assert run["interfaces"][iface]["qdisc_drops"] > 0, (kind, iface)
for rate, i in induced.items():
    print(rate, {k: round(v, 2) for k, v in i.items()})
    aqm = (i["pie"], i["codel"])
    fq = (i["fq_codel"], i["cake"])
    # pfifo above the single-queue AQMs, which are above the flow-queueing ones.
    assert i["pfifo"] > max(aqm), (rate, i)
    assert min(aqm) > 2 * max(fq), (rate, i)
    # PIE ~ CoDel: within a factor of two of each other.
    assert max(aqm) < 2 * min(aqm), (rate, i)
    # fq_codel ~ CAKE: within 5 ms of each other, both below 10 ms.
    assert abs(fq[0] - fq[1]) < 5 and max(fq) < 10, (rate, i)
# pfifo >> at 20 Mbit/s, where its 1000 packets are 600 ms per direction: at least twice the
# AQMs' induced latency (at 100 Mbit/s the simulated pfifo queue stays far from its limit and
# the margin is smaller: docs/fidelity.md, "rrul by qdisc").
i = induced["20Mbit"]
assert i["pfifo"] > 2 * max(i["pie"], i["codel"]), i
PY
echo "ok"
