#!/usr/bin/env bash
# End-to-end checks of `nicsim export`, `nicsim run --csv/--flent` and `nicsim compare`
# (CTest: cli_export):
#  1. Debian's flent reads our .flent.gz and the statistics it prints (flent -f stats) equal
#     nicsim's own numbers: per TCP flow the mean (= the flow's goodput), total (= bytes
#     delivered), min/max (of the interval rates); per probe the statistics of its samples;
#  2. `nicsim export` of the JSON gives byte-identical flent files to `nicsim run --flent`;
#  3. the CSV tables parse and agree with the JSON;
#  4. `nicsim compare` prints one row per run with the JSON's goodput and p50/p99;
#  5. bad results files / command lines exit 2 with one line naming the file and JSON path.
# Usage: export_test.sh NICSIM_BINARY SOURCE_DIR
set -euo pipefail
source "$(dirname "$0")/common.sh"
command -v flent >/dev/null || fail "flent not installed (run scripts/setup.sh)"
$py -c 'import numpy' || fail "python3-numpy not installed (run scripts/setup.sh)"

cd "$work"
"$nicsim" run s.toml --json r.json --csv csv --flent run.flent.gz --quiet >/dev/null 2>run.err \
  || { cat run.err; fail "nicsim run"; }
[ -f run-1-bql_false.flent.gz ] && [ -f run-2-bql_true.flent.gz ] || fail "run --flent files: $(ls)"

# 2. export = run, byte for byte; --run picks one run and writes exactly OUT.
"$nicsim" export r.json --flent exp.flent.gz 2>/dev/null
cmp run-1-bql_false.flent.gz exp-1-bql_false.flent.gz || fail "export differs from run --flent"
cmp run-2-bql_true.flent.gz exp-2-bql_true.flent.gz || fail "export differs from run --flent"
"$nicsim" export r.json --flent one.flent.gz --run bql=true 2>/dev/null
cmp one.flent.gz run-2-bql_true.flent.gz || fail "--run bql=true"

# 1. flent's statistics vs ours.
for i in 1 2; do
  f=$(ls run-$i-*.flent.gz)
  flent -i "$f" -f stats -o stats$i.txt >flent$i.log 2>&1 || { cat flent$i.log; fail "flent -i $f"; }
  $py - r.json $((i - 1)) stats$i.txt "$f" <<'PY' || fail "flent stats of $f differ from nicsim's"
import gzip, json, re, sys
import numpy as np
res = json.load(open(sys.argv[1]))
run = res["runs"][int(sys.argv[2])]
flent_doc = json.load(gzip.open(sys.argv[4], "rt"))
# Parse flent's "stats" output: " SERIES:\n  Key: value [unit]".
stats, cur = {}, None
for line in open(sys.argv[3]):
    m = re.match(r"^ (\S.*):$", line.rstrip("\n"))
    if m:
        cur = stats.setdefault(m.group(1), {})
        continue
    m = re.match(r"^  ([^:]+):\s+(-?[0-9.]+)", line)
    if m and cur is not None:
        cur[m.group(1).strip()] = float(m.group(2))
problems = []
def same(what, got, want, tol=2e-6):
    if abs(got - want) > tol * max(1.0, abs(want)):
        problems.append("%s: flent %r, nicsim %r" % (what, got, want))
checked = 0
n = len(run["intervals"])
for d, prefix in (("a->b", "TCP upload BE::"), ("b->a", "TCP download BE::")):
    for k, flow in enumerate(run["transfer"][d]["flows"]):
        name = prefix + str(k + 1)
        s = stats.get(name)
        if s is None:
            problems.append("flent printed no %s" % name); continue
        rates = [f["bits_per_second"] / 1e6 for iv in run["intervals"]
                 for f in iv["directions"][d]["flows"] if f["id"] == flow["id"]]
        got_bytes = sum(f["bytes"] for iv in run["intervals"]
                        for f in iv["directions"][d]["flows"] if f["id"] == flow["id"])
        same(name + " mean = goodput", s["Mean"], flow["receiver"]["bits_per_second"] / 1e6)
        same(name + " total = bytes delivered", s["Total"], flow["receiver"]["bytes"] * 8 / 1e6)
        same(name + " total = interval bytes", s["Total"], got_bytes * 8 / 1e6)
        same(name + " min", s["Min"], min(rates))
        same(name + " max", s["Max"], max(rates))
        same(name + " median", s["Median"], float(np.median(rates)))
        same(name + " data points", s["Data points"], n)
        checked += 1
