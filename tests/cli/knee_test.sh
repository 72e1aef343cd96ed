#!/usr/bin/env bash
# The receive batching knee (issue 17 item 5; docs/rx-batching.md "The knee"), CTest
# cli_knee: scenarios/rx-batching/knee.toml and knee-dim.toml run (shortened to 0.3 s each),
# their results validate against docs/results.schema.json, the knee's direction holds, and
# `nicsim plot --kind knee` draws a PNG whose data file has one row per run.
# The direction (the checks below say which per load): more coalescing, fewer interrupts,
# less CPU per frame and more latency added; GRO, less CPU per byte once polls hold several
# frames; a saturated core keeps polling; DIM moderates.
# Usage: knee_test.sh NICSIM_BINARY SOURCE_DIR
set -euo pipefail
nicsim=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
py=/usr/bin/python3
export NICSIM_PRESETS="$src/presets"
export TMPDIR="$work"

for f in knee knee-dim; do
  sed 's/^duration = "2s"/duration = "300ms"/' "$src/scenarios/rx-batching/$f.toml" >"$work/$f.toml"
  grep -q '^duration = "300ms"' "$work/$f.toml" || fail "$f.toml: no duration = \"2s\" to shorten"
  "$nicsim" run "$work/$f.toml" --json "$work/$f.json" --jobs 2 >"$work/$f.txt" \
    || fail "nicsim run $f.toml"
done
"$py" "$src/nicsim/report/validate_results.py" --schema "$src/docs/results.schema.json" \
  "$work/knee.json" "$work/knee-dim.json" || fail "the knee's results do not validate"
[ "$(grep -c "core per frame" "$work/knee.txt")" -ge 36 ] || fail "the text output lacks the knee's lines"

"$py" - "$work/knee.json" "$work/knee-dim.json" <<'PY' || fail "the knee's direction"
import json, sys
fixed = json.load(open(sys.argv[1]))["runs"]
dim = json.load(open(sys.argv[2]))["runs"]
assert len(fixed) == 36, len(fixed)
assert len(dim) == 6, len(dim)
usecs = ("1us", "8us", "25us", "50us", "100us", "200us")
def key(r):
    p = r["params"]
    return (p["wire.rate"], p["hosts.b.nic.gro"], p["hosts.b.nic.{rx_coalesce,tx_coalesce}.usecs"])
b = {key(r): r["rx_batching"]["b"] for r in fixed}
def falling(xs): return all(x > y for x, y in zip(xs, xs[1:]))
# Below saturation (1 and 3 Gbit/s): each step of coalescing gives fewer interrupts, less
# core time per frame and more latency added.
for rate in ("1Gbit", "3Gbit"):
    for gro in (False, True):
        row = [b[(rate, gro, u)] for u in usecs]
        irq = [x["irqs_per_s"] for x in row]
        cpu = [x["cpu_ns_per_frame"] for x in row]
        lat = [x["rx_latency_ms"]["mean"] for x in row]
        assert falling(irq), (rate, gro, "irqs_per_s", irq)
        assert falling(cpu), (rate, gro, "cpu_ns_per_frame", cpu)
        assert falling(lat[::-1]), (rate, gro, "rx latency mean", lat)
        assert all(x["adaptive_rx"] is False for x in row)
    # GRO merges only what one poll holds: next to nothing at 1 us (about a poll per frame),
    # less CPU per byte than without from 25 us on.
    assert b[(rate, True, "1us")]["frames_per_packet"] < 1.01, rate
    for u in ("25us", "50us", "100us", "200us"):
        off, on = b[(rate, False, u)], b[(rate, True, u)]
        assert on["rx_cpu_ns_per_byte"] < off["rx_cpu_ns_per_byte"], (rate, u)
        assert on["cpu_ns_per_frame"] < off["cpu_ns_per_frame"], (rate, u)
