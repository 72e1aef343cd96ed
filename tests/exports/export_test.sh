#!/usr/bin/env bash
# End-to-end checks of `nicsim export`, `nicsim run --csv/--flent` and `nicsim compare`
# (CTest: cli_export):
#  1. Debian's flent reads our .flent.gz and the statistics it prints (flent -f stats) equal
#     nicsim's own numbers: per TCP flow the mean (= the flow's goodput), total (= bytes
#     delivered), min/max (of the interval rates); per probe the statistics of its samples;
#  2. `nicsim export` of the JSON gives byte-identical flent files to `nicsim run --flent`;
#  3. the CSV tables parse and agree with the JSON;
#  4. `nicsim compare` prints one row per run with the JSON's goodput and p50/p99;
#  5. bad results files / command lines exit 2 with one line naming the file and JSON path;
#  6. an rrul-shaped document (report_schema_sample's full sample: rrul flow names, DSCP-marked
#     probes with per-sample series, phases) loads in flent as flent's "rrul" test, with flent's
#     statistics of the ping series equal to the probe's statistics.
#  7. a real rrul (nicsim server + nicsim rrul on 127.0.0.1, 2.5 s): flent reads the export as
#     its rrul test and every flow's and probe's statistics equal nicsim's (probe samples ->
#     exact count/min/p50/p99/max/mean/mdev); the run plots (totals with phases, CDF).
#  8. the simulated rrul example (scenarios/examples/rrul.toml): flent's rrul test, all 12
#     series' statistics equal nicsim's.
# Usage: export_test.sh NICSIM_BINARY SOURCE_DIR [REPORT_SCHEMA_SAMPLE_BINARY]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/common.sh"
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
  $py "$here/check_flent_stats.py" r.json $((i - 1)) stats$i.txt "$f" 5 \
    || fail "flent stats of $f differ from nicsim's"
done

# 3. CSV tables agree with the JSON.
"$nicsim" export r.json --csv csv2 2>/dev/null
for t in runs intervals flows flow_intervals interval_latency probes queues; do
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
header=$(head -1 cmp.txt)
[[ "$header" == *"a->b Mbit/s  b->a Mbit/s  probe  p50 ms  p99 ms"* ]] || fail "compare header"
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
help=$("$nicsim" export --help)
[[ "$help" == *"flent -i OUT -f stats"* ]] || fail "export --help"
help=$("$nicsim" compare --help)
[[ "$help" == *"induced latency"* ]] || fail "compare --help"
# 6. rrul-shaped document with probe samples.
if [ -n "${3:-}" ]; then
  "$3" full > full.json
  "$nicsim" export full.json --flent rrul.flent.gz --run "bql=true rate=1Gbit" 2>/dev/null
  flent -i rrul.flent.gz -f stats -o rrul_stats.txt >flent_rrul.log 2>&1 \
    || { cat flent_rrul.log; fail "flent -i rrul.flent.gz"; }
  $py - full.json rrul_stats.txt rrul.flent.gz <<'PY' || fail "flent stats of the rrul sample"
import gzip, json, re, sys
import numpy as np
run = json.load(open(sys.argv[1]))["runs"][1]
doc = json.load(gzip.open(sys.argv[3], "rt"))
assert doc["metadata"]["NAME"] == "rrul", doc["metadata"]["NAME"]
stats, cur = {}, None
for line in open(sys.argv[2]):
    m = re.match(r"^ (\S.*):$", line.rstrip("\n"))
    if m:
        cur = stats.setdefault(m.group(1), {}); continue
    m = re.match(r"^  ([^:]+):\s+(-?[0-9.]+)", line)
    if m and cur is not None:
        cur[m.group(1).strip()] = float(m.group(2))
# flent computed rrul's derived series from ours (rrul.conf DATA_SETS)
for name in ("TCP upload BE", "TCP upload EF", "TCP download BE", "TCP download EF",
             "TCP upload sum", "TCP download sum", "TCP totals", "Ping (ms) ICMP",
             "Ping (ms) UDP EF", "Ping (ms) avg"):
    assert name in stats, (name, sorted(stats))
def same(what, got, want):
    assert abs(got - want) <= 2e-6 * max(1.0, abs(want)), (what, got, want)