probe_series = {"icmp": "Ping (ms) ICMP", "udp": "Ping (ms) UDP BE"}
for probe, p in run["latency_ms"].items():
    name = probe_series[p["kind"]]
    s = stats.get(name)
    if s is None:
        problems.append("flent printed no %s" % name); continue
    if "series" in p and p["series"]["time_s"]:
        # every sample: flent's statistics are the probe's statistics
        same(name + " count", s["Data points"], p["count"])
        for key, flent_key in (("min", "Min"), ("p50", "Median"), ("p99", "99th %"),
                               ("max", "Max"), ("mean", "Mean"), ("mdev", "Std dev")):
            same(name + " " + key, s[flent_key], p[key])
    else:
        # no samples in the file: flent sees the per-interval means
        means = [iv["latency_ms"][probe] for iv in run["intervals"] if probe in iv["latency_ms"]]
        same(name + " mean", s["Mean"], float(np.mean(means)))
        same(name + " median", s["Median"], float(np.median(means)))
        same(name + " data points", s["Data points"], len(means))
    checked += 1
if checked != 5:
    problems.append("checked %d series, want 5 (3 flows, 2 probes)" % checked)
for p in problems:
    print(p, file=sys.stderr)
sys.exit(1 if problems else 0)
PY
done

# 3. CSV tables agree with the JSON.
"$nicsim" export r.json --csv csv2 2>/dev/null
for t in runs intervals flow_intervals interval_latency probes queues; do
  cmp "csv/$t.csv" "csv2/$t.csv" || fail "$t.csv: export differs from run --csv"
done
$py - r.json csv <<'PY' || fail "CSV tables disagree with the JSON"
import csv, json, sys
res = json.load(open(sys.argv[1]))
d = sys.argv[2]
rows = lambda t: list(csv.DictReader(open("%s/%s.csv" % (d, t), newline="")))
runs = rows("runs")
assert len(runs) == 2, runs
for i, r in enumerate(res["runs"]):
    assert runs[i]["label"] == r["label"] and int(runs[i]["run"]) == i
    assert float(runs[i]["goodput_b_to_a_bps"]) == r["goodput_bps"]["b->a"]
    assert runs[i]["param:hosts.b.nic.bql"] == str(r["params"]["hosts.b.nic.bql"]).lower()
    assert float(runs[i]["main_p99_ms"]) == r["latency_ms"]["ping"]["p99"]
iv = rows("intervals")
assert len(iv) == sum(2 * len(r["intervals"]) for r in res["runs"]), len(iv)
fl = rows("flow_intervals")
for r_i, r in enumerate(res["runs"]):
    for k, interval in enumerate(r["intervals"]):
        for dk in ("a->b", "b->a"):
            flows = [f for f in fl if int(f["run"]) == r_i and f["direction"] == dk
                     and float(f["start_s"]) == interval["start_s"]]
            assert sum(int(f["bytes"]) for f in flows) == interval["directions"][dk]["bytes"]
pr = rows("probes")
udp = [p for p in pr if p["run"] == "0" and p["probe"] == "udp" and p["measure"] == "rtt"][0]
assert int(udp["count"]) == res["runs"][0]["latency_ms"]["udp"]["count"]
assert float(udp["p50_ms"]) == res["runs"][0]["latency_ms"]["udp"]["p50"]
PY

# 4. compare: one row per run, numbers from the JSON.
"$nicsim" compare r.json > cmp.txt
[ "$(wc -l < cmp.txt)" -eq 3 ] || fail "compare: $(cat cmp.txt)"
head -1 cmp.txt | grep -q "a->b Mbit/s  b->a Mbit/s  probe  p50 ms  p99 ms" || fail "compare header"
$py - r.json cmp.txt <<'PY' || fail "compare numbers"
import json, sys
res = json.load(open(sys.argv[1]))
lines = open(sys.argv[2]).read().splitlines()[1:]
for r, line in zip(res["runs"], lines):
    want = "%.2f" % (r["goodput_bps"]["b->a"] / 1e6)
    p = r["latency_ms"]["ping"]
    for w in (r["label"], "sim", want, "ping", "%.3f" % p["p50"], "%.3f" % p["p99"]):
        assert w in line.split(), (w, line)
PY

# 5. errors: one line, the file and the JSON path; exit 2.
sed '0,/"goodput_bps": {/s//"goodput_bps": 5, "x": {/' r.json > bad.json
expect_error 2 "bad.json: runs[0].goodput_bps: expected an object, got number" \
  "$nicsim" export bad.json --csv out
expect_error 2 "bad.json: runs[0].goodput_bps: expected an object, got number" \
  "$nicsim" compare r.json bad.json
expect_error 2 "missing.json: cannot open: No such file or directory" "$nicsim" compare missing.json
printf '{"format": "nicsim-results", "version": 1,\n "runs": [}' > trunc.json
expect_error 2 "trunc.json: line 2, column " "$nicsim" export trunc.json --flent x.flent.gz
expect_error 2 "no run labelled 'nope' (runs: 'bql=false', 'bql=true')" \
  "$nicsim" export r.json --flent x.flent.gz --run nope
expect_usage_error "nothing to do: give --csv or --flent" "$nicsim" export r.json
expect_usage_error "missing the results files" "$nicsim" compare
"$nicsim" export --help | grep -q "flent -i OUT -f stats" || fail "export --help"
"$nicsim" compare --help | grep -q "induced latency" || fail "compare --help"
echo "export test: ok"
