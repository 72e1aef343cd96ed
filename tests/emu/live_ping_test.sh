#!/usr/bin/env bash
# CTest emu_live_ping: nicsim's own latency probes (nicsim emulate FILE without a command)
# through the idle emulated 100 Mbit/s wire with 5 ms one-way delay: the ICMP echo probe
# averages 10 ± 0.5 ms with no loss (as iputils ping does in emu_ping), and the UDP probe's
# round trip is 10 ± 0.5 ms with one-way delays of 5 ± 0.25 ms each way (exact: both
# namespaces read the same CLOCK_MONOTONIC). Expected: 2 x (5 ms + a few µs of serialisation)
# plus the kernels' and the emulator's own path (tens of µs). A [vary] of the delay (5 ms,
# 2 ms) is emulated run after run: the second run's probes average 4 ± 0.5 ms.
# Usage: live_ping_test.sh NICSIM SOURCE_DIR
source "$(dirname "$0")/common.sh"
nicsim=$1
src=$2
emu_require_root
emu_require_tools python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
cat >"$work/idle.toml" <<TOML
[scenario]
name = "idle probes, 100 Mbit/s, 5 ms one way"
duration = "2500ms"

[hosts.a]
cpu = "x86-desktop"
nic = "generic-1g"

[hosts.b]
cpu = "x86-desktop"
nic = "generic-1g"

[wire]
rate = "100Mbit"
delay = "5ms"

[[traffic.ping]]
from = "a"
to = "b"
interval = "25ms"

[[traffic.udp_probe]]
from = "a"
to = "b"
interval = "25ms"

[vary]
"wire.delay" = ["5ms", "2ms"]
TOML
NICSIM_PRESETS="$src/presets" "$nicsim" emulate "$work/idle.toml" --json "$work/r.json" \
  >"$work/out.txt" 2>"$work/err.txt" || fail "nicsim emulate exited $?: $(cat "$work/err.txt")"
cat "$work/out.txt" | grep -A3 "ping statistics" || true
python3 "$src/nicsim/report/validate_results.py" --schema "$src/docs/results.schema.json" \
  "$work/r.json" || fail "JSON does not validate"
python3 - "$work/r.json" <<'PY' || fail "emulator summary: $(grep -v 'not emulated' "$work/err.txt")"
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
assert [r["label"] for r in runs] == ["delay=5ms", "delay=2ms"], [r["label"] for r in runs]
assert all(r["backend"] == "emu" for r in runs)
run = runs[0]
lat = run["latency_ms"]
ping, udp = lat["ping"], lat["udp"]
def check(what, v, lo, hi):
    print(f"{what}: {v:.3f} ms")
    if not (lo <= v <= hi):
        sys.exit(f"FAIL: {what} {v:.3f} ms is outside [{lo}, {hi}] ms")
for name, p in (("icmp", ping), ("udp", udp)):
    if p["lost"] != 0 or p["count"] < 40:
        sys.exit(f"FAIL: {name}: {p['count']} answered, {p['lost']} lost")
check("icmp rtt mean", ping["mean"], 9.5, 10.5)
check("udp rtt mean", udp["mean"], 9.5, 10.5)
check("udp one-way a->b mean", udp["one_way"]["a->b"]["mean"], 4.75, 5.25)
check("udp one-way b->a mean", udp["one_way"]["b->a"]["mean"], 4.75, 5.25)
check("delay=2ms: icmp rtt mean", runs[1]["latency_ms"]["ping"]["mean"], 3.5, 4.5)
check("delay=2ms: udp rtt mean", runs[1]["latency_ms"]["udp"]["mean"], 3.5, 4.5)
PY
echo "ok"
