#!/usr/bin/env bash
# End-to-end checks of `nicsim plot` (CTest: cli_plot): every kind renders through Debian's
# gnuplot to PNG (signature, IHDR size 1000x600) and SVG (parses as XML, has the plot's
# title, axis labels, legend entries and drawn paths); errors exit 2 with one line.
# With REPORT_SCHEMA_SAMPLE_BINARY, also the rrul-shaped full sample: totals with phase marks
# and the CDF from probe samples.
# Usage: plot_test.sh NICSIM_BINARY SOURCE_DIR [REPORT_SCHEMA_SAMPLE_BINARY]
set -euo pipefail
source "$(dirname "$0")/common.sh"
command -v gnuplot >/dev/null || fail "gnuplot not installed (run scripts/setup.sh)"

cd "$work"
# nicsim plot's scratch directories go here, so the leftover check below cannot see another
# test's (or user's) plot running at the same time in /tmp.
export TMPDIR="$work/tmp"
mkdir "$TMPDIR"
"$nicsim" run s.toml --json r.json --quiet >/dev/null
"$nicsim" run s.toml --json r2.json --seed 9 --quiet >/dev/null

check_png() {
  $py - "$1" <<'PY' || fail "$1 is not a 1000x600 PNG"
import struct, sys
b = open(sys.argv[1], "rb").read()
assert b[:8] == b"\x89PNG\r\n\x1a\n", "signature"
assert b[12:16] == b"IHDR", "IHDR first"
w, h = struct.unpack(">II", b[16:24])
assert (w, h) == (1000, 600), (w, h)
assert len(b) > 5000, len(b)  # a blank canvas compresses to ~2 kB
PY
}
# check_svg FILE TEXT... : XML, at least 3 drawn paths, and each TEXT in a <text> element.
check_svg() {
  $py - "$@" <<'PY' || fail "$1: not the expected SVG"
import sys, xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
ns = "{http://www.w3.org/2000/svg}"
assert root.tag == ns + "svg", root.tag
texts = ["".join(t.itertext()) for t in root.iter(ns + "text")]
paths = list(root.iter(ns + "path"))
assert len(paths) >= 3, len(paths)
for want in sys.argv[2:]:
    assert any(want in t for t in texts), (want, texts)
PY
}

"$nicsim" plot r.json --run bql=false -o totals.png 2>/dev/null
check_png totals.png
"$nicsim" plot r.json --run bql=false --kind totals -o totals.svg 2>/dev/null
check_svg totals.svg "Throughput and latency over time" "time (s)" "throughput (Mbit/s)" \
  "latency (ms)" "a->b (upload)" "b->a (download)" "latency: mean of the probes (ms)"
"$nicsim" plot r.json r2.json --kind compare -o compare.png 2>/dev/null
check_png compare.png
"$nicsim" plot r.json r2.json --kind compare -o compare.svg 2>/dev/null
check_svg compare.svg "Goodput vs p99 RTT of the main probe" "p99 round-trip time (ms)" \
  "goodput (Mbit/s)" "r.json sim bql=false b->a" "r2.json sim bql=true a->b"
# The simulator always records the per-sample series (3 s of 20 ms pings), so the CDF plots;
# the same file with every series removed must give the one-line error instead.
$py - <<'PY' || fail "r.json: the ping series is missing or short"
import json
run = next(r for r in json.load(open("r.json"))["runs"] if r["label"] == "bql=true")
assert len(run["latency_ms"]["ping"]["series"]["time_s"]) >= 140
PY
"$nicsim" plot r.json --run bql=true --kind cdf -o cdf.png 2>/dev/null
check_png cdf.png
"$nicsim" plot r.json --run bql=true --kind cdf -o cdf.svg 2>/dev/null
check_svg cdf.svg "Latency CDF (RTT)" "round-trip time (ms)" "fraction of samples" "ping (icmp, n="
$py - <<'PY'
import json
d = json.load(open("r.json"))
for run in d["runs"]:
    for probe in run["latency_ms"].values():
        probe.pop("series", None)
