#!/usr/bin/env bash
# End-to-end check of rrul in the simulator (CTest: cli_rrul), on the shipped example
# scenarios/examples/rrul.toml (stmmac at 100 Mbit/s, BQL off and on, 1 s + 4 s + 1 s):
#  1. `nicsim run` prints the iperf3 tables (1 s rows from the 100 ms bins), the ping summary
#     and the latency-under-load block (idle/loaded latency, induced latency, grade, RPM,
#     fairness, per-DSCP rows);
#  2. the JSON validates against docs/results.schema.json and is deterministic outside meta;
#  3. the JSON has flent's rrul layout: phases, 8 named/marked flows, the four probes with
#     series, 100 ms bins without gaps, no new data after the load, latency_under_load
#     consistent with the probes and the phases;
#  4. bad rrul keys exit 2 with one line naming file:line:col and the key.
# Usage: rrul_cli_test.sh NICSIM_BINARY SOURCE_DIR
set -euo pipefail
nicsim=$1
src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
export NICSIM_PRESETS="$src/presets"
scenario="$src/scenarios/examples/rrul.toml"

"$nicsim" run "$scenario" --json "$work/r1.json" > "$work/out.txt"
"$nicsim" run "$scenario" --json "$work/r2.json" --quiet > "$work/quiet.txt"
[ "$(grep -c ', grade [A-F]+\?, [0-9]* RPM$' "$work/quiet.txt")" -eq 2 ] \
  || fail "--quiet lines lack grade and RPM: $(cat "$work/quiet.txt")"

for want in "latency under load (idle_before 1 s, load 4 s, idle_after 1 s)" \
            "idle RTT" "loaded RTT" "loaded RTT EF" "loaded RTT CS1" "loaded RTT BE" \
            "TCP SRTT CS5" "bufferbloat grade " " RPM (foreign " "fairness (Jain)   board->pc " \
            "goodput (load)" "--- ping statistics ---" \
            "[SUM]   1.00-2.00   sec" "udp_ef  board->pc" "board->pc (TCP, sender board)"; do
  grep -qF -- "$want" "$work/out.txt" || fail "output lacks '$want'"
done
# The iperf3 table shows 1 s rows, not the 100 ms bins.
! grep -qF "1.00-1.10" "$work/out.txt" || fail "iperf3 table printed the 100 ms bins"
[ "$(grep -c '^=== ' "$work/out.txt")" -eq 2 ] || fail "expected two runs"

python3 "$src/nicsim/report/validate_results.py" --schema "$src/docs/results.schema.json" \
  "$work/r1.json" || fail "schema validation"
python3 - "$work/r1.json" "$work/r2.json" <<'PY' || fail "rrul JSON"
import json, sys
def body(p):
    t = open(p).read()
    return t[:t.index('\n  "meta"')] + t[t.index('\n  "runs"'):]
