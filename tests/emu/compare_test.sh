#!/usr/bin/env bash
# CTest emu_compare: `nicsim compare` of a simulator results file with an emulator results file
# (docs/exports.md, "Compare"). scenarios/examples/100mbit-5ms.toml is simulated (10 s) and
# emulated (its own traffic, 3 s); the table must have one row per file with backend sim and
# emu, and each row's goodput (2 decimals) and main-probe p50/p99 (3 decimals) must be the ones
# in that file. Bounded: one 3 s emulation. Usage: compare_emu_test.sh NICSIM SOURCE_DIR
source "$(dirname "$0")/common.sh"
nicsim=$1
src=$2
emu_require_root
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export NICSIM_PRESETS="$src/presets"
scenario=$src/scenarios/examples/100mbit-5ms.toml
"$nicsim" run "$scenario" --quiet --json "$work/sim.json" > /dev/null || fail "nicsim run exited $?"
"$nicsim" emulate "$scenario" --duration 3s --json "$work/emu.json" > /dev/null 2> "$work/summary" \
  || fail "nicsim emulate exited $?: $(cat "$work/summary")"
"$nicsim" compare "$work/sim.json" "$work/emu.json" > "$work/table" 2> "$work/err" \
  || fail "nicsim compare exited $?: $(cat "$work/err")"
cat "$work/table"
/usr/bin/python3 - "$work" <<'PY'
import json, sys
work = sys.argv[1]
rows = [l.split() for l in open(f"{work}/table").read().splitlines()[1:]]
if len(rows) != 2:
    sys.exit(f"FAIL: {len(rows)} rows, want one per file")
for row, name, backend in zip(rows, ("sim.json", "emu.json"), ("sim", "emu")):
    run = json.load(open(f"{work}/{name}"))["runs"][0]
    # file, run label, backend, a->b, b->a, probe, p50, p99, induced, grade, RPM
    want = [f"{work}/{name}", "(single)", backend, f"{run['goodput_bps']['a->b'] / 1e6:.2f}",
            f"{run['goodput_bps']['b->a'] / 1e6:.2f}", "ping",
            f"{run['latency_ms']['ping']['p50']:.3f}", f"{run['latency_ms']['ping']['p99']:.3f}",
            "-", "-", "-"]
    if run["backend"] != backend or row != want:
        sys.exit(f"FAIL: {name} row {row}, want {want} (backend {run['backend']})")
    if not float(want[3]) > 0 or run["latency_ms"]["ping"]["count"] == 0:
        sys.exit(f"FAIL: {name} carried no traffic or no ping")
print("ok: one row per back-end, each with its file's numbers")
PY
