#!/usr/bin/env bash
# CTest emu_live_rrul_emu: a [[traffic.rrul]] scenario under `nicsim emulate` (no command): the
# eight TCP flows and four probes run on real sockets between the emulated hosts (100 Mbit/s,
# 5 ms one way; 1 s idle, 3 s load, 1 s idle). Pins: the JSON validates (backend "emu") with
# the three phases and a latency_under_load (grade, RPM); the load raises the loaded RTT above
# the idle one (a drop-tail queue at 100 Mbit/s under 8 TCP flows); idle one-way delays are
# 5 ± 0.25 ms in both directions (median: exact one-way from the shared clock); the text report
# has the iperf3 tables of both directions. An idle p50 outside the band while the same
# direction's minimum is inside it is the outlier signature of common.sh (samples delayed by
# the loaded machine): the run is repeated once.
# Usage: live_rrul_emu_test.sh NICSIM SOURCE_DIR
source "$(dirname "$0")/common.sh"
nicsim=$1
src=$2
emu_require_root
emu_require_tools python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
cat >"$work/rrul.toml" <<TOML
[scenario]
name = "rrul, 100 Mbit/s, 5 ms one way"
duration = "5s"

[hosts.a]
cpu = "x86-desktop"
nic = "generic-1g"

[hosts.b]
cpu = "x86-desktop"
nic = "generic-1g"

[wire]
rate = "100Mbit"
delay = "5ms"

[[traffic.rrul]]
from = "a"
to = "b"
idle = "1s"
load = "3s"
probe_interval = "50ms"
TOML
attempt() {
  NICSIM_PRESETS="$src/presets" "$nicsim" emulate "$work/rrul.toml" --json "$work/r.json" \
    >"$work/out.txt" 2>"$work/err.txt" || fail "nicsim emulate exited $?: $(cat "$work/err.txt")"
  grep -q "^a->b (TCP" "$work/out.txt" && grep -q "^b->a (TCP" "$work/out.txt" \
    || fail "no iperf3 tables: $(head -20 "$work/out.txt")"
  python3 "$src/nicsim/report/validate_results.py" --schema "$src/docs/results.schema.json" \
    "$work/r.json" || fail "JSON does not validate"
  python3 - "$work/r.json" <<'PY' || { rc=$?; echo "emulator summary: $(grep -v 'not emulated' "$work/err.txt")"; return $rc; }
import json, sys
run = json.load(open(sys.argv[1]))["runs"][0]
assert run["backend"] == "emu"
assert [p["name"] for p in run["phases"]] == ["idle_before", "load", "idle_after"]
lul = run["latency_under_load"]
print("idle RTT mean %.2f ms, loaded %.2f ms, induced %.2f ms, grade %s, %.0f RPM" % (
    lul["idle_rtt"]["mean"], lul["loaded_rtt"]["mean"], lul["induced_latency_ms"], lul["grade"],
    lul["rpm"]))
assert lul["grade"] in ("A+", "A", "B", "C", "D", "F")
assert lul["loaded_rtt"]["mean"] > lul["idle_rtt"]["mean"], "load did not add latency"
misses = []
for d in ("a->b", "b->a"):
    ow = lul["idle_one_way"][d]
    print(f"idle one-way {d}: p50 {ow['p50']:.3f} ms, min {ow['min']:.3f} ms")
    if not 4.75 <= ow["p50"] <= 5.25:
        print(f"idle one-way {d} p50 {ow['p50']:.3f} ms is outside 5 ± 0.25 ms")
        misses.append(4.75 <= ow["min"] <= 5.25)
    assert run["goodput_bps"][d] > 0
if misses:
    sys.exit(2 if all(misses) else 1)
PY
}
emu_retry_once "rrul under the emulator" attempt
echo "ok"