assert body(sys.argv[1]) == body(sys.argv[2]), "JSON differs outside meta between two runs"
doc = json.load(open(sys.argv[1]))
assert [r["label"] for r in doc["runs"]] == ["bql=false", "bql=true"]
for run in doc["runs"]:
    assert run["phases"] == [{"name": "idle_before", "start_s": 0.0, "end_s": 1.0},
                             {"name": "load", "start_s": 1.0, "end_s": 5.0},
                             {"name": "idle_after", "start_s": 5.0, "end_s": 6.0}], run["phases"]
    names = {d: [(f["name"], f["dscp"]) for f in run["transfer"][d]["flows"]]
             for d in ("a->b", "b->a")}
    assert names["a->b"] == [("TCP upload BE", 0), ("TCP upload BK", 8), ("TCP upload CS5", 40),
                             ("TCP upload EF", 46)], names
    assert names["b->a"] == [(n.replace("upload", "download"), d) for n, d in names["a->b"]]
    probes = run["latency_ms"]
    assert sorted(probes) == ["ping", "udp_be", "udp_bk", "udp_ef"], sorted(probes)
    assert [probes[p]["dscp"] for p in ("udp_ef", "udp_bk", "udp_be", "ping")] == [46, 8, 0, 0]
    for name, p in probes.items():
        s = p["series"]
        # every 20 ms for 6 s, all answered (no loss on this path)
        assert len(s["time_s"]) == 300 and len(s["rtt_ms"]) == 300, (name, len(s["time_s"]))
        assert abs(s["time_s"][1] - 0.02) < 1e-12 and None not in s["rtt_ms"], name
        assert p["count"] == 300 and p["lost"] == 0
        assert ("one_way_a_to_b_ms" in s) == (p["kind"] == "udp"), name
        if p["kind"] == "udp":   # one-way delays add up to the RTT (one clock)
            for k in range(300):
                rtt, f, b = s["rtt_ms"][k], s["one_way_a_to_b_ms"][k], s["one_way_b_to_a_ms"][k]
                assert abs(f + b - rtt) < 1e-6, (name, k, f, b, rtt)
    iv = run["intervals"]
    assert len(iv) == 60, len(iv)   # 100 ms bins, no gaps
    for k, i in enumerate(iv):
        assert abs(i["start_s"] - k / 10) < 1e-9 and abs(i["end_s"] - (k + 1) / 10) < 1e-9
    load = [i for i in iv if 1.0 <= i["start_s"] < 5.0 - 1e-9]
    assert all(i["directions"][d]["bits_per_second"] > 50e6 for i in load[5:] for d in ("a->b", "b->a"))
    # The flows stop writing at 5 s: the last 100 ms bins carry nothing.
    assert all(i["directions"][d]["bytes"] == 0 for i in iv[-3:] for d in ("a->b", "b->a"))
    # SRTT per flow and interval during the load.
    assert all(f.get("srtt_ms", 0) > 0 for i in load for f in i["directions"]["a->b"]["flows"])
    lul = run["latency_under_load"]
    idle = [r for p in probes.values() for t, r in zip(p["series"]["time_s"], p["series"]["rtt_ms"])
            if t < 1.0 or t >= 5.0]
    loaded = [r for p in probes.values() for t, r in zip(p["series"]["time_s"], p["series"]["rtt_ms"])
              if 1.0 <= t < 5.0]
    assert lul["idle_rtt"]["count"] == len(idle) == 400 and lul["loaded_rtt"]["count"] == len(loaded) == 800
    assert abs(lul["idle_rtt"]["mean"] - sum(idle) / len(idle)) < 1e-6
    assert abs(lul["loaded_rtt"]["mean"] - sum(loaded) / len(loaded)) < 1e-6
    induced = lul["loaded_rtt"]["mean"] - lul["idle_rtt"]["mean"]
    assert abs(lul["induced_latency_ms"] - induced) < 1e-9
    assert lul["induced_latency_ms"] > 5, "100 Mbit/s with pfifo_fast must queue under rrul"
    bands = [(5, "A+"), (30, "A"), (60, "B"), (200, "C"), (400, "D")]
    assert lul["grade"] == next((g for t, g in bands if induced < t), "F")
    assert sorted(lul["per_dscp"]) == ["BE", "CS1", "EF"]
    assert sorted(lul["per_dscp_flow_srtt"]) == ["BE", "CS1", "CS5", "EF"]
    assert 0 < lul["rpm"] < 60000 / lul["idle_rtt"]["mean"]
    assert 0.5 < lul["fairness_all"] <= 1
    total = sum(i["directions"]["a->b"]["bytes"] for i in load)
    assert abs(lul["goodput_bps"]["a->b"] - total * 8 / 4.0) < 1e-3 * total
print("rrul JSON ok")
PY

# Bad input: exit 2, one line with file:line:col and the key.
check_bad() {
  local name=$1 want=$2
  set +e
  msg=$("$nicsim" run "$work/$name" 2>&1 >/dev/null)
  rc=$?
  set -e
  [ "$rc" -eq 2 ] || fail "$name: exit $rc, want 2"
  [ "$(printf '%s\n' "$msg" | wc -l)" -eq 1 ] || fail "$name: not one line: $msg"
  printf '%s' "$msg" | grep -qF "$want" || fail "$name: '$msg' lacks '$want'"
}
cp -r "$src/scenarios/examples/rrul.toml" "$work/ok.toml"
sed 's/^probe_interval = "20ms"/probe_interval = "500us"/' "$work/ok.toml" > "$work/fast.toml"
check_bad fast.toml "traffic.rrul[0].probe_interval: must be at least 1ms, got 500us"
sed 's/^bin = "100ms"/bin = "5ms"/' "$work/ok.toml" > "$work/bin.toml"
check_bad bin.toml "traffic.rrul[0].bin: must be at least 10ms (throughput bins), got 5ms"
sed 's/^load = "4s"/load = "40s"/' "$work/ok.toml" > "$work/long.toml"
check_bad long.toml "traffic.rrul[0].load: rrul needs start + idle + load + idle = 42s, more than the scenario duration 6s"
echo "cli_rrul: ok"