# Saturated (10 Gbit/s, the core busy): NAPI keeps polling (a handful of interrupts for
# hundreds of thousands of frames), the RX ring's queue dominates the latency, and GRO lowers
# the CPU per byte at every coalescing.
for u in usecs:
    off, on = b[("10Gbit", False, u)], b[("10Gbit", True, u)]
    for x in (off, on):
        assert x["rx_irqs"] + x["tx_irqs"] < x["frames"] / 100, (u, x)
        assert x["rx_latency_ms"]["mean"] > b[("1Gbit", x["gro"], "200us")]["rx_latency_ms"]["mean"]
    assert on["gro"] and not off["gro"]
    assert on["rx_cpu_ns_per_byte"] < off["rx_cpu_ns_per_byte"], (u, off, on)
    assert on["frames_per_packet"] > 2, (u, on["frames_per_packet"])
# DIM: moderates (fewer interrupts, less CPU per frame and more latency than no coalescing).
for r in dim:
    d = r["rx_batching"]["b"]
    assert d["adaptive_rx"] is True, r["label"]
    assert d["rx_irqs"] + d["tx_irqs"] > 0 and d["rx_latency_ms"]["count"] > 0, r["label"]
    rate, gro = r["params"]["wire.rate"], r["params"]["hosts.b.nic.gro"]
    if rate != "10Gbit":
        none = b[(rate, gro, "1us")]
        assert d["irqs_per_s"] < none["irqs_per_s"], r["label"]
        assert d["cpu_ns_per_frame"] < none["cpu_ns_per_frame"], r["label"]
        assert d["rx_latency_ms"]["mean"] > none["rx_latency_ms"]["mean"], r["label"]
PY

command -v gnuplot >/dev/null || fail "gnuplot not installed (run scripts/setup.sh)"
"$nicsim" plot "$work/knee.json" "$work/knee-dim.json" --kind knee -o "$work/knee.png" \
  --keep-script "$work/kept" 2>/dev/null || fail "nicsim plot --kind knee"
"$py" - "$work/knee.png" <<'PY' || fail "knee.png is not a 1000x600 PNG"
import struct, sys
b = open(sys.argv[1], "rb").read()
assert b[:8] == b"\x89PNG\r\n\x1a\n" and b[12:16] == b"IHDR"
assert struct.unpack(">II", b[16:24]) == (1000, 600)
assert len(b) > 5000, len(b)
PY
rows=$(grep -cv '^#\|^$' "$work/kept/knee.dat")
[ "$rows" = 42 ] || fail "knee.dat has $rows rows, not one per run (42)"
# Series: GRO off/on x fixed/DIM x three loads = 12 blocks.
series=$(grep -c '^# series ' "$work/kept/knee.dat")
[ "$series" = 12 ] || fail "knee.dat has $series series, not 12"
grep -q '^# series GRO on, DIM, rate=10Gbit$' "$work/kept/knee.dat" || fail "no DIM series"
# p99 and a probe metric on y; a file without rx_batching is refused in one line.
"$nicsim" plot "$work/knee.json" --kind knee --y p99 -o "$work/p99.svg" 2>/dev/null \
  || fail "--y p99"
"$nicsim" plot "$work/knee.json" --kind knee --y ping.rtt_p99_ms -o "$work/ping.svg" 2>/dev/null \
  || fail "--y ping.rtt_p99_ms"
sed -e 's/^duration = "2s"/duration = "200ms"/' -e '/^\[vary\]/,$d' \
  "$src/scenarios/rx-batching/knee.toml" >"$work/plain.toml"
"$nicsim" run "$work/plain.toml" --json "$work/plain.json" --quiet >/dev/null
set +e
err=$("$nicsim" plot "$work/plain.json" --kind knee -o "$work/x.png" 2>&1)
rc=$?
set -e
[ "$rc" = 2 ] || fail "a file without rx_batching: exit $rc, not 2"
[ "$(printf '%s\n' "$err" | wc -l)" = 1 ] || fail "not one line: $err"
case "$err" in *"has no rx_batching"*) ;; *) fail "unexpected error: $err" ;; esac
echo "cli_knee: ok"
