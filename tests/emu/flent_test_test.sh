#!/usr/bin/env bash
# CTest emu_flent_test: `nicsim flent-test NAME SCENARIO --emulate` (issue 12 item 5): flent's
# named tests on real sockets across the emulator (100 Mbit/s, 5 ms one way; rtt_fair over
# tests/emu/rtt_fair_short.toml's network of a client and four servers). For tcp_nup, rrul_var,
# cubic_reno and rtt_fair: the run's JSON validates with backend "emu" and the test's name, the
# flows carry flent's series names with bytes delivered, and Debian's flent loads the .flent.gz
# as that test with data in its series (and draws its default plot when python3-matplotlib is
# there). udp_flood, voip and bursts (the live engine's UDP floods, nicsim/live/traffic.cc) get
# the same checks on their own series.
# Usage: flent_test_test.sh NICSIM SOURCE_DIR
source "$(dirname "$0")/common.sh"
nicsim=$1
src=$2
emu_require_root
emu_require_tools python3 flent
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
two="$src/scenarios/examples/100mbit-5ms.toml"
net="$src/tests/emu/rtt_fair_short.toml"
flent_python=$(sed -n '1s/^#!//p' "$(command -v flent)")
draw=0
"$flent_python" -c 'import matplotlib' 2>/dev/null && draw=1

check() {  # TEST PLOT SERIES...: the run's JSON, flent file and plot
  local t=$1 plot=$2
  shift 2
  python3 "$src/nicsim/report/validate_results.py" --schema "$src/docs/results.schema.json" \
    "$work/$t.json" >/dev/null || fail "$t: JSON does not validate"
  python3 - "$work/$t.json" "$work/$t.flent.gz" "$t" "$@" <<'PY' || fail "$t: results"
import gzip, json, sys
j, f, t, *series = sys.argv[1:]
r = json.load(open(j))["runs"][0]
assert r["backend"] == "emu" and r.get("flent_test", "rrul") == t, (r["backend"], r.get("flent_test"))
for d in ("a->b", "b->a"):
    for fl in r["transfer"][d]["flows"]:
        assert fl["receiver"]["bytes"] > 0, fl
d = json.load(gzip.open(f, "rt"))
assert d["metadata"]["NAME"] == t, d["metadata"]["NAME"]
for s in series:
    assert any(v for v in d["results"].get(s, []) if v), (s, sorted(d["results"]))
PY
  flent -i "$work/$t.flent.gz" -f stats -o "$work/$t.stats" >"$work/$t.log" 2>&1 \
    || { cat "$work/$t.log"; fail "flent cannot load the emulated $t"; }
  if [ $draw = 1 ]; then
    "$flent_python" "$src/tests/cli/flent_plot_check.py" "$work/$t.flent.gz" "$plot" \
      "$work/$t.png" >"$work/$t.plot" 2>&1 || { cat "$work/$t.plot"; fail "flent cannot draw $t"; }
  fi
}
run() {  # TEST SCENARIO ARGS...
  local t=$1 s=$2
  shift 2
  NICSIM_PRESETS="$src/presets" "$nicsim" flent-test "$t" "$s" --emulate --quiet \
    --json "$work/$t.json" --flent "$work/$t.flent.gz" "$@" >"$work/$t.out" 2>"$work/$t.err"
}
short=(--length 2s --delay 1s --step 100ms)

run tcp_nup "$two" "${short[@]}" --streams 2 || fail "tcp_nup: $(cat "$work/tcp_nup.err")"
check tcp_nup totals "TCP upload::1" "TCP upload::2" "Ping (ms) ICMP"
run rrul_var "$two" "${short[@]}" --streams 2 --markings CS1,EF \
  || fail "rrul_var: $(cat "$work/rrul_var.err")"
check rrul_var all_scaled "TCP upload::0 (CS1)" "TCP download::1 (EF)" "Ping (ms)::UDP 1 (EF)" \
  "Ping (ms)::ICMP"
if grep -qw reno /proc/sys/net/ipv4/tcp_available_congestion_control ||
  modprobe tcp_reno 2>/dev/null; then
  run cubic_reno "$two" "${short[@]}" || fail "cubic_reno: $(cat "$work/cubic_reno.err")"
  check cubic_reno all_scaled "TCP upload Cubic BE" "TCP download Reno CS1" "Ping (ms) UDP CS6"
fi
run rtt_fair "$net" "${short[@]}" || fail "rtt_fair: $(cat "$work/rtt_fair.err")"
check rtt_fair all_scaled "TCP upload BE1 s1" "TCP download BK2 s4" "Ping (ms) ICMP4 s4"

for t in udp_flood voip bursts; do
  args=("${short[@]}")
  [ $t = bursts ] && args=(--length 7s --delay 1s --rate 20Mbit)
  [ $t = udp_flood ] && args+=(--rate 20Mbit)
  run $t "$two" "${args[@]}" || fail "$t: $(cat "$work/$t.err")"
  case $t in
    udp_flood) check udp_flood totals "UDP upload" "Ping (ms) ICMP" ;;
    voip) check voip voip_delay "VoIP::delay" ;;
    bursts) check bursts ping "Ping (ms) UDP EF" "Ping (ms) ICMP" ;;
  esac
done
echo ok