ping = run["latency_ms"]["ping"]   # its series holds exactly the samples of its statistics
s = stats["Ping (ms) ICMP"]
same("count", s["Data points"], ping["count"])
for key, fk in (("min", "Min"), ("p50", "Median"), ("p99", "99th %"), ("max", "Max"),
                ("mean", "Mean"), ("mdev", "Std dev")):
    same("ping " + key, s[fk], ping[key])
ef = [v for v in run["latency_ms"]["udp_ef"]["series"]["rtt_ms"] if v is not None]
same("udp_ef samples", stats["Ping (ms) UDP EF"]["Data points"], len(ef))
same("udp_ef median", stats["Ping (ms) UDP EF"]["Median"], float(np.median(ef)))
flow = run["transfer"]["a->b"]["flows"][1]
assert flow["name"] == "TCP upload EF"
same("TCP upload EF mean", stats["TCP upload EF"]["Mean"], flow["receiver"]["bits_per_second"] / 1e6)
PY
fi
# 8. the simulated rrul example.
"$nicsim" run "$src/scenarios/examples/rrul.toml" --json srrul.json --flent srrul.flent.gz \
  --quiet >/dev/null 2>&1 || fail "nicsim run rrul.toml"
for f in srrul-*.flent.gz; do
  i=$(( ${f:6:1} - 1 ))
  flent -i "$f" -f stats -o "$f.txt" >flent_srrul.log 2>&1 || { cat flent_srrul.log; fail "flent -i $f"; }
  $py "$here/check_flent_stats.py" srrul.json "$i" "$f.txt" "$f" 12 \
    || fail "flent stats of the simulated rrul ($f) differ from nicsim's"
done
[ -e srrul-1-bql_false.flent.gz ] || fail "rrul.toml runs: $(ls srrul-*)"

# 7. a real rrul on the loopback.
"$nicsim" server --listen 127.0.0.1:0 --request-timeout 2s 2>server.log &
server_pid=$!
trap 'kill $server_pid 2>/dev/null; wait $server_pid 2>/dev/null; rm -rf "$work"' EXIT
port=
for _ in $(seq 1 50); do
  # The background job may not have created the log yet (a loaded machine): not an error,
  # and under `set -e` a failing sed here would end the test without a word (it did in CI).
  port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' server.log 2>/dev/null || true)
  [ -n "$port" ] && break
  sleep 0.1
done
[ -n "$port" ] || fail "server did not start: $(cat server.log)"
"$nicsim" rrul "127.0.0.1:$port" --idle 0.5s --duration 1.5s --probe-interval 20ms \
  --json live.json --quiet >/dev/null 2>live.err || { cat live.err; fail "nicsim rrul"; }
"$nicsim" export live.json --flent live.flent.gz 2>/dev/null
flent -i live.flent.gz -f stats -o live_stats.txt >flent_live.log 2>&1 \
  || { cat flent_live.log; fail "flent -i live.flent.gz"; }
n=$($py -c 'import json,sys; r=json.load(open(sys.argv[1]))["runs"][0]; print(sum(len(r["transfer"][d]["flows"]) for d in ("a->b","b->a")) + len(r["latency_ms"]))' live.json)
# 8 flows + 4 probes; the ping probe is left out only where no ICMP socket can be opened.
want=12
"$src/tests/cli/icmp_allowed.py" || want=11
[ "$n" -eq "$want" ] || fail "live rrul: $n flows + probes, want $want (8 + ping and 3 UDP probes)"
$py -c 'import gzip,json,sys; assert json.load(gzip.open(sys.argv[1],"rt"))["metadata"]["NAME"] == "rrul"' \
  live.flent.gz || fail "live rrul is not flent's rrul"
$py "$here/check_flent_stats.py" live.json 0 live_stats.txt live.flent.gz "$n" \
  || fail "flent stats of the live rrul differ from nicsim's"
"$nicsim" plot live.json -o live_totals.svg 2>/dev/null || fail "plot live totals"
grep -q "idle_before" live_totals.svg || fail "live totals: no phase marks"
"$nicsim" plot live.json --kind cdf -o live_cdf.png 2>/dev/null || fail "plot live cdf"
echo "export test: ok"