json.dump(d, open("no_series.json", "w"))
PY
expect_error 2 "has no latency samples (probe series)" \
  "$nicsim" plot no_series.json --run bql=true --kind cdf -o cdf.png

if [ -n "${3:-}" ]; then
  "$3" full > full.json
  "$nicsim" plot full.json --run "bql=true rate=1Gbit" --kind cdf -o full_cdf.png 2>/dev/null
  check_png full_cdf.png
  "$nicsim" plot full.json --run "bql=true rate=1Gbit" --kind cdf -o full_cdf.svg 2>/dev/null
  check_svg full_cdf.svg "Latency CDF (RTT)" "ping (icmp, n=5)" "udp_ef (udp, n=1)"
  "$nicsim" plot full.json --run "bql=true rate=1Gbit" -o full_totals.svg 2>/dev/null
  check_svg full_totals.svg "idle_before" "load" "idle_after"
  "$nicsim" plot full.json --kind compare -o full_cmp.svg 2>/dev/null
  check_svg full_cmp.svg "Goodput vs induced latency" "induced latency (ms)"
fi

# The simulated rrul example: phases and per-sample CDFs of its four probes.
"$nicsim" run "$src/scenarios/examples/rrul.toml" --json rrul.json --quiet >/dev/null
"$nicsim" plot rrul.json --run bql=true -o rrul_totals.png 2>/dev/null
check_png rrul_totals.png
"$nicsim" plot rrul.json --run bql=true --kind cdf -o rrul_cdf.svg 2>/dev/null
check_svg rrul_cdf.svg "ping (icmp, n=" "udp_be (udp, n=" "udp_bk (udp, n=" "udp_ef (udp, n="
"$nicsim" plot rrul.json --kind compare -o rrul_cmp.svg 2>/dev/null
check_svg rrul_cmp.svg "Goodput vs induced latency" "sim bql=true a->b" "sim bql=false b->a"

# Errors.
expect_error 2 "r.json has 2 runs; pick one with --run K=V,... (runs: 'bql=false', 'bql=true')" \
  "$nicsim" plot r.json -o x.png
expect_error 2 "gnuplot not found on PATH" env PATH=/nonexistent "$nicsim" plot r.json \
  --run bql=false -o x.png
expect_error 2 "missing.json: cannot open" "$nicsim" plot missing.json -o x.png
expect_usage_error "the file name must end in .png, .svg, .pdf or .eps" "$nicsim" plot r.json -o x.gif
expect_usage_error "--kind: expected 'totals', 'cdf', 'compare', 'sweep', 'tradeoff' or 'knee', got 'box'" \
  "$nicsim" plot r.json -o x.png --kind box
[ ! -e x.png ] || fail "a failed plot left x.png"
# gnuplot failing: its error line, exit 1; gnuplot "succeeding" without output: exit 1.
mkdir fakebin
printf '#!/bin/sh\necho "   ^" >&2\necho "\\"plot.gp\\" line 3: boom" >&2\nexit 1\n' > fakebin/gnuplot
chmod +x fakebin/gnuplot
expect_error 1 'gnuplot failed: "plot.gp" line 3: boom' env PATH="$work/fakebin" \
  "$nicsim" plot r.json --run bql=false -o x.png
printf '#!/bin/sh\nexit 0\n' > fakebin/gnuplot
expect_error 1 "gnuplot exited 0 but wrote nothing to x.png" env PATH="$work/fakebin" \
  "$nicsim" plot r.json --run bql=false -o x.png
help=$("$nicsim" plot --help)
[[ "$help" == *"gnuplot-nox"* ]] || fail "plot --help"
left=$(find "$TMPDIR" -mindepth 1)
[ -z "$left" ] || fail "scratch directory left behind: $left"
echo "plot test: ok"
